// Byte pipelines: a layer is a tar stream pushed through a compressor into a blob writer.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "oci/digest.hpp"
#include "oci/oci.hpp"
#include "util/byte_sink.hpp"
#include "util/error.hpp"

namespace arec {

struct CompressOptions {
  // Worker threads. The output is the same for every count: gzip works on fixed-size chunks, and zstd
  // always runs in its multi-threaded mode, whose output does not depend on the number of workers.
  unsigned threads = 1;
  int level = -1;  // -1: arec's default for the format (gzip 1 with libdeflate, zstd 3)
};

// Hashes what passes on to `next`: a layer's DiffID is the digest of its tar stream.
class HashingSink final : public ByteSink {
 public:
  explicit HashingSink(ByteSink& next) : m_next(next) {}
  Status write(std::span<const std::byte> data) override {
    m_hasher.update(data);
    return m_next.write(data);
  }
  Status write_shared(const SharedBytes& data) override {
    m_hasher.update(data.bytes);
    return m_next.write_shared(data);
  }
  Status finish() override { return m_next.finish(); }
  // The digest of everything written; once, after finish().
  Digest digest() { return m_hasher.finish(); }

 private:
  ByteSink& m_next;
  Hasher m_hasher;
};

// A sink that compresses into `next`. For Compression::none it passes bytes straight through.
std::unique_ptr<ByteSink> make_compressor(Compression compression, const CompressOptions& options, ByteSink& next);

// A sink that hands bytes to a thread of its own, which writes them into `next`: the caller goes on
// (hashing, compressing) while `next` waits for the disk. At most `max_buffered` bytes wait in between.
// Bytes given by write() are copied; those given by write_shared() are queued and passed on as they are.
std::unique_ptr<ByteSink> make_background_sink(ByteSink& next, std::size_t max_buffered = std::size_t{8} << 20);

// Threads to use when the user did not say (neither --threads nor AREC_THREADS): the machine's cores.
unsigned default_threads();

}  // namespace arec
