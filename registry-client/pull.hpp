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
  // pull_image under trust: the fingerprint of the trusted key whose signature admitted the image.
  std::string signed_by;
  // A pull of records (pull_records): those the store did not hold, oldest first, and how many it held.
  std::vector<Record> records;
  int records_present = 0;
};

nlohmann::json to_json(const PullOutcome& outcome);

// The annotation on index.json entries of pulled images, which are not records and hold no address.
inline constexpr std::string_view k_pulled_annotation = "dev.arec.pulled";

// Fetches the image `reference` names (default tag "latest") into the store, and lists it in
// index.json by digest, with no name and no address; then its referrers (an SBOM, bundles), found
// through the referrers API or the fallback tag, each listed as a referrer of the image. A tag is
// resolved once: the digest it named then is what is judged, fetched and stored. With a trust policy
// that checks, the image used (of an index, this platform's manifest) must be one a bundle signed by a
// trusted key names under its repository, or nothing is written (exit 4).
Result<PullOutcome> pull_image(Store& store, const Reference& reference, const RegistryAddress& address,
                               const TransferOptions& options);

// Whether a pull of records brings the layers too, or only what compose, records and inspect read
// (manifests, configs, records and SBOMs), for a machine that composes and never runs the images.
enum class PullLayers { yes, no };

// What a module/name refused by the trust policy does to a pull of several: stops it (nothing written),
// or is named and passed over while every other is written (pull --all).
enum class Refusals { fail, skip };

// Under trust, whether a `latest` or `latest-<config>` tag is checked against newer records of its
// configuration that the registry lists (a single pull), or followed as it is (pull --all, which reads
// every listed image and orders them by their signed times anyway).
enum class LatestTags { checked, followed };

struct PullRecordsOptions {
  PullLayers layers = PullLayers::yes;
  Older older = Older::refused;
  Refusals refusals = Refusals::fail;
  LatestTags latest_tags = LatestTags::checked;
};

struct PulledRecords {
  std::vector<std::optional<PullOutcome>> outcomes;  // one per reference
  std::vector<std::string> refused;                  // with Refusals::skip: each refusal, why and what
  std::vector<std::string> kept;                     // records not added, the store's latest being newer
};

// Fetches each image of `references` (default tag "latest"; every platform of an index) with the
// records the registry lists for it (record artifacts), and adds those as records of the store, each
// with its time, revision and configuration as recorded where it was built, with its SBOM: in one
// transaction, ordered by the time recorded. Every record document is read and checked before anything
// is written. Without trust, one that is malformed, names another repository or disagrees with its
// image (digest, size, platform) is refused (exit 3), naming it, and the store is left as it was. With a
// trust policy that checks, such entries are passed over (named), as are records no trusted key signed;
// a reference left with no record a trusted key signed is refused (exit 4), or with Refusals::skip named
// in `refused`. A record further in this machine's future than k_clock_tolerance_seconds is never
// taken. Under trust, a `latest` or `latest-<config>` tag gives way to a newer record of the same
// configuration a trusted key signed that the registry lists (its fallback tags), said with a warning:
// the time inside a signed record decides, not a tag anyone who may push can move. A record the store
// holds already is not added again; records that would make the store's latest of their module/name and
// configuration an older one are not added (named in `kept`) unless the reference names their digest
// or Older::allowed. Nothing for a reference whose image the registry lists no record for (nothing
// written either): the caller decides whether it is then pulled as an image (pull_image) or passed over.
Result<PulledRecords> pull_records(Store& store, const std::vector<Reference>& references,
                                   const RegistryAddress& address, const TransferOptions& options,
                                   const PullRecordsOptions& how);

}  // namespace arec
