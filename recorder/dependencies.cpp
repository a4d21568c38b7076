#include "recorder/dependencies.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "recorder/elf.hpp"
#include "util/ascii.hpp"

namespace arec {

namespace {

// CMake's URL_HASH algorithms, as SPDX 2.3 names them, and the length of their hex digests.
struct ChecksumAlgorithm {
  std::string_view cmake;
  std::string_view spdx;
  std::size_t hex_digits;
};
constexpr std::array<ChecksumAlgorithm, 9> k_algorithms{{{"MD5", "MD5", 32},
                                                         {"SHA1", "SHA1", 40},
                                                         {"SHA224", "SHA224", 56},
                                                         {"SHA256", "SHA256", 64},
                                                         {"SHA384", "SHA384", 96},
                                                         {"SHA512", "SHA512", 128},
                                                         {"SHA3_256", "SHA3-256", 64},
                                                         {"SHA3_384", "SHA3-384", 96},
                                                         {"SHA3_512", "SHA3-512", 128}}};

// "ALGORITHM=HEX" as CMake's URL_HASH spells it (SPDX's spelling of the algorithm accepted too).
Result<std::pair<std::string, std::string>> parse_checksum(std::string_view text, const std::string& what) {
  const auto equals = text.find('=');
  const std::string_view name = text.substr(0, std::min(equals, text.size()));
  const auto algorithm = std::find_if(k_algorithms.begin(), k_algorithms.end(),
                                      [&](const ChecksumAlgorithm& a) { return a.cmake == name || a.spdx == name; });
  std::string accepted;
  for (const auto& a : k_algorithms) accepted += (accepted.empty() ? "" : ", ") + std::string(a.cmake);
  if (equals == std::string_view::npos || algorithm == k_algorithms.end()) {
    return fail_input(what + ": \"" + printable(text) + "\" is not ALGORITHM=HEX with one of " + accepted);
  }
  const std::string value = ascii::lower(text.substr(equals + 1));
  if (value.size() != algorithm->hex_digits || !std::all_of(value.begin(), value.end(), ascii::is_lower_hex)) {
    return fail_input(what + ": \"" + printable(text) + "\" is not " + std::to_string(algorithm->hex_digits) +
                      " hex digits of " + std::string(algorithm->cmake));
  }
  return std::pair{std::string(algorithm->spdx), value};
}

Result<std::string> string_field(const nlohmann::json& value, const std::string& what) {
  if (!value.is_string()) return fail_input(what + ": expected a string");
  auto text = value.get<std::string>();
  if (has_control_characters(text)) return fail_input(what + ": \"" + printable(text) + "\" holds a control character");
  return text;
}

Result<std::vector<std::string>> strings_field(const nlohmann::json& value, const std::string& what) {
  if (!value.is_array()) return fail_input(what + ": expected an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto text = string_field(value[i], what + "[" + std::to_string(i) + "]");
    if (!text) return fail(text.error());
    out.push_back(std::move(*text));
  }
  return out;
}

constexpr std::array<std::string_view, 9> k_fields{
    "name", "version", "download_location", "checksum", "license", "supplier", "purl", "paths", "files"};

Result<DeclaredPackage> parse_package(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) return fail_input(where + ": expected an object");
  DeclaredPackage out;
  for (const auto& [key, value] : json.items()) {
    const std::string what = where + "." + key;
    if (std::find(k_fields.begin(), k_fields.end(), key) == k_fields.end()) {
      std::string known;
      for (const auto f : k_fields) known += (known.empty() ? "" : ", ") + std::string(f);
      return fail_input(what + ": unknown field (expected " + known + ")");
    }
    if (key == "paths" || key == "files") {
      auto list = strings_field(value, what);
      if (!list) return fail(list.error());
      for (auto& item : *list) {
        if (key == "paths") {
          if (!item.starts_with('/')) return fail_input(what + ": \"" + item + "\" is not an absolute path");
          out.paths.push_back(fs::Path(item).lexically_normal());
        } else {
          if (item.empty() || item.find('/') != std::string::npos)
            return fail_input(what + ": \"" + item + "\" is not a file name");
          out.names.push_back(std::move(item));
        }
      }
      continue;
    }
    auto text = string_field(value, what);
    if (!text) return fail(text.error());
    SbomPackage& p = out.package;
    if (key == "name") {
      if (text->empty()) return fail_input(what + ": empty");
      p.name = std::move(*text);
    } else if (key == "version") {
      p.version = std::move(*text);
    } else if (key == "download_location") {
      p.download_location = std::move(*text);
    } else if (key == "checksum") {
      auto checksum = parse_checksum(*text, what);
      if (!checksum) return fail(checksum.error());
      p.checksums = {std::move(*checksum)};
    } else if (key == "license") {
      p.licence.expression = std::move(*text);
    } else if (key == "supplier") {
      p.supplier = std::move(*text);
    } else {
      p.purl = std::move(*text);
    }
  }
  if (out.package.name.empty()) return fail_input(where + ": no \"name\"");
  return out;
}

// The real path of a host file, or the path as given when it cannot be resolved.
std::string real_path_of(const fs::Path& path) {
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
  return ec ? path.lexically_normal().string() : real.string();
}

bool under(const std::string& path, const fs::Path& dir) {
  std::string prefix = dir.string();
  while (prefix.size() > 1 && prefix.ends_with('/')) prefix.pop_back();
  return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/' || prefix == "/");
}

// OWNER/REPO of a github.com URL (https://github.com/OWNER/REPO[.git][/...]), else nothing.
std::optional<std::string> github_repository(std::string_view url) {
  for (std::string_view scheme : {"git+https://github.com/", "https://github.com/", "git+ssh://git@github.com/"}) {
    if (!url.starts_with(scheme)) continue;
    url.remove_prefix(scheme.size());
    const auto owner_end = url.find('/');
    if (owner_end == std::string_view::npos || owner_end == 0) return std::nullopt;
    std::string_view repo = url.substr(owner_end + 1);
    repo = repo.substr(0, std::min({repo.find('/'), repo.find('@'), repo.find('#'), repo.size()}));
    if (repo.ends_with(".git")) repo.remove_suffix(4);
    if (repo.empty()) return std::nullopt;
    return std::string(url.substr(0, owner_end)) + "/" + std::string(repo);
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<DeclaredPackage>> parse_packages_info(std::string_view text, std::string_view what) {
  const std::string where = "packages info " + std::string(what);
  auto json = read_json<nlohmann::json>(text);
  if (!json) return fail_input(where + ": " + json.error().message);
  if (!json->is_object() || !json->contains("packages")) {
    return fail_input(where + ": expected an object with \"packages\", an array of packages");
  }
  for (const auto& [key, value] : json->items()) {
    if (key != "packages") return fail_input(where + ": ." + key + ": unknown field (expected packages)");
  }
  const auto& packages = (*json)["packages"];
  if (!packages.is_array()) return fail_input(where + ": .packages: expected an array of packages");
  std::vector<DeclaredPackage> out;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    auto package = parse_package(packages[i], where + ": .packages[" + std::to_string(i) + "]");
    if (!package) return fail(package.error());
    out.push_back(std::move(*package));
  }
  return merge_declared({}, std::move(out));
}

Result<std::vector<DeclaredPackage>> read_packages_info(const fs::Path& file) {
  auto text = fs::read_file(file);
  if (!text) return fail(std::move(text.error()).context("reading the packages info " + file.string()));
  return parse_packages_info(*text, file.string());
}

std::vector<DeclaredPackage> merge_declared(std::vector<DeclaredPackage> earlier, std::vector<DeclaredPackage> later) {
  for (auto& next : later) {
    auto same = std::find_if(earlier.begin(), earlier.end(),
                             [&](const DeclaredPackage& d) { return d.package.name == next.package.name; });
    if (same == earlier.end()) {
      earlier.push_back(std::move(next));
      continue;
    }
    SbomPackage& p = same->package;
    SbomPackage& n = next.package;
    for (auto [mine, theirs] : {std::pair{&p.version, &n.version},
                                {&p.download_location, &n.download_location},
                                {&p.licence.expression, &n.licence.expression},
                                {&p.supplier, &n.supplier},
                                {&p.purl, &n.purl}}) {
      if (!theirs->empty()) *mine = std::move(*theirs);
    }
    if (!n.checksums.empty()) p.checksums = std::move(n.checksums);
    same->paths.insert(same->paths.end(), next.paths.begin(), next.paths.end());
    same->names.insert(same->names.end(), next.names.begin(), next.names.end());
  }
  return earlier;
}

std::string dependency_purl(const SbomPackage& package) {
  if (!package.purl.empty()) return package.purl;
  const std::string& location = package.download_location;
  const bool git = location.starts_with("git+");
  if (auto repository = github_repository(location)) {
    // A repository's tag or commit is what pkg:github's version names (git+...@REF); an archive's, the version.
    std::string ref = package.version;
    if (const auto at = location.rfind('@'); git && at != std::string::npos && at > location.find("github.com"))
      ref = location.substr(at + 1);
    const std::string lower = ascii::lower(*repository);
    const auto slash = lower.find('/');
    return "pkg:github/" + purl_encode(lower.substr(0, slash)) + "/" + purl_encode(lower.substr(slash + 1)) +
           (ref.empty() ? "" : "@" + purl_encode(ref));
  }
  std::string out = "pkg:generic/" + purl_encode(package.name);
  if (!package.version.empty()) out += "@" + purl_encode(package.version);
  // Qualifiers in the order of their keys, as the purl specification asks.
  std::vector<std::string> qualifiers;
  if (!package.checksums.empty()) {
    const auto& [algorithm, value] = package.checksums.front();
    qualifiers.push_back("checksum=" + purl_encode(ascii::lower(algorithm) + ":" + value));
  }
  if (!location.empty()) qualifiers.push_back((git ? "vcs_url=" : "download_url=") + purl_encode(location));
  for (std::size_t i = 0; i < qualifiers.size(); ++i) out += (i == 0 ? "?" : "&") + qualifiers[i];
  return out;
}

std::string dependency_origin(const SbomPackage& package) {
  return "dep:" + package.name + (package.version.empty() ? "" : "=" + package.version);
}

Result<std::map<std::string, std::size_t>> dependency_of_files(const std::vector<LayerEntry>& entries,
                                                               const std::vector<DeclaredPackage>& declared) {
  std::map<std::string, std::size_t> out;
  if (declared.empty()) return out;
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    for (const auto& name : declared[i].names) by_name.try_emplace(name, i);
  }
  for (const auto& e : entries) {
    if (e.type != LayerEntry::Type::file || e.source.empty()) continue;
    const std::string real = real_path_of(e.source);
    std::optional<std::size_t> found;
    std::size_t depth = 0;
    for (std::size_t i = 0; i < declared.size(); ++i) {
      for (const auto& dir : declared[i].paths) {
        const std::size_t length = dir.string().size();
        if ((under(real, dir) || under(e.source.lexically_normal().string(), dir)) && (!found || length > depth)) {
          found = i;
          depth = length;
        }
      }
    }
    const std::string name = e.path.substr(e.path.rfind('/') + 1);
    if (!found && !by_name.empty()) {
      if (auto it = by_name.find(name); it != by_name.end()) {
        found = it->second;
      } else if (name.find(".so") != std::string::npos) {
        auto elf = read_elf(e.source);
        if (!elf) return fail(elf.error());
        if (*elf && !(*elf)->soname.empty()) {
          if (auto named = by_name.find((*elf)->soname); named != by_name.end()) found = named->second;
        }
      }
    }
    if (found) out.emplace(e.path, *found);
  }
  return out;
}

std::vector<SbomPackage> dependency_sbom_packages(const std::vector<DeclaredPackage>& declared,
                                                  const std::map<std::string, std::size_t>& of_file,
                                                  std::vector<SbomFile>& files) {
  std::map<std::size_t, SbomPackage> holding;  // by index in `declared`
  for (auto& file : files) {
    const auto it = of_file.find(file.path);
    if (it == of_file.end() || !file.packages.empty()) continue;
    auto [held, added] = holding.try_emplace(it->second, declared[it->second].package);
    if (added) {
      held->second.key = "dep:" + held->second.name;
      held->second.purl = dependency_purl(held->second);
    }
    file.dependency = held->second.key;
  }
  std::vector<SbomPackage> out;
  for (auto& [index, package] : holding) out.push_back(std::move(package));
  std::sort(out.begin(), out.end(), [](const SbomPackage& a, const SbomPackage& b) { return a.key < b.key; });
  return out;
}

}  // namespace arec
