// What every transfer between the store and a registry takes: push (push.hpp), pull (pull.hpp),
// verify (verify.hpp) and the catalog (catalog.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "oci/oci.hpp"
#include "registry-client/progress.hpp"
#include "registry-client/retry.hpp"

namespace arec {

inline constexpr std::int64_t k_default_chunk_size = std::int64_t{64} << 20;

struct TransferOptions {
  unsigned jobs = 4;                               // blobs moved at once, each on its own connection
  std::int64_t chunk_size = k_default_chunk_size;  // blobs larger than this go up in PATCH chunks
  ProgressDisplay progress = ProgressDisplay::none;
  RetryPolicy retry{};
  // From an image index, the manifest of this platform (pull, a base); none: this machine's.
  std::optional<Platform> platform;
};

}  // namespace arec
