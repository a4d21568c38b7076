// The SBOM of a record: an SPDX 2.3 JSON document of what its layers hold, made from the entries arec
// packed: each Debian package a file comes from, named once (name, version, architecture, purl), and
// every regular file of no package with its SHA-1 and SHA-256. A package's files are not listed one by
// one: the package names them (dpkg's own list and checksums), and listing them made the document the
// largest thing a one-line change pushed. Kept in the store as an OCI artifact whose subject is the
// record's image manifest (a referrer), so the record's own digest does not change because of it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "recorder/dependencies.hpp"
#include "recorder/layer.hpp"
#include "store/store.hpp"
#include "util/fs.hpp"

namespace arec {

namespace media_type {
inline constexpr std::string_view k_spdx_json = "application/spdx+json";
}  // namespace media_type

// A package the dpkg database lists as installed.
struct DebianPackage {
  std::string name;
  std::string version;
  std::string architecture;
  std::string maintainer;  // "Name <email>", as the status file has it

  friend auto operator<=>(const DebianPackage&, const DebianPackage&) = default;
};

// A purl component percent-encoded, as the purl specification asks: everything but the unreserved characters.
std::string purl_encode(std::string_view text);

// `pkg:deb/debian/NAME@VERSION?arch=ARCH`, percent-encoded as the purl specification asks.
std::string debian_purl(const DebianPackage& package);

// The dpkg database (an admin directory such as /var/lib/dpkg: info/*.list and status), read on demand.
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

 private:
  fs::Path m_dir;
};

// The packages a dpkg status file marks installed (Package, Version, Architecture, Maintainer), in its order.
std::vector<DebianPackage> installed_packages(std::string_view status);

// Whether a host path lies under a system directory (/usr, /lib*, /bin, /sbin, /etc, /opt, /var):
// only such a file can have been installed by a package.
bool is_system_path(std::string_view path);

// One regular file of the layer.
struct SbomFile {
  std::string path;  // in the image, no leading slash
  std::string sha1;  // lowercase hex; SPDX requires SHA-1 beside SHA-256. Empty for a package's file
  std::string sha256;
  std::vector<DebianPackage> packages;  // the Debian packages that installed it; none: the build's own
};

// The packages that list each of a set of host paths, as DpkgDatabase::owners answers.
using OwnersOf =
    std::function<Result<std::map<std::string, std::vector<DebianPackage>>>(const std::vector<std::string>& paths)>;

// What the document says, all of it known before it is written.
struct SbomFacts {
  std::string module;
  std::string name;
  std::string revision;         // the record package's version; empty when unknown
  Digest image;                 // the record's image manifest digest: the document's namespace
  std::int64_t created = 0;     // SOURCE_DATE_EPOCH
  std::vector<SbomFile> files;  // sorted by path
  // Packages of no Debian package (recorder/dependencies), each with its files among `files`.
  std::vector<SoftwarePackage> dependencies;
};

// Finds the Debian package of every regular file of `entries`, and hashes those of none. Only files
// whose host path lies under a system directory (/usr, /lib*, /bin, /sbin, /etc, /opt, /var) are looked
// up, through `owners_of` (else in `dpkg`), so a record of build outputs alone never reads the database.
// `known` names the package of image paths whose package is known already (a package's layer,
// --package, the CA bundle): those are neither looked up nor read. sbom_packages() then
// add_checksums() with no table.
Result<std::vector<SbomFile>> sbom_files(const std::vector<LayerEntry>& entries, const DpkgDatabase& dpkg,
                                         const std::map<std::string, DebianPackage>& known = {},
                                         const OwnersOf& owners_of = {});

// The first half of sbom_files: every regular file with its packages, sorted by path, no checksums yet.
Result<std::vector<SbomFile>> sbom_packages(const std::vector<LayerEntry>& entries, const DpkgDatabase& dpkg,
                                            const std::map<std::string, DebianPackage>& known = {},
                                            const OwnersOf& owners_of = {});

// The second half: the SHA-1 and SHA-256 of each of `files` of no package, taken from `checksums` where
// the layer's writer left them as it read the file (write_tar with TarOptions::checksums), else read
// here from the entry of `entries` at its path (a layer the store had already, an SBOM made alone).
Status add_checksums(std::vector<SbomFile>& files, const std::vector<LayerEntry>& entries,
                     const ChecksumTable* checksums);

// The SPDX 2.3 document: the record's package, each Debian package of its files once, each package of
// no Debian package (a build's dependency) with the files it holds, and the files of no Debian package
// with their checksums. Reproducible (created from SOURCE_DATE_EPOCH, namespace from the image digest,
// packages, files and relationships in a fixed order).
nlohmann::json spdx_document(const SbomFacts& facts);

// The SPDX packages of `packages` (a build's dependencies), each CONTAINed by `container`, appended to
// `out` with their relationships; returns the SPDX identifier of the package holding each of their files.
std::map<std::string, std::string> spdx_software_packages(const std::vector<SoftwarePackage>& packages,
                                                          std::string_view container, nlohmann::json& out,
                                                          nlohmann::json& relationships);

// Puts an artifact into the store: `bytes` as its one blob, the empty config, and a manifest whose
// subject is `subject` (OCI image-spec 1.1 artifact guidance). Returns the descriptor to list in
// index.json: artifactType set, annotated with the subject's digest (annotation::k_subject).
Result<Descriptor> put_referrer(Store& store, const Descriptor& subject, std::string_view artifact_type,
                                std::string_view bytes, const Annotations& annotations);

// The SPDX document the store keeps for the image manifest `image`, or nothing when it has none.
Result<std::optional<std::string>> read_sbom(const Store& store, const Digest& image);

}  // namespace arec
