// What every transfer between the store and a registry takes: push (push.hpp), pull (pull.hpp),
// verify (verify.hpp) and the catalog (catalog.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "oci/oci.hpp"
#include "oci/trust.hpp"
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
  // Pull: the keys whose signatures are trusted (oci/trust); none or empty: nothing checked.
  std::shared_ptr<const TrustedKeys> trusted;
};

}  // namespace arec
