#include "recorder/compress.hpp"

#include <libdeflate.h>
#include <zstd.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "util/work_queue.hpp"

namespace arec {

unsigned default_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : cores;
}

namespace {

class PassThrough final : public ByteSink {
 public:
  explicit PassThrough(ByteSink& next) : m_next(next) {}
  Status write(std::span<const std::byte> data) override { return m_next.write(data); }
  Status write_shared(const SharedBytes& data) override { return m_next.write_shared(data); }
  Status finish() override { return m_next.finish(); }

 private:
  ByteSink& m_next;
};

// One libdeflate compressor, owned.
class Deflater {
 public:
  explicit Deflater(int level) : m_compressor(libdeflate_alloc_compressor(level)) {}
  ~Deflater() { libdeflate_free_compressor(m_compressor); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;

  // Compresses `input` as one gzip member into `output`, which keeps its size (the bound) so that reusing
  // it never zeroes memory again; returns the member's length.
  std::size_t gzip(const std::vector<std::byte>& input, std::vector<std::byte>& output) {
    const std::size_t bound = libdeflate_gzip_compress_bound(m_compressor, input.size());
    if (output.size() < bound) output.resize(bound);
    return libdeflate_gzip_compress(m_compressor, input.data(), input.size(), output.data(), output.size());
  }

 private:
  libdeflate_compressor* m_compressor;
};

// Parallel gzip: the input is cut into fixed-size chunks, each compressed by libdeflate into its own gzip
// member, and the members are written in order. Concatenated members are one valid gzip stream
// (RFC 1952 2.2) that Go, zlib and Python read. Chunk boundaries depend only on the input, so the bytes
// are the same for any thread count. Workers live as long as the stream, each with its compressor;
// chunks and their buffers are reused, and at most 4 x threads are in flight, bounding memory. That
// depth keeps both cores busy while the calling thread reads and hashes (2 x left a tenth idle).
class ParallelGzip final : public ByteSink {
 public:
  static constexpr std::size_t k_chunk = std::size_t{1} << 20;
  // libdeflate's level 1 takes two thirds of the time of its level 3 on a tree of binaries, for a
  // layer 6% larger and within 2% of Go's default gzip level (umoci, ko); see bench/record.
  static constexpr int k_default_level = 1;

  ParallelGzip(const CompressOptions& options, ByteSink& next)
      : m_next(next),
        m_level(options.level < 0 ? k_default_level : options.level),
        m_depth(4 * static_cast<std::size_t>(std::max(1U, options.threads))) {
    m_current = take_chunk();
    if (options.threads > 1) {
      for (unsigned i = 0; i < options.threads; ++i) m_workers.emplace_back([this] { work(); });
    }
  }

  ~ParallelGzip() override {
    {
      std::lock_guard lock(m_mutex);
      m_stopping = true;
    }
    m_work.notify_all();
    for (auto& worker : m_workers) worker.join();
  }

  Status write(std::span<const std::byte> data) override {
    while (!data.empty()) {
      auto& input = m_current->input;
      const std::size_t take = std::min(data.size(), k_chunk - input.size());
      input.insert(input.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
      data = data.subspan(take);
      if (input.size() == k_chunk) {
        if (auto s = submit(); !s) return s;
      }
    }
    return {};
  }

  Status finish() override {
    // An empty input still gets one (empty) member, so the stream is a valid gzip file.
    if (!m_current->input.empty() || !m_wrote_any) {
      if (auto s = submit(); !s) return s;
    }
    while (!m_in_flight.empty()) {
      if (auto s = drain_one(); !s) return s;
    }
    return m_next.finish();
  }

 private:
  struct Chunk {
    std::vector<std::byte> input;
    std::vector<std::byte> output;
    std::size_t compressed = 0;
    bool done = false;
  };

  std::unique_ptr<Chunk> take_chunk() {
    if (m_free.empty()) {
      auto chunk = std::make_unique<Chunk>();
      chunk->input.reserve(k_chunk);
      return chunk;
    }
    auto chunk = std::move(m_free.back());
    m_free.pop_back();
    chunk->input.clear();
    chunk->done = false;
    return chunk;
  }

  Status submit() {
    m_wrote_any = true;
    Chunk* chunk = m_current.get();
    if (m_workers.empty()) {
      if (!m_inline) m_inline = std::make_unique<Deflater>(m_level);
      chunk->compressed = m_inline->gzip(chunk->input, chunk->output);
      chunk->done = true;
    }
    {
      std::lock_guard lock(m_mutex);
      m_in_flight.push_back(std::move(m_current));
      if (!chunk->done) m_waiting.push_back(chunk);
    }
    m_work.notify_one();
    m_current = take_chunk();
    if (m_in_flight.size() >= m_depth) return drain_one();
    return {};
  }

  Status drain_one() {
    std::unique_ptr<Chunk> chunk;
    {
      std::unique_lock lock(m_mutex);
      m_done.wait(lock, [&] { return m_in_flight.front()->done; });
      chunk = std::move(m_in_flight.front());
      m_in_flight.pop_front();
    }
    auto s = m_next.write(std::span(chunk->output.data(), chunk->compressed));
    m_free.push_back(std::move(chunk));
    return s;
  }

  void work() {
    Deflater deflater(m_level);
    for (;;) {
      Chunk* chunk = nullptr;
      {
        std::unique_lock lock(m_mutex);
        m_work.wait(lock, [&] { return !m_waiting.empty() || m_stopping; });
        if (m_waiting.empty()) return;
        chunk = m_waiting.front();
        m_waiting.pop_front();
      }
      const std::size_t compressed = deflater.gzip(chunk->input, chunk->output);
      {
        std::lock_guard lock(m_mutex);
        chunk->compressed = compressed;
        chunk->done = true;
      }
      m_done.notify_one();
    }
  }

  ByteSink& m_next;
  int m_level;
  std::size_t m_depth;
  bool m_wrote_any = false;
  std::unique_ptr<Chunk> m_current;
  std::vector<std::unique_ptr<Chunk>> m_free;
  std::unique_ptr<Deflater> m_inline;
  std::mutex m_mutex;
  std::condition_variable m_work;
  std::condition_variable m_done;
  std::deque<std::unique_ptr<Chunk>> m_in_flight;  // in stream order
  std::deque<Chunk*> m_waiting;                    // not yet taken by a worker
  bool m_stopping = false;
  std::vector<std::thread> m_workers;  // last: started once everything they use exists
};

class ZstdStream final : public ByteSink {
 public:
  ZstdStream(const CompressOptions& options, ByteSink& next) : m_next(next), m_ctx(ZSTD_createCCtx()) {
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_compressionLevel, options.level < 0 ? 3 : options.level);
    // Always at least one worker: zstd's multi-threaded format then does not depend on the count.
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_nbWorkers, static_cast<int>(std::max(1U, options.threads)));
    m_out.resize(ZSTD_CStreamOutSize());
  }
  ~ZstdStream() override { ZSTD_freeCCtx(m_ctx); }

