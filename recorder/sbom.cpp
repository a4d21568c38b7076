#include "recorder/sbom.hpp"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <set>

namespace arec {

namespace {

constexpr std::size_t k_hash_block = std::size_t{1} << 20;
constexpr std::string_view k_tool = "Tool: arec";

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

// The spellings under which a dpkg .list may name the file at `path`: its real path, and with
// merged-/usr (/lib -> usr/lib, /bin -> usr/bin, ...) the same path without /usr when that directory
// leads to the same place. Packages still list many files under /lib while they live in /usr/lib.
std::vector<std::string> dpkg_spellings(const std::string& path) {
  const std::string real = real_path(path);
  std::vector<std::string> out{real};
  if (real.starts_with("/usr/")) {
    const std::string alias = real.substr(4);
    const auto parent = fs::Path(alias).parent_path().string();
    if (real_path(parent) == fs::Path(real).parent_path().string()) out.push_back(alias);
  }
  if (path != real) out.push_back(path);
  return out;
}

// Lines of a text, without their newline.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    f(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

// Each package dpkg's status file marks installed, with the fields arec names (Package, Version,
// Architecture, Maintainer). Continuation lines carry none of them and are skipped.
template <typename F>
void for_each_installed(std::string_view status, F&& installed) {
  DebianPackage current;
  std::string state;
  auto finish = [&] {
    if (!current.name.empty() && state.ends_with(" installed")) installed(current);
    current = {};
    state.clear();
  };
  for_each_line(status, [&](std::string_view line) {
    if (line.empty()) return finish();
    if (line.front() == ' ' || line.front() == '\t') return;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const auto key = line.substr(0, colon);
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    std::string* field = key == "Package"        ? &current.name
                         : key == "Version"      ? &current.version
                         : key == "Architecture" ? &current.architecture
                         : key == "Maintainer"   ? &current.maintainer
                         : key == "Status"       ? &state
                                                 : nullptr;
    if (field != nullptr) *field = std::string(value);
  });
  finish();
}

constexpr std::size_t k_searched_spellings = 32;

// Whether `text` has `line` as one of its lines.
bool contains_line(std::string_view text, std::string_view line) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  for (const char* at = begin; at < end;) {
    const void* hit = ::memmem(at, static_cast<std::size_t>(end - at), line.data(), line.size());
    if (hit == nullptr) return false;
    const char* p = static_cast<const char*>(hit);
    const char* after = p + line.size();
    if ((p == begin || p[-1] == '\n') && (after == end || *after == '\n')) return true;
    at = p + 1;
  }
  return false;
}

}  // namespace

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

namespace {

// SPDX identifiers allow letters, digits, '.' and '-'.
std::string spdx_id_part(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') c = '-';
  }
  return out;
}

std::string package_id(const DebianPackage& p) {
  return "SPDXRef-Package-deb-" + spdx_id_part(p.name) + "-" + spdx_id_part(p.architecture);
}

constexpr std::string_view k_record_package_id = "SPDXRef-Package-record";
constexpr std::string_view k_noassertion = "NOASSERTION";

nlohmann::json relationship(std::string_view from, std::string_view type, std::string_view to) {
  return {{"spdxElementId", from}, {"relationshipType", type}, {"relatedSpdxElement", to}};
}

}  // namespace

