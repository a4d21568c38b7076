#include "recorder/sbom.hpp"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <set>

#include "recorder/licences.hpp"
#include "util/ascii.hpp"
#include "util/paths.hpp"

namespace arec {

namespace {

constexpr std::size_t k_hash_block = std::size_t{1} << 20;

// SHA-1 and SHA-256 of one file in a single read, opened as write_tar opens it (never through a
// symlink); a size other than the one packed means it changed after being packed.
Status hash_file(const LayerEntry& entry, std::vector<std::byte>& buffer, SbomFile& file) {
  const fs::Path& path = entry.source;
  FileChecksums sums;
  if (path.empty()) {  // written by arec: its bytes are at hand
    sums = checksums_of(entry.content);
  } else {
    auto fd = fs::open_read(path, fs::FollowSymlinks::no);
    if (!fd) return fail(fd.error());
    Checksummer checksummer;
    std::int64_t size = 0;
    for (;;) {
      auto n = fs::read_some(fd->get(), buffer, path);
      if (!n) return fail(n.error());
      if (*n == 0) break;
      size += static_cast<std::int64_t>(*n);
      checksummer.update(std::span(buffer.data(), *n));
    }
    if (size != entry.size) return fail_input(path.string() + ": changed while being recorded; record again");
    sums = checksummer.finish();
  }
  file.sha1 = std::move(sums.sha1);
  file.sha256 = std::move(sums.sha256);
  return {};
}

std::string real_path(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return path;
  return resolved;
}

// A Debian version's epoch ("1:" of "1:1.2.13.dfsg-1"), and the version without it.
std::pair<std::string, std::string> split_epoch(const std::string& version) {
  const auto colon = version.find(':');
  if (colon == std::string::npos || colon == 0 ||
      !std::all_of(version.begin(), version.begin() + static_cast<std::ptrdiff_t>(colon),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return {{}, version};
  }
  return {version.substr(0, colon), version.substr(colon + 1)};
}

}  // namespace

std::string_view sbom_format_name(SbomFormat format) { return format == SbomFormat::cyclonedx ? "cyclonedx" : "spdx"; }

std::string_view sbom_media_type(SbomFormat format) {
  return format == SbomFormat::cyclonedx ? media_type::k_cyclonedx_json : media_type::k_spdx_json;
}

Result<SbomFormat> parse_sbom_format(std::string_view text) {
  if (text == "spdx") return SbomFormat::spdx;
  if (text == "cyclonedx") return SbomFormat::cyclonedx;
  return fail_input("--format \"" + printable(text) + "\": expected spdx or cyclonedx");
}

Result<std::vector<SbomFormat>> parse_sbom_formats(std::string_view text) {
  std::vector<SbomFormat> out;
  if (text == "none") return out;
  const auto refused = [&] {
    return fail_input("--sbom \"" + printable(text) +
                      "\": expected spdx, cyclonedx, both separated by a comma (spdx,cyclonedx), or none");
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const auto part = text.substr(pos, comma - pos);
    const auto format = part == "spdx"        ? std::optional(SbomFormat::spdx)
                        : part == "cyclonedx" ? std::optional(SbomFormat::cyclonedx)
                                              : std::nullopt;
    if (!format || std::find(out.begin(), out.end(), *format) != out.end()) return refused();
    out.push_back(*format);
    pos = comma + 1;
  }
  return out;
}

std::string purl_encode(std::string_view text) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '.' || c == '-' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(k_hex[u >> 4]);
      out.push_back(k_hex[u & 0xf]);
    }
  }
  return out;
}

std::string debian_purl(const DebianPackage& package, const std::optional<Distribution>& distribution) {
  const auto [epoch, version] = split_epoch(package.version);
  const std::string ns = distribution ? ascii::lower(distribution->id) : "debian";
  // '+' may stand in a version as it is (the purl specification allows it either way); as Trivy and
  // packageurl-js write it, the purls are the same strings.
  std::string encoded_version;
  for (const char c : version) encoded_version += c == '+' ? std::string("+") : purl_encode(std::string_view(&c, 1));
  std::string out = "pkg:deb/" + purl_encode(ns) + "/" + purl_encode(package.name) + "@" + encoded_version;
  // Qualifiers sorted by key, as the purl specification's canonical form has them.
  std::vector<std::pair<std::string, std::string>> qualifiers;
  if (!package.architecture.empty()) qualifiers.emplace_back("arch", package.architecture);
  if (distribution) qualifiers.emplace_back("distro", ns + "-" + distribution->version);
  if (!epoch.empty()) qualifiers.emplace_back("epoch", epoch);
  for (std::size_t i = 0; i < qualifiers.size(); ++i) {
    out += (i == 0 ? "?" : "&") + qualifiers[i].first + "=" + purl_encode(qualifiers[i].second);
  }
  return out;
}

