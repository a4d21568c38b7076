// What an image that runs as a service holds besides its programs and their libraries: its users
// (/etc/passwd, /etc/group), a /tmp anyone may write, the files of Debian packages asked for by name
// (--package), the CA certificates a program linking a TLS library looks for, and the OS identity a
// scanner reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/oci.hpp"
#include "recorder/layer.hpp"
#include "recorder/layering.hpp"
#include "recorder/sbom.hpp"

namespace arec {

// distroless's unprivileged user and group.
inline constexpr std::uint32_t k_nonroot_id = 65532;
// The config's User of an image arec gives its users (no base) and no --user: nonroot, never root.
inline constexpr std::string_view k_nonroot_user = "65532:65532";

// /etc/passwd and /etc/group of an image without a base: root (0) and nonroot (65532), as distroless has them.
std::string default_passwd();
std::string default_group();

// /tmp, writable by every user and sticky (1777): the one directory of an image not 0755.
LayerEntry tmp_directory();

// `--user NAME|UID[:GROUP|GID]`.
struct UserSpec {
  std::string user;
  std::string group;  // empty: the user's own (from passwd), or the user's number again for a number
};
Result<UserSpec> parse_user(std::string_view text);

// The config's User, "UID:GID": a name looked up in `passwd` (or `group`), the image's files, which
// `where` names in the refusal; a number taken as it is. No passwd text: only numbers are accepted.
Result<std::string> resolve_user(const UserSpec& spec, const std::optional<std::string>& passwd,
                                 const std::optional<std::string>& group, std::string_view where);

// `--package NAME[:ARCH]`.
struct PackageSpec {
  std::string name;
  std::string architecture;  // empty: the image's, or all
};
Result<PackageSpec> parse_package(std::string_view text);

// Debian's name of a platform's architecture (amd64, arm64, armhf, i386, ...); empty when arec knows none.
std::string debian_architecture(const Platform& platform);

// Whether a package's listed image path is taken: documentation, man and info pages, locales and
// lintian overrides are not.
bool kept_package_path(std::string_view image_path);

// The installed package `spec` names for an image of `image_architecture` (Debian's spelling), and its
// files as the image holds them (placed_package_files in `root`, "" for this machine). Refused: a package
// not installed (naming apt-get install), or one of another architecture than the image's.
Result<PackageFiles> package_files(const DpkgDatabase& dpkg, const PackageSpec& spec,
                                   std::string_view image_architecture, const std::string& root = "");

// Whether an image path is a TLS library's (libssl, libcrypto, libgnutls, libcurl): a program that loads
// one looks for CA certificates.
bool is_tls_library(std::string_view image_path);

inline constexpr std::string_view k_ca_bundle = "etc/ssl/certs/ca-certificates.crt";

// The ca-certificates package's layer: the bundle (every certificate the package installs under
// /usr/share/ca-certificates, in path order, then those of `recorded` under
// /usr/local/share/ca-certificates, as update-ca-certificates would make it), and the paths OpenSSL
// looks in (/usr/lib/ssl/certs -> /etc/ssl/certs, /usr/lib/ssl/cert.pem -> the bundle). `why` (the TLS
// library) is named when the package is not installed.
Result<PackageFiles> ca_certificate_files(const DpkgDatabase& dpkg, const std::vector<LayerEntry>& recorded,
                                          std::string_view why, const std::string& root = "");

// The OS identity of an image of Debian packages, as `root`'s base-files has it ("/": this machine's):
// etc/os-release (and usr/lib/os-release, which Debian links it to), etc/debian_version, and
// etc/lsb-release where there is one (Ubuntu's, which Trivy reads for Ubuntu). What scanners read to
// know the distribution and its release (Trivy reports "debian 12.11"). Nothing when `root` has no
// os-release naming an ID.
Result<std::optional<OsIdentity>> os_identity(const fs::Path& root = "/");

}  // namespace arec
