#include "recorder/dpkg.hpp"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>

namespace arec {

namespace {

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

// The value of a field's first line ("Package: libc6" -> "libc6"), or nothing when `line` is not `key`'s.
std::optional<std::string_view> field_value(std::string_view line, std::string_view key) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') return std::nullopt;
  auto value = line.substr(key.size() + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
    value.remove_suffix(1);
  return value;
}

// Each paragraph of a status file with the package it is of (Package, Version, Architecture,
// Maintainer) and whether dpkg marks it installed. Continuation lines carry none of those fields.
template <typename F>
void for_each_paragraph(std::string_view status, F&& paragraph) {
  std::size_t pos = 0;
  while (pos < status.size()) {
    std::size_t end = status.find("\n\n", pos);
    end = end == std::string_view::npos ? status.size() : end + 1;
    const std::string_view text = status.substr(pos, end - pos);
    pos = end;
    while (pos < status.size() && status[pos] == '\n') ++pos;
    DebianPackage package;
    std::string state;
    for_each_line(text, [&](std::string_view line) {
      if (line.empty() || line.front() == ' ' || line.front() == '\t') return;
      for (auto [key, field] : {std::pair{"Package", &package.name},
                                {"Version", &package.version},
                                {"Architecture", &package.architecture},
                                {"Maintainer", &package.maintainer},
                                {"Status", &state}}) {
        if (auto value = field_value(line, key)) *field = std::string(*value);
      }
    });
    if (!package.name.empty()) paragraph(package, state.ends_with(" installed"), text);
  }
}

template <typename F>
void for_each_installed(std::string_view status, F&& installed) {
  for_each_paragraph(status, [&](const DebianPackage& package, bool is_installed, std::string_view) {
    if (is_installed) installed(package);
  });
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

// A file of the database that may be missing: its text, or nothing.
Result<std::optional<std::string>> read_if_there(const fs::Path& path) {
  if (::access(path.c_str(), F_OK) != 0) return std::optional<std::string>();
  auto text = fs::read_file(path);
  if (!text) return fail(std::move(text.error()).context("reading the dpkg database"));
  return std::optional<std::string>(std::move(*text));
}

std::string unquoted(std::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size()) ++i;  // os-release escapes $, ", \ and ` shell-style
    out.push_back(value[i]);
  }
  return out;
}

}  // namespace

std::string package_key(const DebianPackage& package) { return package.name + ":" + package.architecture; }

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

std::string scanner_stanza(std::string_view stanza) {
  std::string out;
  bool dropping = false;  // inside a field left out, whose continuation lines go with it
  for_each_line(stanza, [&](std::string_view line) {
    if (line.empty()) return;
    if (line.front() == ' ' || line.front() == '\t') {
      if (!dropping) out.append(line).push_back('\n');
      return;
    }
    dropping = false;
    for (std::string_view key : {"Conffiles", "Config-Version", "Triggers-Pending", "Triggers-Awaited"}) {
      dropping = dropping || field_value(line, key).has_value();
    }
    if (dropping) return;
    if (field_value(line, "Status")) {
      out.append("Status: install ok installed\n");
      return;
    }
    out.append(line).push_back('\n');
  });
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
    for (const auto& key : {package_key(package), package.name}) {
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
  auto status = read_if_there(m_dir / "status");
  if (!status) return fail(status.error());
  if (!*status) return out;
  for_each_installed(**status, [&](const DebianPackage& package) {
    if (package.name == name) out.push_back(package);
  });
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::map<std::string, std::string>> DpkgDatabase::stanzas(const std::vector<DebianPackage>& packages) const {
  std::map<std::string, std::string> out;
  if (packages.empty()) return out;
  std::set<std::string> wanted;
  for (const auto& p : packages) wanted.insert(package_key(p));
  auto status = read_if_there(m_dir / "status");
  if (!status) return fail(status.error());
  if (!*status) return out;
  for_each_paragraph(**status, [&](const DebianPackage& package, bool is_installed, std::string_view text) {
    if (is_installed && wanted.contains(package_key(package))) out[package_key(package)] = scanner_stanza(text);
  });
  return out;
}

Result<std::string> DpkgDatabase::md5sums(const DebianPackage& package) const {
  // Packages of several architectures (Multi-Arch: same) keep NAME:ARCH.md5sums, the others NAME.md5sums.
  for (const auto& stem : {package_key(package), package.name}) {
    auto text = read_if_there(m_dir / "info" / (stem + ".md5sums"));
    if (!text) return fail(text.error());
    if (*text) return std::move(**text);
  }
  return std::string();
}

Result<std::optional<fs::Path>> DpkgDatabase::copyright_file(const DebianPackage& package) const {
  std::vector<std::string> listed;
  for (const auto& stem : {package_key(package), package.name}) {
    auto text = read_if_there(m_dir / "info" / (stem + ".list"));
    if (!text) return fail(text.error());
    if (!*text) continue;
    for_each_line(**text, [&](std::string_view line) { listed.emplace_back(line); });
    break;
  }
  const std::string doc = "/usr/share/doc/" + package.name;
  for (const auto& path : listed) {
    std::string candidate;
    if (path.ends_with(doc + "/copyright")) {
      candidate = path;
    } else if (path.ends_with(doc)) {
      candidate = path + "/copyright";  // the directory, or a link to another package's
    } else {
      continue;
    }
    struct stat st {};
    if (::stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    return std::optional<fs::Path>(real_path(candidate));
  }
  return std::optional<fs::Path>();
}

Result<std::vector<std::string>> DpkgDatabase::listed_files(const DebianPackage& package) const {
  for (const auto& stem : {package_key(package), package.name}) {
    auto text = read_if_there(m_dir / "info" / (stem + ".list"));
    if (!text) return fail(text.error());
    if (!*text) continue;
    std::vector<std::string> out;
    for_each_line(**text, [&](std::string_view line) {
      if (!line.empty()) out.emplace_back(line);
    });
    return out;
  }
  return fail_input("the dpkg database " + m_dir.string() + " has no file list of " + package_key(package));
}

std::map<std::string, std::string> parse_os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for_each_line(text, [&](std::string_view line) {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') return;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos || equals == 0) return;
    auto value = line.substr(equals + 1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.remove_suffix(1);
    out[std::string(line.substr(0, equals))] = unquoted(value);
  });
  return out;
}

Result<std::optional<Distribution>> read_distribution(const fs::Path& root) {
  std::optional<std::string> text;
  for (const char* path : {"etc/os-release", "usr/lib/os-release"}) {
    auto read = read_if_there(root / path);
    if (!read) return fail(read.error());
    if (*read) {
      text = std::move(**read);
      break;
    }
  }
  if (!text) return std::optional<Distribution>();
  auto fields = parse_os_release(*text);
  Distribution out{fields["ID"], fields["VERSION_ID"], fields["VERSION_ID"], fields["PRETTY_NAME"]};
  if (out.id.empty()) return std::optional<Distribution>();
  // A scanner takes Debian's point release from debian_version (Trivy: "debian 12.11"); os-release
  // names only the major one.
  if (out.id == "debian") {
    auto version = read_if_there(root / "etc/debian_version");
    if (!version) return fail(version.error());
    if (*version) {
      std::string line = (*version)->substr(0, (*version)->find('\n'));
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
      if (!line.empty()) out.version = std::move(line);
    }
  }
  return std::optional<Distribution>(std::move(out));
}

}  // namespace arec
