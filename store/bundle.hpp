// Records seen and carried without a network: an image described (`arec inspect`), records written to
// one tarball (`arec export`) and read back into a store (`arec import`). Layers are streamed through
// libarchive, never unpacked and never held in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/trust.hpp"
#include "store/store.hpp"

namespace arec {

// ---- inspect ---------------------------------------------------------------------------------------

// One entry of a layer's tar stream, as `tar tv` shows it.
struct LayerFile {
  enum class Type { file, directory, symlink, hardlink, other };
  Type type = Type::file;
  std::string path;                    // absolute image path ("/usr/local/bin/app")
  std::uint32_t mode = 0;              // permission bits
  std::int64_t size = 0;               // regular files
  std::string link_target;             // symbolic and hard links
  char other_kind = '?';               // Type::other: 'c' character device, 'b' block device, 'p' FIFO, 's' socket
  std::uint32_t major = 0, minor = 0;  // devices
  std::int64_t uid = 0, gid = 0;       // the owner, and the names the tar gives them (arec writes none)
  std::string uname, gname;
  std::int64_t mtime = 0;
};

// The entries of a layer blob of `layout`, read through its compression in one streamed pass.
Result<std::vector<LayerFile>> list_layer_files(const Layout& layout, const Descriptor& layer);

// The next block of the data of the entry being visited, in libarchive's own buffer (valid until the
// next call); empty at the end of the entry.
using NextBlock = std::function<Result<std::span<const std::byte>>()>;
// Streams a layer blob entry by entry: `visit` sees each entry's header and may read its data through
// `next` (what it leaves unread is skipped, never held). Nothing is unpacked.
using LayerFileVisitor = std::function<Status(const LayerFile& file, const NextBlock& next)>;
Status for_each_layer_file(const Layout& layout, const Descriptor& layer, const LayerFileVisitor& visit);

// A referrer of an image (its SBOM, its record artifact) as `arec inspect` shows it: its manifest's
// descriptor, and the size of the document it carries (its layers), which is what a reader of it fetches.
struct ReferrerDescription {
  Descriptor descriptor;
  std::int64_t document_size = 0;
};

// What `arec inspect` shows of an image manifest held by a layout.
struct ImageDescription {
  std::optional<Record> record;  // when the image is a record of the store
  std::string reference;         // what was asked for: module/name@digest, or a registry reference
  Descriptor manifest_descriptor;
  Manifest manifest;
  ImageConfig config;
  std::vector<ReferrerDescription> referrers;
  std::vector<std::vector<LayerFile>> files;  // per layer, when asked for

  // "os/architecture[/variant]" from the config, as OCI tools write a platform.
  std::string platform() const;
};

enum class LayerListing { no, yes };

// Reads the manifest (verified against its descriptor) and its config from `layout`, and with
// LayerListing::yes every layer's entries.
Result<ImageDescription> describe_image(const Layout& layout, const Descriptor& manifest, LayerListing listing);

// Reads each referrer's manifest (verified against its descriptor) from `layout`.
Result<std::vector<ReferrerDescription>> describe_referrers(const Layout& layout,
                                                            const std::vector<Descriptor>& referrers);

nlohmann::json to_json(const ImageDescription& description);
nlohmann::json to_json(const LayerFile& file);
// "-rwxr-xr-x" as ls and tar print it, with setuid, setgid and sticky ("-rwsr-sr-t") and the
// kind of a special file ("crw-rw-rw-").
std::string mode_string(const LayerFile& file);

// ---- export ----------------------------------------------------------------------------------------

enum class BundleFormat {
  oci,     // an OCI image layout: oci-layout, index.json (records with their history and referrers), blobs/
  docker,  // what `docker load` reads: manifest.json, configs and layers; no referrers
};

struct BundleSummary {
  int records = 0;
  int referrers = 0;
  int blobs = 0;
  std::int64_t bytes = 0;  // of the blobs
};

nlohmann::json to_json(const BundleSummary& summary);

// Writes `records` (oldest first; the last of each module/name is named as the store's view names it,
// module/name, and module/name:latest-<config> for each other configuration) with their referrers
// into the tarball `output`, atomically. Reproducible (rule 7): entries sorted by path, mtime `mtime`,
// owner 0 with empty names, modes 0755/0644. Every blob is streamed from the store and verified on the way.
Result<BundleSummary> export_bundle(const Store& store, const std::vector<Record>& records, const fs::Path& output,
                                    BundleFormat format, std::int64_t mtime);

// ---- import ----------------------------------------------------------------------------------------

struct ImportSummary {
  int records_added = 0;
  int records_present = 0;  // the store's history held them already
  // Records not added as the store's latest of their module/name and configuration is newer (Older).
  std::vector<std::string> kept;
  int referrers = 0;  // listed with the records added
  int blobs_written = 0;
  int blobs_present = 0;
  std::int64_t bytes = 0;  // of the blobs written
};

nlohmann::json to_json(const ImportSummary& summary);

// Reads an OCI bundle into the store at `store_dir` (created when missing), in three streamed passes
// over the tarball. The first checks every entry (no absolute path, no "..", no link, only regular files
// and directories, blob names that are digests, each blob's size and digest) and reads index.json; the
// second reads the manifests it lists and checks that the bundle holds every blob they need. Anything
// wrong is refused before the store is opened. The third writes the blobs the store lacks; then each
// record of index.json is committed, oldest first, with its referrers; one the store's history holds
// already (same digest and time) is skipped.
// What the entries of a bundle may hold, as a multiple of the bundle file's size (at least 1 MiB): a
// compressed bundle expanding further is refused before anything is written (`import --max-expansion`).
inline constexpr std::int64_t k_default_max_expansion = 100;
// What else an import checks. Every record must be one a record document can hold (an image manifest's,
// its fields as arec writes them) and recorded no further ahead of this machine's clock than
// k_clock_tolerance_seconds, as a pull requires. With a trust policy that checks, each record must be
// signed by a trusted key by the bundles the bundle itself holds for its image, or nothing is imported
// (exit 4). Records that would make the store's latest of their module/name and configuration an older
// one are not added (named in ImportSummary::kept) unless Older::allowed.
struct ImportChecks {
  const TrustPolicy* trust = nullptr;
  Older older = Older::refused;
};
Result<ImportSummary> import_bundle(const fs::Path& bundle, const fs::Path& store_dir,
                                    std::int64_t max_expansion = k_default_max_expansion,
                                    const ImportChecks& checks = {});

}  // namespace arec
