// Reading a layer's files once. The blocks a file is read into are shared by every stage that needs its
// bytes (the tar, the tar's hash, the blob file, the SBOM's checksums of the file) without a copy, and
// the SBOM's SHA-1 and SHA-256 of each file are hashed from those same blocks, each on a thread of its
// own, while the reader goes on reading and the tar's hash runs beside them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/byte_sink.hpp"
#include "util/error.hpp"

namespace arec {

// A fixed number of equal blocks, reused. A reader takes one, fills it and shares it (SharedBytes);
// it comes back when the last stage holding it lets go. Taking one waits while all are out, which
// bounds what a pipeline of stages holds to the pool, however their speeds differ. Blocks are
// allocated when first needed, so a small layer uses one or two.
class BlockPool {
 public:
  BlockPool(std::size_t blocks, std::size_t block_size);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  std::size_t block_size() const { return m_block_size; }
  // A free block, `block_size()` bytes: the caller's to fill until it shares it.
  std::shared_ptr<std::vector<std::byte>> take();

 private:
  struct State;
  std::size_t m_block_size;
  std::shared_ptr<State> m_state;  // shared with the blocks out, which may outlive the pool
};

// What the SBOM lists of a file of no package: its SHA-1 and SHA-256, lowercase hex.
struct FileChecksums {
  std::string sha1;
  std::string sha256;

  friend bool operator==(const FileChecksums&, const FileChecksums&) = default;
};

// SHA-1 and SHA-256 of bytes given piece by piece (OpenSSL EVP).
class Checksummer {
 public:
  Checksummer();
  ~Checksummer();
  Checksummer(const Checksummer&) = delete;
  Checksummer& operator=(const Checksummer&) = delete;
  void update(std::span<const std::byte> data);
  // The checksums of everything given since the last finish(); it starts again empty.
  FileChecksums finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

FileChecksums checksums_of(std::string_view bytes);

// Checksums by image path ("usr/local/bin/app"), filled by the layers packed at once and read by the
// SBOM once they are all packed.
class ChecksumTable {
 public:
  void put(const std::string& path, FileChecksums checksums);
  std::optional<FileChecksums> find(const std::string& path) const;
  std::size_t size() const;

 private:
  friend class FileHashing;
  void put_part(const std::string& path, std::string FileChecksums::*part, std::string hex);

  mutable std::mutex m_mutex;
  std::map<std::string, FileChecksums> m_checksums;
};

// The checksums of the files a reader reads, from the blocks it reads them into: begin(), add() each
// block in order, end(); a file's checksums are in the table once finish() has returned. A large file's
// SHA-1 and SHA-256 are hashed each on a thread of its own, from the shared blocks; a small one's by
// the caller, where handing it over would cost more than hashing it.
class FileHashing {
 public:
  explicit FileHashing(ChecksumTable& table);
  ~FileHashing();
  FileHashing(const FileHashing&) = delete;
  FileHashing& operator=(const FileHashing&) = delete;

  // A file of `size` bytes, at `path` in the image, begins.
  void begin(std::string path, std::int64_t size);
  void add(const SharedBytes& bytes);
  // The file is whole: its checksums go to the table.
  void end();
  // Waits until every file ended is in the table. Nothing may be added afterwards.
  void finish();

  // Files up to this size are hashed by the caller.
  static constexpr std::int64_t k_hashed_inline = std::int64_t{256} << 10;

 private:
  class Worker;
  ChecksumTable& m_table;
  std::string m_path;
  bool m_inline = true;
  Checksummer m_inline_sums;
  std::unique_ptr<Worker> m_sha1;  // started with the first large file
  std::unique_ptr<Worker> m_sha256;
};

}  // namespace arec
