// The SBOM of a record: what its layers hold, made from the entries arec packed: the OS when the record
// added its identity, each package a file comes from named once (name, version, purl, licence): a Debian
// package, or a build's dependency of none (recorder/dependencies); every regular file of no Debian
// package with its SHA-1 and SHA-256 (a dependency's held by it), and which needs which at run time. A
// Debian package's files are not listed one by one: the package names them (dpkg's own list and
// checksums), and listing them made the document the largest thing a one-line change pushed. Written as
// SPDX 2.3 and as CycloneDX 1.6 (recorder/cyclonedx) from the same facts; each kept in the store as an
// OCI artifact whose subject is the record's image manifest (a referrer), so the record's own digest does
// not change because of it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "recorder/dpkg.hpp"
#include "recorder/layer.hpp"
#include "store/store.hpp"
#include "util/fs.hpp"

namespace arec {

namespace media_type {
inline constexpr std::string_view k_spdx_json = "application/spdx+json";
inline constexpr std::string_view k_cyclonedx_json = "application/vnd.cyclonedx+json";
}  // namespace media_type

// The documents a record may keep beside it (`--sbom`), each a referrer of its image.
enum class SbomFormat { spdx, cyclonedx };

// "spdx" or "cyclonedx".
std::string_view sbom_format_name(SbomFormat format);
// The artifactType (and the document's media type) of a format's referrer.
std::string_view sbom_media_type(SbomFormat format);
// `--sbom`: "spdx", "cyclonedx", both separated by commas ("spdx,cyclonedx"), or "none" (no SBOM).
Result<std::vector<SbomFormat>> parse_sbom_formats(std::string_view text);
// `arec sbom --format`: one format.
Result<SbomFormat> parse_sbom_format(std::string_view text);

// purl components are percent-encoded except for the unreserved characters.
std::string purl_encode(std::string_view text);

// `pkg:deb/ID/NAME@VERSION?arch=ARCH&distro=ID-VERSION&epoch=N`, as Trivy names a package of that
// distribution: the namespace is os-release's ID, the distro the release a scanner reads
// (Distribution::version), the epoch a qualifier and not part of the version ('+' left as it is, as
// Trivy writes it), the qualifiers sorted as the purl specification's canonical form has them. Without
// a distribution, `pkg:deb/debian/NAME@VERSION?arch=ARCH`.
std::string debian_purl(const DebianPackage& package, const std::optional<Distribution>& distribution);

// A licence as a package declares it.
struct Licence {
  std::string expression;  // an SPDX licence expression; empty: nothing known
  // Each LicenseRef- the expression uses: a licence the SPDX list does not name, with the name and text
  // the copyright file gives it.
  struct Other {
    std::string id;  // "LicenseRef-public-domain"
    std::string name;
    std::string text;
    friend bool operator==(const Other&, const Other&) = default;
  };
  std::vector<Other> others;
  friend bool operator==(const Licence&, const Licence&) = default;
};

// A package an SBOM describes, whatever its source (a Debian package, a dependency the build declares):
// the plain value both writers consume.
struct SbomPackage {
  // Unique in the document and stable: "deb:NAME:ARCH", "dep:NAME" (recorder/dependencies); each writer
  // makes its ids from it.
  std::string key;
  std::string name;
  std::string version;  // empty: unknown
  std::string purl;
  // "Name <email>", as Debian's Maintainer field, or an SPDX agent as a packages-info file gives it
  // ("Organization: Vendor", "Person: Name (email)"); empty: unknown.
  std::string supplier;
  // Where its source or archive came from; empty: unknown.
  std::string download_location;
  std::vector<std::pair<std::string, std::string>> checksums;  // (SPDX algorithm name, lowercase hex)
  Licence licence;
  std::string source_info;  // how it came into the image: "installed by dpkg as libssl3:amd64 3.0.17-1"
};

// The key of a Debian package: "deb:NAME:ARCH".
std::string debian_package_key(const DebianPackage& package);

// One regular file of the layer.
struct SbomFile {
  std::string path;  // in the image, no leading slash
  std::string sha1;  // lowercase hex; SPDX requires SHA-1 beside SHA-256. Empty for a package's file
  std::string sha256;
  std::vector<DebianPackage> packages;  // the Debian packages that installed it; none: the build's own
  // The key of the package of no Debian package that holds it ("dep:NAME", a build's dependency); empty: none.
  std::string dependency = {};
};

// The packages that list each of a set of host paths, as DpkgDatabase::owners answers.
using OwnersOf =
    std::function<Result<std::map<std::string, std::vector<DebianPackage>>>(const std::vector<std::string>& paths)>;

// The keys of what is not a package in the dependency graph.
inline constexpr std::string_view k_record_key = "record";  // the image itself
inline constexpr std::string_view k_os_key = "os";          // the operating system
std::string file_key(std::string_view path);                // "file:PATH": a file of no package

// What the documents say, all of it known before they are written.
struct SbomFacts {
  std::string module;
  std::string name;
  std::string revision;               // the record package's version; empty when unknown
  Digest image;                       // the record's image manifest digest: the document's namespace
  std::int64_t created = 0;           // SOURCE_DATE_EPOCH
  std::optional<Distribution> os;     // the OS, when the record holds its identity (its own layer)
  std::vector<SbomPackage> packages;  // sorted by key
  std::vector<SbomFile> files;        // sorted by path; those of no package are listed, with their checksums
  // Which needs which at run time (the runtime closure): by key, record, os, package keys and file keys.
  std::map<std::string, std::set<std::string>> depends_on;
};

// The Debian packages of `files`, each once, as the SBOM describes them: the purl for `os`, Maintainer
// as the supplier, the licence of its copyright file when that is machine-readable (DEP-5).
Result<std::vector<SbomPackage>> debian_sbom_packages(const std::vector<SbomFile>& files, const DpkgDatabase& dpkg,
                                                      const std::optional<Distribution>& os);

// The dependency graph of `needs` (what the runtime closure found: which image path needs which), by
// the component each path is of: its package's key (a Debian package's, else a dependency's), else its
// file key. Links among `entries` are
// followed to the file they lead to; what leads nowhere in the image (the base's) is left out. The
// record depends on every component nothing else needs.
std::map<std::string, std::set<std::string>> dependency_graph(
    const std::vector<std::pair<std::string, std::string>>& needs, const std::vector<LayerEntry>& entries,
    const std::vector<SbomFile>& files, bool with_os);

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

// The SPDX 2.3 document: the record's package, the OS, each package once, and the files of no Debian
// package with their checksums, each CONTAINed by the record or by the dependency that holds it. The
// dependency graph is CycloneDX's alone: as relationships it would add a hundred bytes an edge to every
// document a change pushes. Reproducible (created from SOURCE_DATE_EPOCH, namespace from the image
// digest, packages, files and relationships in a fixed order).
nlohmann::json spdx_document(const SbomFacts& facts);

// Puts an artifact into the store: `bytes` as its one blob, the empty config, and a manifest whose
// subject is `subject` (OCI image-spec 1.1 artifact guidance). Returns the descriptor to list in
// index.json: artifactType set, annotated with the subject's digest (annotation::k_subject).
Result<Descriptor> put_referrer(Store& store, const Descriptor& subject, std::string_view artifact_type,
                                std::string_view bytes, const Annotations& annotations);

// The document of `format` the store keeps for the image manifest `image`, or nothing when it has none.
Result<std::optional<std::string>> read_sbom(const Store& store, const Digest& image,
                                             SbomFormat format = SbomFormat::spdx);

}  // namespace arec
