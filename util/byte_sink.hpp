// Where bytes go: the one interface every byte pipeline stage (hashing, compression, blob files,
// downloads) implements, kept apart so readers of bytes need not pull in the compressors.
#pragma once

#include <cstddef>
#include <span>

#include "util/error.hpp"

namespace arec {

// finish() flushes whatever the stage buffered; nothing may be written after it.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(std::span<const std::byte> data) = 0;
  virtual Status finish() = 0;
};

}  // namespace arec