std::string debian_package_key(const DebianPackage& package) { return "deb:" + package_key(package); }

std::string file_key(std::string_view path) { return "file:" + std::string(path); }

Result<std::vector<SbomPackage>> debian_sbom_packages(const std::vector<SbomFile>& files, const DpkgDatabase& dpkg,
                                                      const std::optional<Distribution>& os) {
  std::set<DebianPackage> debian;
  for (const auto& file : files) debian.insert(file.packages.begin(), file.packages.end());
  std::vector<SbomPackage> out;
  for (const auto& p : debian) {
    SbomPackage package;
    package.key = debian_package_key(p);
    package.name = p.name;
    package.version = p.version;
    package.purl = debian_purl(p, os);
    package.supplier = p.maintainer;
    // The package as dpkg knows it (dpkg-query -W NAME:ARCH): what its files are.
    package.source_info = "installed by dpkg as " + package_key(p) + " " + p.version;
    auto copyright = dpkg.copyright_file(p);
    if (!copyright) return fail(std::move(copyright.error()).context("the licence of " + package_key(p)));
    if (*copyright) {
      auto text = fs::read_file(**copyright);
      if (!text) return fail(std::move(text.error()).context("the licence of " + package_key(p)));
      package.licence = debian_copyright_licence(*text, "See /usr/share/doc/" + p.name + "/copyright in the image.");
    }
    out.push_back(std::move(package));
  }
  std::sort(out.begin(), out.end(), [](const SbomPackage& a, const SbomPackage& b) { return a.key < b.key; });
  return out;
}

std::map<std::string, std::set<std::string>> dependency_graph(
    const std::vector<std::pair<std::string, std::string>>& needs, const std::vector<LayerEntry>& entries,
    const std::vector<SbomFile>& files, bool with_os) {
  std::map<std::string, std::string> link_to;  // image path -> its link's target, for the links of the image
  for (const auto& e : entries) {
    if (e.type == LayerEntry::Type::symlink) link_to.emplace(e.path, e.link_target);
  }
  std::map<std::string, std::string> component_of;  // a regular file -> its component's key
  for (const auto& f : files) {
    component_of.emplace(f.path, !f.packages.empty()     ? debian_package_key(f.packages.front())
                                 : !f.dependency.empty() ? f.dependency
                                                         : file_key(f.path));
  }
  // The file an image path leads to, its links followed inside the image (a bounded number of times).
  const auto resolve = [&](std::string path) -> std::optional<std::string> {
    for (int hops = 0; hops < 40; ++hops) {
      if (component_of.contains(path)) return path;
      auto parts = path_components(path);
      std::string walked;
      bool moved = false;
      for (std::size_t i = 0; i < parts.size() && !moved; ++i) {
        const std::string prefix = walked.empty() ? parts[i] : walked + "/" + parts[i];
        if (auto it = link_to.find(prefix); it != link_to.end()) {
          std::string target = it->second.starts_with('/') ? it->second.substr(1)
                                                           : (walked.empty() ? it->second : walked + "/" + it->second);
          for (std::size_t j = i + 1; j < parts.size(); ++j) target += "/" + parts[j];
          std::string normal;
          for (const auto& part : path_components(target)) {
            if (part == "..") {
              if (const auto slash = normal.rfind('/'); slash != std::string::npos) {
                normal.resize(slash);
              } else {
                normal.clear();
              }
            } else {
              normal += (normal.empty() ? "" : "/") + part;
            }
          }
          path = normal;
          moved = true;
        }
        walked = prefix;
      }
      if (!moved) return std::nullopt;
    }
    return std::nullopt;
  };
  std::map<std::string, std::set<std::string>> out;
  std::set<std::string> needed;
  for (const auto& [needer, provider] : needs) {
    auto from = resolve(needer);
    auto to = resolve(provider);
    if (!from || !to) continue;
    const std::string& a = component_of.at(*from);
    const std::string& b = component_of.at(*to);
    if (a == b) continue;
    out[a].insert(b);
    needed.insert(b);
  }
  auto& root = out[std::string(k_record_key)];
  for (const auto& [path, key] : component_of) {
    if (!needed.contains(key)) root.insert(key);
  }
  if (with_os) root.insert(std::string(k_os_key));
  return out;
}