  Status write(std::span<const std::byte> data) override { return run(data, ZSTD_e_continue); }
  Status finish() override {
    if (auto s = run({}, ZSTD_e_end); !s) return s;
    return m_next.finish();
  }

 private:
  Status run(std::span<const std::byte> data, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{m_out.data(), m_out.size(), 0};
      const std::size_t remaining = ZSTD_compressStream2(m_ctx, &out, &in, mode);
      if (ZSTD_isError(remaining)) return fail_input(std::string("zstd: ") + ZSTD_getErrorName(remaining));
      if (out.pos > 0) {
        if (auto s = m_next.write(std::span(m_out.data(), out.pos)); !s) return s;
      }
      const bool done = mode == ZSTD_e_end ? remaining == 0 : in.pos == in.size;
      if (done) return {};
    }
  }

  ByteSink& m_next;
  ZSTD_CCtx* m_ctx;
  std::vector<std::byte> m_out;
};

class BackgroundSink final : public ByteSink {
 public:
  BackgroundSink(ByteSink& next, std::size_t max_buffered)
      : m_next(next), m_queue([this](SharedBytes& chunk) { write_out(chunk); }, max_buffered) {}

  Status write(std::span<const std::byte> data) override {
    if (data.empty()) return {};
    auto copy = std::make_shared<std::vector<std::byte>>(data.begin(), data.end());
    const std::span<const std::byte> bytes(*copy);
    return write_shared(SharedBytes{std::move(copy), bytes});
  }

  // Kept as it is: a block read once is hashed and written from the same memory.
  Status write_shared(const SharedBytes& data) override {
    if (data.bytes.empty()) return {};
    if (auto s = status(); !s) return s;
    m_queue.put(data, data.bytes.size());
    return {};
  }

  Status finish() override {
    m_queue.close();
    if (auto s = status(); !s) return s;
    return m_next.finish();
  }

 private:
  // On the queue's thread. After a failure the rest is passed over; the writer hears of it at its next write.
  void write_out(const SharedBytes& chunk) {
    if (!status()) return;
    Status s = m_next.write_shared(chunk);
    if (s) return;
    std::lock_guard lock(m_mutex);
    m_status = std::move(s);
  }

  Status status() {
    std::lock_guard lock(m_mutex);
    return m_status;
  }

  ByteSink& m_next;
  std::mutex m_mutex;
  Status m_status;
  WorkQueue<SharedBytes> m_queue;  // last: its thread stops before the members it uses go
};

}  // namespace

std::unique_ptr<ByteSink> make_background_sink(ByteSink& next, std::size_t max_buffered) {
  return std::make_unique<BackgroundSink>(next, max_buffered);
}

std::unique_ptr<ByteSink> make_compressor(Compression compression, const CompressOptions& options, ByteSink& next) {
  switch (compression) {
    case Compression::gzip: return std::make_unique<ParallelGzip>(options, next);
    case Compression::zstd: return std::make_unique<ZstdStream>(options, next);
    case Compression::none: break;
  }
  return std::make_unique<PassThrough>(next);
}

}  // namespace arec
