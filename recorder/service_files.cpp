#include "recorder/service_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>

#include "oci/machine.hpp"
#include "recorder/image_files.hpp"
#include "util/fs.hpp"

namespace arec {

namespace {

// A user or group name as useradd accepts it (NAME_REGEX of Debian's adduser, less the trailing '$').
bool is_account_name(std::string_view text) {
  if (text.empty() || text.size() > 32) return false;
  if (!(std::islower(static_cast<unsigned char>(text.front())) != 0 || text.front() == '_')) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0 ||
           c == '_' || c == '-';
  });
}

// A uid or gid: 0 to 2^32 - 2 (the last is (uid_t)-1, "no user").
std::optional<std::uint32_t> account_number(std::string_view text) {
  if (text.empty() || text.size() > 10 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  if (value > 4294967294ULL) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

// The fields of the line of `file` (passwd or group format) whose first field is `name`.
std::optional<std::vector<std::string>> account_line(std::string_view file, std::string_view name) {
  std::size_t pos = 0;
  while (pos < file.size()) {
    const std::size_t end = std::min(file.find('\n', pos), file.size());
    const std::string_view line = file.substr(pos, end - pos);
    pos = end + 1;
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
      const auto colon = line.find(':', start);
      fields.emplace_back(line.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    if (!fields.empty() && fields[0] == name) return fields;
  }
  return std::nullopt;
}

bool is_package_name(std::string_view text) {
  // Debian Policy 5.6.1: lowercase letters, digits, '+', '-', '.'; at least two, starting alphanumeric.
  if (text.size() < 2 || !(std::islower(static_cast<unsigned char>(text.front())) != 0 ||
                           std::isdigit(static_cast<unsigned char>(text.front())) != 0)) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0 ||
           c == '+' || c == '-' || c == '.';
  });
}

bool is_architecture_name(std::string_view text) {
  return !text.empty() && text.size() <= 32 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0 ||
           c == '-';
  });
}

// "NAME" for a package of the image's architecture or of all, else "NAME:ARCH", as apt-get takes it.
std::string apt_name(const PackageSpec& spec, std::string_view image_architecture) {
  return spec.name + ":" + std::string(spec.architecture.empty() ? image_architecture : spec.architecture);
}

}  // namespace

std::string default_passwd() {
  return "root:x:0:0:root:/root:/sbin/nologin\n"
         "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n";
}

std::string default_group() {
  return "root:x:0:\n"
         "nonroot:x:65532:\n";
}

LayerEntry tmp_directory() { return {LayerEntry::Type::directory, "tmp", {}, {}, 01777, 0, {}}; }

Result<UserSpec> parse_user(std::string_view text) {
  UserSpec spec;
  const auto colon = text.find(':');
  spec.user = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) spec.group = std::string(text.substr(colon + 1));
  const auto valid = [](const std::string& part) { return is_account_name(part) || account_number(part).has_value(); };
  if (!valid(spec.user) || (colon != std::string_view::npos && !valid(spec.group))) {
    return fail_input(
        "--user \"" + printable(text) +
        "\": expected NAME or UID, then optionally :GROUP or :GID (names of lowercase letters, digits, '_' "
        "and '-'; numbers from 0 to 4294967294)");
  }
  return spec;
}

