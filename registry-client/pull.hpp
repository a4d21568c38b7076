// Pull: an image by its reference (digest-verified, into the store, nothing half-written), or the
// records a registry lists for an image, each checked before the store is touched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "addressing/reference.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"

namespace arec {

struct PullOutcome {
  std::string registry;
  std::string repository;
  Descriptor image;     // what the reference names (a manifest or an index), listed in index.json
  Descriptor manifest;  // the manifest for this machine's platform
  int downloaded = 0;   // blobs fetched
  int present = 0;      // blobs the store held already
  std::int64_t bytes = 0;
  int referrers = 0;  // referrers of the image (its SBOM) newly listed in the store
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

// Fetches each image of `references` (default tag "latest"; every platform of an index) with the
// records the registry lists for it (record artifacts), and adds those as records of the store, each
// with its time, revision and configuration as recorded where it was built, with its SBOM: in one
// transaction, ordered by the time recorded. Every record document is read and checked before anything
// is written: one that is malformed, names another repository, disagrees with its image (digest, size,
// platform) or lies further in this machine's future than k_clock_tolerance_seconds is refused (exit
// 3), naming it, and the store is left as it was. A record the store holds already is not added again.
// Nothing for a reference whose image the registry lists no record for (nothing written either): the
// caller decides whether it is then pulled as an image (pull_image) or passed over.
Result<std::vector<std::optional<PullOutcome>>> pull_records(Store& store, const std::vector<Reference>& references,
                                                             const RegistryAddress& address,
                                                             const TransferOptions& options, PullLayers layers);

}  // namespace arec
