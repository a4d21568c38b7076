// Layers by origin: a record's entries split by where they come from and how often they change, so a
// rebuild moves only the layer that changed and images on the same libraries share those layers.
//
// In order: the OS identity (when the image holds a Debian package), one layer per Debian package the
// runtime closure takes files from (ordered by package name), one per dependency of the build that no
// Debian package installed (recorder/dependencies), the closure's files of no package, the
// project's own shared libraries, then the programs and every other named file. A package's layer holds all of the
// package's files under the library directories (its shared objects, the loader, what they load by path such as
// OpenSSL's ossl-modules or glibc's gconv, their links and the links of the path leading there), not only the ones one
// program needs: it is the same bytes in every image that uses the package, whichever of its
// libraries that image needs. Each package's layer also holds what scanners read of it (Trivy's and
// syft's dpkg analyzers, as distroless images hold it): its status stanza, the md5sums of its files the
// layer holds and its copyright file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "recorder/dependencies.hpp"
#include "recorder/dpkg.hpp"
#include "recorder/layer.hpp"
#include "recorder/runtime_closure.hpp"
#include "recorder/sbom.hpp"

namespace arec {

// `--layers`: how many layers a record may add to its base's.
inline constexpr unsigned k_default_layer_budget = 16;
inline constexpr unsigned k_max_layer_budget = 100;
// containerd refuses an image of more layers than this, its base's included.
inline constexpr std::size_t k_max_image_layers = 127;

enum class LayerOrigin {
  os,               // the distribution's identity (os-release, debian_version): "os:ID=VERSION"
  package,          // one Debian package: "deb:NAME=VERSION:ARCH"
  merged_packages,  // the smallest packages, merged to fit the budget: "deb:merged"
  dependency,       // a package of no Debian package, a build's dependency: "dep:NAME=VERSION"
  no_package,       // closure files no package lists (/usr/local/lib, a sysroot's own): "no-package"
  own_libraries,    // shared objects of the build: recorded, or found by the closure in the build tree
  files,            // the programs and every other recorded file
  mixed,            // a budget smaller than the kinds of files: several of the above, origins joined by ','
};

struct LayerGroup {
  LayerOrigin kind = LayerOrigin::files;
  std::string origin;               // the layer's dev.arec.layer.origin
  std::string key;                  // packages: "NAME:ARCH", what they are ordered by; else the origin
  DebianPackage package;            // a package's layer: that package (the SBOM names it); else empty
  std::vector<LayerEntry> entries;  // sorted by path, parents present
  std::int64_t size = 0;            // bytes of its regular files
};

// "deb:NAME=VERSION:ARCH".
std::string package_origin(const DebianPackage& package);
// The package a layer's origin names (its name, version and architecture); nothing for any other origin.
std::optional<DebianPackage> package_of_origin(std::string_view origin);

// Whether an image path ("usr/lib/x86_64-linux-gnu/libc.so.6") lies under a directory the loader
// searches or libraries load from: /lib, /lib32, /lib64, /libx32 and the same under /usr.
bool in_library_directory(std::string_view image_path);

// The files and links of a package's file list (host paths, as dpkg lists them) that `keep` accepts by
// their listed image path, as the image holds them: each one's directory resolved in `root` ("" for this
// machine), the links met on the way kept as links (merged /usr: lib -> usr/lib, bin -> usr/bin), the
// file at its real place. Directories are left to the files under them; a listed path that is gone
// (excluded by dpkg's path-exclude, removed by hand) is left out.
Result<std::vector<LayerEntry>> placed_package_files(const std::vector<std::string>& listed, const std::string& root,
                                                     const std::function<bool(const std::string& image_path)>& keep);

// What the base image holds at an image path (without leading slash); a package's file there is left out.
using BaseHolds = std::function<bool(const std::string& image_path)>;

// Where a package's stanza and md5sums are in an image: var/lib/dpkg/status.d/NAME and NAME.md5sums.
inline constexpr std::string_view k_status_dir = "var/lib/dpkg/status.d";

// Where Debian keeps the licence texts copyright files refer to (base-files' /usr/share/common-licenses).
inline constexpr std::string_view k_common_licences = "/usr/share/common-licenses";

// What a scanner reads of `package` in an image: `stanza` (DpkgDatabase::stanzas) at
// var/lib/dpkg/status.d/NAME, the lines of its md5sums naming the files of `held` (their host paths,
// under the target's `root`; a path of the root named as it is in the image) at status.d/NAME.md5sums,
// its copyright file at usr/share/doc/NAME/copyright, read through the link Debian policy allows, and
// the texts of this machine's /usr/share/common-licenses the copyright file names. Each is left out when
// this machine has none of it.
Result<std::vector<LayerEntry>> package_metadata(const DpkgDatabase& dpkg, const DebianPackage& package,
                                                 const std::string& stanza, const std::vector<LayerEntry>& held,
                                                 const std::string& root);

// The names of /usr/share/common-licenses a copyright file refers to ("GPL-2", "LGPL-2.1"), each once.
std::vector<std::string> common_licences_named(std::string_view copyright);

// The distribution an image of Debian packages is of, and the files that say so to a scanner.
struct OsIdentity {
  Distribution distribution;
  std::vector<LayerEntry> entries;
  std::vector<fs::Path> made_from;  // the host files the entries were read from
};

// "os:ID=VERSION" ("os:debian=12.11").
std::string os_origin(const Distribution& distribution);

// How much of a package a layer takes.
enum class PackageFilesTaken {
  library_directories,  // all of its files under the library directories: the same layer in every image
  needed,               // only the files the closure and the added packages name (--layers 1)
};

// Files taken from a package as a whole (--package, the CA certificates): a layer of that package.
struct PackageFiles {
  DebianPackage package;
  std::vector<LayerEntry> entries;
  std::vector<fs::Path> made_from;  // host files the entries arec wrote were made of (the CA bundle's certificates)
};

// The groups of `recorded` (the named inputs) and `closure` (what the loader needs besides), in layer
// order, empty ones left out. `added` are packages' layers of their own, joined by the closure's files
// of the same package. Packages are found by the closure files' host paths through `owners_of`
// (else `dpkg.owners`), and their files in `dpkg`; each package's group holds its package_metadata.
// When there is a package and the base holds no os-release, `os` is a group of its own, first.
Result<std::vector<LayerGroup>> group_entries(const std::vector<LayerEntry>& recorded, const RuntimeClosure& closure,
                                              const DpkgDatabase& dpkg, const BaseHolds& base_holds,
                                              const OwnersOf& owners_of = {},
                                              const std::vector<PackageFiles>& added = {},
                                              const OsIdentity* os = nullptr,
                                              PackageFilesTaken taken = PackageFilesTaken::library_directories);

// The files of each declared dependency (`dependency_of`: image path -> index in `declared`), and the
// links leading to them, taken out of the groups of no Debian package into a group of their own
// ("dep:NAME=VERSION"), placed after the OS identity's and the Debian packages' groups: a dependency
// changes less often than the build's own files, and an upgrade is then one changed layer. Directories
// left holding nothing but what moved go with it; a group left with nothing is dropped.
Result<std::vector<LayerGroup>> separate_dependencies(std::vector<LayerGroup> groups,
                                                      const std::map<std::string, std::size_t>& dependency_of,
                                                      const std::vector<DeclaredPackage>& declared);

// At most `budget` groups: when there are more, the smallest package groups (the OS identity among
// them; by size, then key, so the same packages give the same layers on any machine) become one
// "deb:merged" group after the packages kept; a budget smaller than the other kinds plus one merges the
// first groups in order as well.
std::vector<LayerGroup> fit_budget(std::vector<LayerGroup> groups, unsigned budget);

// An image of `base_layers` and `record_layers` more is refused when it would have more than
// k_max_image_layers in all (the budget bounds the record's, not the base's), naming the counts.
Status check_layer_count(std::size_t base_layers, std::size_t record_layers);

}  // namespace arec