Result<std::string> resolve_user(const UserSpec& spec, const std::optional<std::string>& passwd,
                                 const std::optional<std::string>& group, std::string_view where) {
  std::string uid;
  std::string gid;
  if (account_number(spec.user)) {
    uid = std::to_string(*account_number(spec.user));
  } else {
    auto line = passwd ? account_line(*passwd, spec.user) : std::nullopt;
    if (!line || line->size() < 4 || !account_number((*line)[2]) || !account_number((*line)[3])) {
      return fail_input("--user " + spec.user + ": " + std::string(where) +
                        (passwd ? " names no such user" : " has no /etc/passwd") +
                        "; give a user it names, or a number");
    }
    uid = (*line)[2];
    gid = (*line)[3];
  }
  if (!spec.group.empty()) {
    if (account_number(spec.group)) {
      gid = std::to_string(*account_number(spec.group));
    } else {
      auto line = group ? account_line(*group, spec.group) : std::nullopt;
      if (!line || line->size() < 3 || !account_number((*line)[2])) {
        return fail_input("--user " + spec.user + ":" + spec.group + ": " + std::string(where) +
                          (group ? " names no such group" : " has no /etc/group") +
                          "; give a group it names, or a number");
      }
      gid = (*line)[2];
    }
  }
  // A number alone is its own group, as a container runtime reads "UID" without one.
  return gid.empty() ? uid : uid + ":" + gid;
}

Result<PackageSpec> parse_package(std::string_view text) {
  PackageSpec spec;
  const auto colon = text.find(':');
  spec.name = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) spec.architecture = std::string(text.substr(colon + 1));
  if (!is_package_name(spec.name) || (colon != std::string_view::npos && !is_architecture_name(spec.architecture))) {
    return fail_input(
        "--package \"" + printable(text) +
        "\": expected a Debian package name (lowercase letters, digits, '+', '-', '.'), optionally :ARCH");
  }
  return spec;
}

std::string debian_architecture(const Platform& platform) {
  const Machine* m = machine_of_platform(platform);
  return m ? std::string(m->debian) : std::string();
}

bool kept_package_path(std::string_view image_path) {
  for (std::string_view dropped : {"usr/share/doc/", "usr/share/man/", "usr/share/info/", "usr/share/locale/",
                                   "usr/share/lintian/", "usr/share/doc-base/", "usr/share/bug/"}) {
    if (image_path.starts_with(dropped) || std::string(image_path) + "/" == dropped) return false;
  }
  return true;
}

Result<PackageFiles> package_files(const DpkgDatabase& dpkg, const PackageSpec& spec,
                                   std::string_view image_architecture, const std::string& root) {
  auto installed = dpkg.installed(spec.name);
  if (!installed) return fail(installed.error());
  const std::string wanted = spec.architecture.empty() ? std::string(image_architecture) : spec.architecture;
  if (!spec.architecture.empty() && spec.architecture != "all" && spec.architecture != image_architecture) {
    return fail_input("--package " + spec.name + ":" + spec.architecture + ": the image is for " +
                      std::string(image_architecture) + "; give " + spec.name + ":" + std::string(image_architecture) +
                      ", the package of its architecture");
  }
  const DebianPackage* found = nullptr;
  for (const auto& p : *installed) {
    if (p.architecture == wanted || p.architecture == "all") found = &p;
  }
  if (found == nullptr) {
    std::string other;
    for (const auto& p : *installed) other += (other.empty() ? "" : ", ") + p.architecture;
    return fail_input("--package " + spec.name + ": not installed for " + wanted + " on this machine" +
                      (other.empty() ? "" : " (only for " + other + ")") + "; install it with apt-get install " +
                      apt_name(spec, image_architecture));
  }
  auto listed = dpkg.listed_files(*found);
  if (!listed) return fail(listed.error());
  auto entries = placed_package_files(*listed, root, [](const std::string& path) { return kept_package_path(path); });
  if (!entries) return fail(std::move(entries.error()).context("--package " + spec.name));
  return PackageFiles{*found, std::move(*entries), {}};
}

