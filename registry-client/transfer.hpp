// What every transfer between the store and a registry takes: push (push.hpp), pull (pull.hpp),
// verify (verify.hpp) and the catalog (catalog.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

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
