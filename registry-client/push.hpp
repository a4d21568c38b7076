// Push: blobs in parallel, skipped when present, mounted when another repository has them, then the
// manifests' exact bytes; then each record's referrers (its SBOM and the record itself).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "registry-client/registry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"

namespace arec {

// A tag a push left where it was: it names a record newer than the one pushed.
struct KeptTag {
  std::string tag;
  Digest digest;         // what it names
  std::string recorded;  // the newest time the registry lists for that
};

struct PushedImage {
  std::string repository;
  Digest digest;
  std::vector<std::string> tags;  // those that name it once the push is done
  bool was_present = false;       // the registry held the manifest already
  std::vector<KeptTag> kept;      // `latest` or `latest-<config>` left to a newer record
};

struct PushSummary {
  std::string registry;
  std::vector<PushedImage> images;
  int uploaded = 0;        // blobs sent
  int mounted = 0;         // blobs linked from another repository of the registry
  int skipped = 0;         // blobs the repository held already
  std::int64_t bytes = 0;  // bytes of the blobs sent
  // Uploads that went on with the session an earlier push left (killed halfway), and the bytes those
  // sessions held already: not sent again, and not in `bytes`.
  struct Resumed {
    int blobs = 0;
    std::int64_t bytes = 0;
  } resumed;
  // The records' referrers (SBOMs, signatures, provenance), counted apart from the images above.
  struct Referrers {
    int pushed = 0;          // manifests the registry did not hold
    int uploaded = 0;        // blobs sent or mounted for them
    std::int64_t bytes = 0;  // bytes of the blobs sent
    int listed = 0;          // entries added to fallback tags (registries without the referrers API)
    // Of `pushed`, by kind (referrer_kind).
    int sboms = 0, signatures = 0, provenance = 0, other = 0;
  } referrers;
  // The records themselves (record_artifact), one artifact per record, counted the same way.
  Referrers records;
  // Every manifest and index put, of images, referrers, records and fallback tags: the bytes the
  // push sent besides the blobs'.
  struct Manifests {
    int put = 0;
    std::int64_t bytes = 0;
  } manifests;
};

nlohmann::json to_json(const PushSummary& summary);

// What a referrer of a record is, by its artifact type and, for a Sigstore bundle, the statement's
// predicate type its manifest is annotated with.
enum class ReferrerKind { sbom, signature, provenance, record, other };
ReferrerKind referrer_kind(const Descriptor& referrer);

// Whether a push tags the store's latest record of each module/name `latest`, so that registry
// clean-up of untagged manifests keeps it and tag-listing tools find it.
enum class LatestTag { no, yes };

struct PushTags {
  LatestTag latest = LatestTag::yes;
  std::vector<std::string> extra;  // --tag: on the newest pushed record of each module/name
  // Whose latest record is tagged `latest` where a module/name has records of several configurations
  // (the others' are tagged latest-<config>).
  std::string default_config{k_default_config};
};

// ---- push planning: what a push sends, decided before any blob moves ----

// An image of a push: its repository, its blobs (config, then layers) and whether the registry holds
// its manifest already, and with it every blob the manifest names.
struct ImageToPush {
  std::string repository;
  std::vector<Descriptor> blobs;
  bool present = false;
};

// A blob to send: every repository that needs it, in the order of the images.
struct BlobToPush {
  Descriptor blob;
  std::vector<std::string> repositories;
};

struct BlobPlan {
  // Each distinct blob of the images the registry lacks, once, the largest first (so the parallel
  // transfers end together); blobs of equal size keep the images' order.
  std::vector<BlobToPush> blobs;
  int skipped = 0;  // blobs of the images that are present: not even asked about
};

BlobPlan plan_blobs(const std::vector<ImageToPush>& images);

// Where a blob the registry lacks may be mounted from instead of uploaded. Two kinds of source, the
// first preferred: the repositories the store noted holding it (Store::repositories_holding: where a
// push sent or found it, or a pull fetched it, newest first), which may name a module/name whose
// record was since removed or one this store never recorded; then the repositories of the store's
// records that use it, the newest record first. Neither is proof that this registry holds it there
// (a note names no registry, a record may never have been pushed): the registry checks every mount,
// and a blob no source holds is uploaded.
class MountSources {
 public:
  MountSources() = default;
  // The notes of `blobs`, then every latest record of the store; a record whose manifest cannot be
  // read offers nothing.
  static MountSources of(const Store& store, const std::vector<Digest>& blobs = {});
  // Adds the blobs of an image in `repository`; what was added first is preferred.
  void add(const std::string& repository, const Manifest& manifest);
  // Adds a repository known to have held `digest`; preferred over every record's.
  void add_noted(const Digest& digest, const std::string& repository);
  // The repositories other than `repository` that may hold `digest`, the preferred first, at most `limit`.
  std::vector<std::string> candidates(const Digest& digest, std::string_view repository, std::size_t limit) const;
  // The preferred one, if any.
  std::optional<std::string> candidate(const Digest& digest, std::string_view repository) const;

 private:
  std::map<Digest, std::vector<std::string>> m_noted;
  std::map<Digest, std::vector<std::string>> m_repositories;
};

// Pushes each record to repository module/name. The newest pushed record of each module/name goes under
// the extra tags, and under `latest` when it is the store's latest (a tagged manifest is put under its
// tags only); older records go by digest. A tag that names the digest already is not written again.
// Then each record's referrers (the store's SBOM of it, and the record itself as a record artifact,
// made from the record): their manifests by digest, listed through the referrers API where the registry
// has it, else in the fallback tag sha256-<hex> (merged with what the tag holds, never overwritten).
// The store's history is only read; where each blob went is noted (Store::note_repository).
Result<PushSummary> push_records(Store& store, const std::vector<Record>& records, const PushTags& tags,
                                 const RegistryAddress& address, const TransferOptions& options);

}  // namespace arec