bool is_system_path(std::string_view path) {
  for (std::string_view prefix : {"/usr/", "/lib", "/bin/", "/sbin/", "/etc/", "/opt/", "/var/"}) {
    if (path.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<DebianPackage> installed_packages(std::string_view status) {
  std::vector<DebianPackage> out;
  for_each_installed(status, [&out](const DebianPackage& package) { out.push_back(package); });
  return out;
}

std::string debian_purl(const DebianPackage& package) {
  std::string out = "pkg:deb/debian/" + purl_encode(package.name) + "@" + purl_encode(package.version);
  if (!package.architecture.empty()) out += "?arch=" + purl_encode(package.architecture);
  return out;
}

Result<std::map<std::string, std::vector<DebianPackage>>> DpkgDatabase::owners(
    const std::vector<std::string>& paths) const {
  std::map<std::string, std::vector<DebianPackage>> out;
  // spelling -> the paths asked for that it stands for
  std::map<std::string, std::vector<std::size_t>, std::less<>> wanted;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (auto& spelling : dpkg_spellings(paths[i])) wanted[std::move(spelling)].push_back(i);
  }
  if (wanted.empty()) return out;

  // "name" or "name:arch" (the .list file's stem) -> indexes of the paths it lists
  std::map<std::string, std::set<std::size_t>> listed_by;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(m_dir / "info", ec)) {
    const auto file = entry.path().filename().string();
    if (!file.ends_with(".list")) continue;
    auto text = fs::read_file(entry.path());
    if (!text) continue;  // a package being installed right now; dpkg itself skips it the same way
    auto found = [&](const std::vector<std::size_t>& indexes) {
      listed_by[file.substr(0, file.size() - 5)].insert(indexes.begin(), indexes.end());
    };
    if (wanted.size() <= k_searched_spellings) {
      // A few paths (the usual case): memmem over the whole file is several times quicker than
      // splitting 140 000 lines.
      for (const auto& [spelling, indexes] : wanted) {
        if (contains_line(*text, spelling)) found(indexes);
      }
    } else {
      for_each_line(*text, [&](std::string_view line) {
        if (auto it = wanted.find(line); it != wanted.end()) found(it->second);
      });
    }
  }
  if (listed_by.empty()) return out;

  const auto status_path = m_dir / "status";
  auto status = fs::read_file(status_path);
  if (!status) return fail(std::move(status.error()).context("reading the dpkg database"));
  for_each_installed(*status, [&](const DebianPackage& package) {
    for (const auto& key : {package.name + ":" + package.architecture, package.name}) {
      if (auto it = listed_by.find(key); it != listed_by.end()) {
        for (const auto i : it->second) out[paths[i]].push_back(package);
      }
    }
  });
  for (auto& [path, packages] : out) {
    std::sort(packages.begin(), packages.end());
    packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  }
  return out;
}

Result<std::vector<DebianPackage>> DpkgDatabase::installed(std::string_view name) const {
  std::vector<DebianPackage> out;
  const auto status_path = m_dir / "status";
  if (::access(status_path.c_str(), F_OK) != 0) return out;
  auto status = fs::read_file(status_path);
  if (!status) return fail(std::move(status.error()).context("reading the dpkg database"));
  for_each_installed(*status, [&](const DebianPackage& package) {
    if (package.name == name) out.push_back(package);
  });
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> DpkgDatabase::listed_files(const DebianPackage& package) const {
  // Packages of several architectures (Multi-Arch: same) keep NAME:ARCH.list, the others NAME.list.
  for (const auto& stem : {package.name + ":" + package.architecture, package.name}) {
    const fs::Path list = m_dir / "info" / (stem + ".list");
    if (::access(list.c_str(), F_OK) != 0) continue;
    auto text = fs::read_file(list);
    if (!text) return fail(std::move(text.error()).context("reading the dpkg database"));
    std::vector<std::string> out;
    for_each_line(*text, [&](std::string_view line) {
      if (!line.empty()) out.emplace_back(line);
    });
    return out;
  }
  return fail_input("the dpkg database " + m_dir.string() + " has no file list of " + package.name + ":" +
                    package.architecture);
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

nlohmann::json spdx_document(const SbomFacts& facts) {
  const std::string repository = facts.module + "/" + facts.name;
  nlohmann::json record = {
      {"SPDXID", k_record_package_id},
      {"name", repository},
      {"downloadLocation", k_noassertion},
      {"filesAnalyzed", false},
      {"supplier", k_noassertion},
      {"primaryPackagePurpose", "CONTAINER"},
      {"externalRefs",
       {{{"referenceCategory", "PACKAGE-MANAGER"},
         {"referenceType", "purl"},
         {"referenceLocator", "pkg:oci/" + purl_encode(facts.name) + "@" + purl_encode(facts.image.str())}}}}};
  if (!facts.revision.empty()) record["versionInfo"] = facts.revision;

  std::set<DebianPackage> debian;
  for (const auto& file : facts.files) debian.insert(file.packages.begin(), file.packages.end());

  nlohmann::json packages = nlohmann::json::array({record});
  nlohmann::json relationships = nlohmann::json::array();
  relationships.push_back(relationship("SPDXRef-DOCUMENT", "DESCRIBES", k_record_package_id));
  for (const auto& p : debian) {
    nlohmann::json package = {{"SPDXID", package_id(p)},
                              {"name", p.name},
                              {"versionInfo", p.version},
                              {"downloadLocation", k_noassertion},
                              {"filesAnalyzed", false},
                              // The package as dpkg knows it (dpkg-query -W NAME:ARCH): what its files are.
                              {"sourceInfo", "installed by dpkg as " + p.name + ":" + p.architecture + " " + p.version},
                              {"externalRefs",
                               {{{"referenceCategory", "PACKAGE-MANAGER"},
                                 {"referenceType", "purl"},
                                 {"referenceLocator", debian_purl(p)}}}}};
    // SPDX writes a supplier as "Person: name (email)"; Debian's Maintainer field is "name <email>".
    std::string supplier = p.maintainer;
    if (const auto lt = supplier.find('<'); lt != std::string::npos && supplier.ends_with('>')) {
      supplier = supplier.substr(0, lt) + "(" + supplier.substr(lt + 1, supplier.size() - lt - 2) + ")";
    }
    package["supplier"] = supplier.empty() ? std::string(k_noassertion) : "Organization: " + supplier;
    packages.push_back(std::move(package));
    relationships.push_back(relationship(k_record_package_id, "CONTAINS", package_id(p)));
  }

  const auto holder = spdx_software_packages(facts.dependencies, k_record_package_id, packages, relationships);

  // A package's files are its own (dpkg lists them with their checksums): the document names the
  // package once, and lists, with their checksums, only the files of no package. A dependency's few
  // files are listed, held by its package.
  nlohmann::json files = nlohmann::json::array();
  std::size_t number = 0;
  for (const auto& f : facts.files) {
    if (!f.packages.empty()) continue;
    const std::string id = "SPDXRef-File-" + std::to_string(++number);
    files.push_back({{"SPDXID", id},
                     {"fileName", "./" + f.path},
                     {"checksums",
                      {{{"algorithm", "SHA1"}, {"checksumValue", f.sha1}},
                       {{"algorithm", "SHA256"}, {"checksumValue", f.sha256}}}}});
    const auto held = holder.find(f.path);
    relationships.push_back(
        relationship(held == holder.end() ? std::string(k_record_package_id) : held->second, "CONTAINS", id));
  }

  return {{"spdxVersion", "SPDX-2.3"},
          {"dataLicense", "CC0-1.0"},
          {"SPDXID", "SPDXRef-DOCUMENT"},
          {"name", repository + "@" + facts.image.str()},
          {"documentNamespace", "https://arec.dev/spdx/" + repository + "/" + facts.image.hex()},
          {"creationInfo", {{"created", rfc3339(facts.created)}, {"creators", {k_tool}}}},
          {"packages", std::move(packages)},
          {"files", std::move(files)},
          {"relationships", std::move(relationships)}};
}

std::map<std::string, std::string> spdx_software_packages(const std::vector<SoftwarePackage>& packages,
                                                          std::string_view container, nlohmann::json& out,
                                                          nlohmann::json& relationships) {
  std::map<std::string, std::string> holder;
  std::set<std::string> ids;
  for (const auto& p : packages) {
    // Names that differ only in characters SPDX identifiers cannot hold ("a_b", "a-b") stay apart.
    std::string id = "SPDXRef-Package-dep-" + spdx_id_part(p.name);
    for (int n = 2; !ids.insert(id).second; ++n)
      id = "SPDXRef-Package-dep-" + spdx_id_part(p.name) + "-" + std::to_string(n);
    const auto known = [](const std::string& value) { return value.empty() ? std::string(k_noassertion) : value; };
    nlohmann::json package = {{"SPDXID", id},
                              {"name", p.name},
                              {"downloadLocation", known(p.download_location)},
                              {"filesAnalyzed", false},
                              {"supplier", known(p.supplier)},
                              {"licenseConcluded", k_noassertion},
                              {"licenseDeclared", known(p.license)},
                              {"primaryPackagePurpose", "LIBRARY"}};
    if (!p.version.empty()) package["versionInfo"] = p.version;
    if (p.checksum) {
      package["checksums"] = {{{"algorithm", p.checksum->algorithm}, {"checksumValue", p.checksum->value}}};
    }
    package["externalRefs"] = {{{"referenceCategory", "PACKAGE-MANAGER"},
                                {"referenceType", "purl"},
                                {"referenceLocator", dependency_purl(p)}}};
    out.push_back(std::move(package));
    relationships.push_back(relationship(container, "CONTAINS", id));
    for (const auto& file : p.files) holder.emplace(file, id);
  }
  return holder;
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

Result<std::optional<std::string>> read_sbom(const Store& store, const Digest& image) {
  auto referrers = store.referrers(image);
  if (!referrers) return fail(referrers.error());
  for (const auto& d : *referrers) {
    if (d.artifact_type != media_type::k_spdx_json) continue;
    const std::string what = "SBOM manifest " + d.digest.str();
    auto manifest = store.read_manifest(d);
    if (!manifest) return fail(std::move(manifest.error()).context(what));
    if (manifest->layers.size() != 1 || manifest->layers.front().media_type != media_type::k_spdx_json) {
      return fail_input(what + ": expected one layer of type " + std::string(media_type::k_spdx_json));
    }
    auto document = store.read_blob(manifest->layers.front());
    if (!document) return fail(std::move(document.error()).context(what));
    return std::optional<std::string>(std::move(*document));
  }
  return std::optional<std::string>();
}

}  // namespace arec
