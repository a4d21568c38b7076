// Where bytes go: the one interface every byte pipeline stage (hashing, compression, blob files,
// downloads) implements, kept apart so readers of bytes need not pull in the compressors.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "util/error.hpp"

namespace arec {

// Bytes several stages may hold at once without a copy: `bytes` lies within what `owner` keeps alive
// (a block a file was read into, see recorder/file_hashing.hpp).
struct SharedBytes {
  std::shared_ptr<const void> owner;
  std::span<const std::byte> bytes;
};

// finish() flushes whatever the stage buffered; nothing may be written after it.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status write(std::span<const std::byte> data) = 0;
  // The same as write(), for bytes the sink may keep instead of copying: a stage that hands bytes to a
  // thread of its own queues them as they are, and one that only looks at them passes them on so.
  virtual Status write_shared(const SharedBytes& data) { return write(data.bytes); }
  virtual Status finish() = 0;
};

}  // namespace arec
