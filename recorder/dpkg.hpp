// The dpkg database of the build host (or of a target root), read on demand: which installed package
// lists a file, what a package lists, its status stanza and md5sums; and the distribution the host is
// (os-release, debian_version). What a scanner reads of a package in an image comes from here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/fs.hpp"

namespace arec {

// A package the dpkg database lists as installed.
struct DebianPackage {
  std::string name;
  std::string version;
  std::string architecture;
  std::string maintainer;  // "Name <email>", as the status file has it

  friend auto operator<=>(const DebianPackage&, const DebianPackage&) = default;
};

// "NAME:ARCH": how dpkg names a package of one architecture, and the key packages are kept by.
std::string package_key(const DebianPackage& package);

// The dpkg database (an admin directory such as /var/lib/dpkg: info/*.list, info/*.md5sums and status).
class DpkgDatabase {
 public:
  explicit DpkgDatabase(fs::Path admin_dir = "/var/lib/dpkg") : m_dir(std::move(admin_dir)) {}

  // The installed packages that list each of `paths` (absolute host paths, spelt as they are found on
  // disk; merged-/usr aliases such as /lib for /usr/lib are tried too). Paths no package lists are
  // absent from the answer. One pass over the .list files, then one over status, only for the owners.
  // A missing database owns nothing.
  Result<std::map<std::string, std::vector<DebianPackage>>> owners(const std::vector<std::string>& paths) const;
  // Every path an installed package lists (its info/NAME:ARCH.list or NAME.list), directories too,
  // as dpkg spells them.
  Result<std::vector<std::string>> listed_files(const DebianPackage& package) const;
  // The installed packages called `name`, one per architecture (Multi-Arch: same), from status.
  // A missing database has none.
  Result<std::vector<DebianPackage>> installed(std::string_view name) const;
  // The status stanza of each of `packages` (by package_key) as a scanner is given it (scanner_stanza),
  // from one read of status. A package status does not list is absent.
  Result<std::map<std::string, std::string>> stanzas(const std::vector<DebianPackage>& packages) const;
  // The package's info/NAME:ARCH.md5sums (or NAME.md5sums): "MD5  PATH" lines, PATH relative to the
  // root. Empty when dpkg keeps none for it.
  Result<std::string> md5sums(const DebianPackage& package) const;
  // Where the package's copyright file is on this machine (its real path): the /usr/share/doc/NAME/copyright
  // its list names, directly or through the link to another package's documentation that Debian policy
  // allows (libstdc++6 -> gcc-12-base). Nothing when it is not there (dpkg's path-exclude) or dpkg
  // keeps no list of the package.
  Result<std::optional<fs::Path>> copyright_file(const DebianPackage& package) const;

 private:
  fs::Path m_dir;
};

// The packages a dpkg status file marks installed (Package, Version, Architecture, Maintainer), in its order.
std::vector<DebianPackage> installed_packages(std::string_view status);

// A package's stanza of a status file as the package made it, the same on every machine that installed
// that version: the state this machine keeps beside it (Conffiles, whose sums change when a conffile
// is edited; Config-Version; pending triggers) left out and Status written "install ok installed"
// (a held package says "hold"). What distroless images hold in /var/lib/dpkg/status.d/.
std::string scanner_stanza(std::string_view stanza);

// Whether a host path lies under a system directory (/usr, /lib*, /bin, /sbin, /etc, /opt, /var):
// only such a file can have been installed by a package.
bool is_system_path(std::string_view path);

// The distribution of a root, as its os-release and debian_version say: what purls name (namespace and
// distro) and what the image's OS identity layer holds.
struct Distribution {
  std::string id;           // os-release ID: "debian", "ubuntu"
  std::string version_id;   // os-release VERSION_ID: "12", "24.04"
  std::string version;      // the release a scanner reads: /etc/debian_version on Debian ("12.11"), else VERSION_ID
  std::string pretty_name;  // os-release PRETTY_NAME
};

// The distribution of `root` ("/" for this machine): its etc/os-release (else usr/lib/os-release) and,
// on Debian, etc/debian_version. Nothing when it has no os-release naming an ID.
Result<std::optional<Distribution>> read_distribution(const fs::Path& root = "/");

// The os-release fields (KEY=VALUE, quotes removed) of a text.
std::map<std::string, std::string> parse_os_release(std::string_view text);

}  // namespace arec