bool is_tls_library(std::string_view image_path) {
  const std::string_view name = image_path.substr(image_path.rfind('/') + 1);
  for (std::string_view prefix :
       {"libssl.so", "libcrypto.so", "libgnutls.so", "libcurl.so", "libcurl-gnutls.so", "libcurl-nss.so"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

Result<PackageFiles> ca_certificate_files(const DpkgDatabase& dpkg, const std::vector<LayerEntry>& recorded,
                                          std::string_view why, const std::string& root) {
  auto installed = dpkg.installed("ca-certificates");
  if (!installed) return fail(installed.error());
  if (installed->empty()) {
    return fail_input(
        "the image holds " + std::string(why) +
        ", which needs CA certificates, and ca-certificates is not installed on this machine; install it with "
        "apt-get install ca-certificates, or record with --no-ca-certificates");
  }
  const DebianPackage& package = installed->front();
  auto listed = dpkg.listed_files(package);
  if (!listed) return fail(listed.error());
  std::vector<std::string> certificates;
  for (const auto& path : *listed) {
    if (path.starts_with(root + "/usr/share/ca-certificates/") && path.ends_with(".crt")) certificates.push_back(path);
  }
  std::sort(certificates.begin(), certificates.end());
  std::string bundle;
  auto append = [&bundle](std::string text) {
    bundle += text;
    if (!bundle.empty() && bundle.back() != '\n') bundle.push_back('\n');
  };
  for (const auto& path : certificates) {
    auto text = fs::read_file(path);
    if (!text) return fail(std::move(text.error()).context("reading the CA certificates of ca-certificates"));
    append(std::move(*text));
  }
  // The image's own CAs, where update-ca-certificates takes a machine's: recorded entries are path-sorted.
  for (const auto& e : recorded) {
    if (e.type != LayerEntry::Type::file || !e.path.starts_with("usr/local/share/ca-certificates/") ||
        !e.path.ends_with(".crt")) {
      continue;
    }
    if (!e.source.empty()) {
      auto text = fs::read_file(e.source);
      if (!text) return fail(text.error());
      append(std::move(*text));
    } else {
      append(e.content);
    }
  }
  PackageFiles out{package, {}, {certificates.begin(), certificates.end()}};
  out.entries.push_back(generated_file(std::string(k_ca_bundle), std::move(bundle)));
  // Where OpenSSL (OPENSSLDIR /usr/lib/ssl on Debian) and GnuTLS look: Debian's openssl package has the same links.
  out.entries.push_back(
      {LayerEntry::Type::symlink, "usr/lib/ssl/cert.pem", {}, "/" + std::string(k_ca_bundle), 0777, 0, {}});
  out.entries.push_back({LayerEntry::Type::symlink, "usr/lib/ssl/certs", {}, "/etc/ssl/certs", 0777, 0, {}});
  return out;
}

Result<std::optional<OsIdentity>> os_identity(const fs::Path& root) {
  auto distribution = read_distribution(root);
  if (!distribution) return fail(distribution.error());
  if (!*distribution) return std::optional<OsIdentity>();
  OsIdentity out{std::move(**distribution), {}, {}};
  // Each as this machine has it: a file, or a link to one of the others (etc/os-release ->
  // ../usr/lib/os-release); a link leading anywhere else is written as the file it leads to.
  const std::vector<std::string> paths{"etc/os-release", "usr/lib/os-release", "etc/debian_version", "etc/lsb-release"};
  for (const auto& path : paths) {
    const fs::Path host = root / path;
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      const std::string target = std::filesystem::read_symlink(host, ec).string();
      if (ec) return fail_input(host.string() + ": reading symlink: " + ec.message());
      const auto real = std::filesystem::weakly_canonical(host, ec);
      const bool among = !ec && std::any_of(paths.begin(), paths.end(), [&](const std::string& other) {
        return other != path && std::filesystem::weakly_canonical(root / other, ec) == real &&
               ::lstat((root / other).c_str(), &st) == 0 && S_ISREG(st.st_mode);
      });
      if (among) {
        out.entries.push_back({LayerEntry::Type::symlink, path, {}, target, 0777, 0, {}});
        continue;
      }
    }
    auto text = fs::read_file(host);
    if (!text) return fail(std::move(text.error()).context("the OS identity"));
    out.entries.push_back(generated_file(path, std::move(*text)));
    out.made_from.push_back(host);
  }
  return std::optional<OsIdentity>(std::move(out));
}

}  // namespace arec
