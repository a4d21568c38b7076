// What every transfer between the store and a registry takes: push (push.hpp), pull (pull.hpp),
// verify (verify.hpp) and the catalog (catalog.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

#include "oci/oci.hpp"
#include "oci/trust.hpp"
#include "registry-client/progress.hpp"
#include "registry-client/retry.hpp"

namespace arec {

// A push's chunk size when none is chosen (chunk_size 0): a 32nd of the blob, from 8 MiB to 64 MiB. A
// push cut off loses at most the chunk it was sending, so a large blob sent again is a 32nd at most;
// the chunks stay few, since each is a request (and, at distribution, a file synced).
inline constexpr std::int64_t k_min_auto_chunk = std::int64_t{8} << 20;
inline constexpr std::int64_t k_max_auto_chunk = std::int64_t{64} << 20;
inline std::int64_t chunk_size_for(std::int64_t blob_size, std::int64_t chosen) {
  return chosen > 0 ? chosen : std::clamp(blob_size / 32, k_min_auto_chunk, k_max_auto_chunk);
}

struct TransferOptions {
  unsigned jobs = 4;            // blobs moved at once, each on its own connection
  std::int64_t chunk_size = 0;  // blobs larger than this go up in PATCH chunks; 0: chunk_size_for's choice
  ProgressDisplay progress = ProgressDisplay::none;
  RetryPolicy retry{};
  // From an image index, the manifest of this platform (pull, a base); none: this machine's.
  std::optional<Platform> platform;
  // The run's trust policy (oci/trust), asked by pull, verify and push's tag decision; none, or one
  // without keys: nothing checked.
  std::shared_ptr<const TrustPolicy> trust;

  bool checks_trust() const { return trust && trust->checks(); }
  const TrustPolicy& policy() const {
    static const TrustPolicy none;
    return trust ? *trust : none;
  }
};

}  // namespace arec