Result<std::vector<SbomFile>> sbom_packages(const std::vector<LayerEntry>& entries, const DpkgDatabase& dpkg,
                                            const std::map<std::string, DebianPackage>& known,
                                            const OwnersOf& owners_of) {
  std::vector<SbomFile> files;
  std::vector<std::string> system_sources;
  std::vector<std::size_t> looked_up;  // the files whose package is asked for, in system_sources' order
  for (const auto& entry : entries) {
    if (entry.type != LayerEntry::Type::file) continue;
    SbomFile file;
    file.path = entry.path;
    if (auto it = known.find(entry.path); it != known.end()) {
      file.packages = {it->second};
    } else if (!entry.source.empty()) {  // a file arec wrote has no package unless it is known
      const auto source = std::filesystem::absolute(entry.source).lexically_normal().string();
      if (is_system_path(source) || is_system_path(real_path(source))) {
        system_sources.push_back(source);
        looked_up.push_back(files.size());
      }
    }
    files.push_back(std::move(file));
  }
  if (!system_sources.empty()) {
    auto owners = owners_of ? owners_of(system_sources) : dpkg.owners(system_sources);
    if (!owners) return fail(owners.error());
    for (std::size_t i = 0; i < looked_up.size(); ++i) {
      if (auto it = owners->find(system_sources[i]); it != owners->end()) files[looked_up[i]].packages = it->second;
    }
  }
  std::sort(files.begin(), files.end(), [](const SbomFile& a, const SbomFile& b) { return a.path < b.path; });
  return files;
}

Status add_checksums(std::vector<SbomFile>& files, const std::vector<LayerEntry>& entries,
                     const ChecksumTable* checksums) {
  std::map<std::string_view, const LayerEntry*> entry_at;
  for (const auto& e : entries) {
    if (e.type == LayerEntry::Type::file) entry_at.emplace(e.path, &e);
  }
  // Only the files of no package are hashed: the others are their package's, which the document names.
  std::vector<std::byte> buffer;
  for (auto& file : files) {
    if (!file.packages.empty()) continue;
    if (checksums != nullptr) {
      if (auto found = checksums->find(file.path)) {
        file.sha1 = std::move(found->sha1);
        file.sha256 = std::move(found->sha256);
        continue;
      }
    }
    const auto it = entry_at.find(file.path);
    if (it == entry_at.end()) return fail_input("making the SBOM: /" + file.path + " is not a file of the layers");
    if (buffer.empty()) buffer.resize(k_hash_block);
    if (auto s = hash_file(*it->second, buffer, file); !s) return fail(std::move(s.error()).context("making the SBOM"));
  }
  return {};
}

Result<std::vector<SbomFile>> sbom_files(const std::vector<LayerEntry>& entries, const DpkgDatabase& dpkg,
                                         const std::map<std::string, DebianPackage>& known, const OwnersOf& owners_of) {
  auto files = sbom_packages(entries, dpkg, known, owners_of);
  if (!files) return fail(files.error());
  if (auto s = add_checksums(*files, entries, nullptr); !s) return fail(s.error());
  return files;
}

Result<Descriptor> put_referrer(Store& store, const Descriptor& subject, std::string_view artifact_type,
                                std::string_view bytes, const Annotations& annotations) {
  auto blob = store.put_blob(bytes, artifact_type);
  if (!blob) return fail(blob.error());
  auto empty = store.put_blob("{}", media_type::k_empty);
  if (!empty) return fail(empty.error());
  Manifest manifest;
  manifest.artifact_type = std::string(artifact_type);
  manifest.config = *empty;
  manifest.layers.push_back(*blob);
  manifest.subject = Descriptor{subject.media_type, subject.digest, subject.size, {}, {}, {}, {}};
  manifest.annotations = annotations;
  auto text = canonical_json(to_json(manifest));
  if (!text) return fail(text.error());
  auto descriptor = store.put_blob(*text, media_type::k_manifest);
  if (!descriptor) return fail(descriptor.error());
  descriptor->artifact_type = std::string(artifact_type);
  descriptor->annotations = annotations;
  descriptor->annotations.emplace(annotation::k_subject, subject.digest.str());
  return descriptor;
}

Result<std::optional<std::string>> read_sbom(const Store& store, const Digest& image, SbomFormat format) {
  auto referrers = store.referrers(image);
  if (!referrers) return fail(referrers.error());
  const std::string_view type = sbom_media_type(format);
  for (const auto& d : *referrers) {
    if (d.artifact_type != type) continue;
    const std::string what = "SBOM manifest " + d.digest.str();
    auto manifest = store.read_manifest(d);
    if (!manifest) return fail(std::move(manifest.error()).context(what));
    if (manifest->layers.size() != 1 || manifest->layers.front().media_type != type) {
      return fail_input(what + ": expected one layer of type " + std::string(type));
    }
    auto document = store.read_blob(manifest->layers.front());
    if (!document) return fail(std::move(document.error()).context(what));
    return std::optional<std::string>(std::move(*document));
  }
  return std::optional<std::string>();
}

}  // namespace arec
