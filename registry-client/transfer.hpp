// Moving records between the store and a registry: push (blobs in parallel, skipped when present,
// mounted when another repository has them, then the manifests' exact bytes), pull (digest-verified,
// into the store, nothing half-written) and verify (each record present with its exact digest).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "addressing/reference.hpp"
#include "recorder/image.hpp"
#include "store/store.hpp"
#include "registry-client/progress.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/retry.hpp"

namespace arec {

inline constexpr std::int64_t k_default_chunk_size = std::int64_t{64} << 20;

struct TransferOptions {
  unsigned jobs = 4;                                // blobs moved at once, each on its own connection
  std::int64_t chunk_size = k_default_chunk_size;  // blobs larger than this go up in PATCH chunks
  ProgressDisplay progress = ProgressDisplay::none;
  RetryPolicy retry{};
  // From an image index, the manifest of this platform (pull, a base); none: this machine's.
  std::optional<Platform> platform;
};

struct PushedImage {
  std::string repository;
  Digest digest;
  std::vector<std::string> tags;
  bool was_present = false;  // the registry held the manifest already
};

struct PushSummary {
  std::string registry;
  std::vector<PushedImage> images;
  int uploaded = 0;  // blobs sent
  int mounted = 0;   // blobs linked from another repository of the registry
  int skipped = 0;   // blobs the repository held already
  std::int64_t bytes = 0;  // bytes of the blobs sent
  // The records' referrers (SBOMs), counted apart from the images above.
  struct Referrers {
    int pushed = 0;          // manifests the registry did not hold
    int uploaded = 0;        // blobs sent or mounted for them
    std::int64_t bytes = 0;  // bytes of the blobs sent
    int listed = 0;          // entries added to fallback tags (registries without the referrers API)
  } referrers;
  // The records themselves (record_artifact), one artifact per record, counted the same way.
  Referrers records;
};

nlohmann::json to_json(const PushSummary& summary);

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

// Pushes each record to repository module/name by digest. The newest pushed record of each module/name
// also goes under the extra tags, and under `latest` when it is the store's latest; older records go by
// digest only. A tag that names the digest already is not written again. Then each record's referrers
// (the store's SBOM of it, and the record itself as a record artifact, made from the record): their
// manifests by digest, listed through the referrers API where the registry has it, else in the fallback
// tag sha256-<hex> (merged with what the tag holds, never overwritten). The store's history is only read;
// where each blob went is noted (Store::note_repository).
Result<PushSummary> push_records(Store& store, const std::vector<Record>& records, const PushTags& tags,
                                 const RegistryAddress& address, const TransferOptions& options);

struct PullOutcome {
  std::string registry;
  std::string repository;
  Descriptor image;     // what the reference names (a manifest or an index), listed in index.json
  Descriptor manifest;  // the manifest for this machine's platform
  int downloaded = 0;   // blobs fetched
  int present = 0;      // blobs the store held already
  std::int64_t bytes = 0;
  int referrers = 0;    // referrers of the image (its SBOM) newly listed in the store
  // A pull of records (pull_records): those the store did not hold, oldest first, and how many it held.
  std::vector<Record> records;
  int records_present = 0;
};

nlohmann::json to_json(const PullOutcome& outcome);

// The annotation on index.json entries of pulled images, which are not records and hold no address.
inline constexpr std::string_view k_pulled_annotation = "dev.arec.pulled";

// Fetches the image `reference` names (default tag "latest") into the store, and lists it in
// index.json by digest, with no name and no address; then its referrers (an SBOM), found through the
// referrers API or the fallback tag, each listed as a referrer of the image.
Result<PullOutcome> pull_image(Store& store, const Reference& reference, const RegistryAddress& address,
                               const TransferOptions& options);

// Whether a pull of records brings the layers too, or only what compose, records and inspect read
// (manifests, configs, records and SBOMs), for a machine that composes and never runs the images.
enum class PullLayers { yes, no };

// Fetches the image `reference` names (default tag "latest"; every platform of an index) with the
// records the registry lists for it (record artifacts), and adds those as records of the store, each
// with its time, revision and configuration as recorded where it was built, oldest first, with its
// SBOM. Every record document is read and checked before anything is written: one that is malformed,
// names another repository or disagrees with its image (digest, size, platform) is refused (exit 3),
// naming it, and the store is left as it was. A record the store holds already is not added again.
// Nothing when the registry lists no record for the image (nothing written either): the caller
// decides whether it is then pulled as an image (pull_image) or passed over.
Result<std::optional<PullOutcome>> pull_records(Store& store, const Reference& reference, const RegistryAddress& address,
                                                const TransferOptions& options, PullLayers layers);

// The repositories of the registry that may hold records (<module>/<name>, rule 2) and the tags a push
// of records puts on them (`latest`, `latest-<config>`), as "repository:tag"; and the referrers tags
// (sha256-<hex>) whose image the registry no longer holds, as "repository@sha256:<hex>".
struct RecordTags {
  std::vector<std::string> references;
  std::vector<std::string> orphaned;
};
Result<RecordTags> record_tags(const RegistryAddress& address, const TransferOptions& options);

enum class VerifyState { present, missing, different };
std::string_view verify_state_name(VerifyState state);

struct VerifyItem {
  Record record;
  VerifyState state = VerifyState::present;
  std::string found;  // what the registry holds under the digest when it is different
  std::vector<std::string> missing_referrers;  // referrers the store keeps that the registry does not list
  std::string missing_record;  // the record artifact of a record whose image is there, when not listed
};

// Asks the registry for each record's manifest by digest in its repository; with a store, also that
// the registry lists every referrer the store keeps for it and the record's own artifact (missing
// otherwise).
Result<std::vector<VerifyItem>> verify_records(const std::vector<Record>& records, const RegistryAddress& address,
                                               const TransferOptions& options, const Store* store = nullptr);

struct CatalogEntry {
  std::string repository;
  std::vector<std::string> tags;
};

// Every repository the registry lists (/v2/_catalog) with its tags, following pagination.
Result<std::vector<CatalogEntry>> read_catalog(const RegistryAddress& address, const TransferOptions& options);

// A --base that is not `oci:DIR[:REF]`: a registry reference, optionally written `docker://REF`.
// Other transports of skopeo's syntax (docker-archive:, containers-storage:, ...) are refused.
Result<Reference> parse_base_reference(std::string_view spec);

// The registry of a reference's domain (empty: the node settings' registry), read when needed.
using RegistryLookup = std::function<Result<RegistryAddress>(std::string_view domain)>;

// A base image for `arec record --base`: `oci:DIR[:REF]` opens a local layout; MODULE/NAME (no domain,
// tag or digest) is the latest record of that name in the store; anything else is a registry
// reference, pulled into the store once: with a digest the store's copy is used when it is complete,
// without network.
Result<BaseImage> open_base(std::string_view spec, Store& store, const RegistryLookup& registry_for,
                            const TransferOptions& options);

}  // namespace arec
