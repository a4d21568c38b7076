#include "recorder/file_hashing.hpp"

#include <openssl/evp.h>

#include <condition_variable>
#include <stdexcept>

#include "util/work_queue.hpp"

namespace arec {

namespace {

struct EvpDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using EvpContext = std::unique_ptr<EVP_MD_CTX, EvpDeleter>;

EvpContext new_context(const EVP_MD* md) {
  EvpContext ctx(EVP_MD_CTX_new());
  // As Hasher: OpenSSL refusing SHA-1 or SHA-256 is a broken installation, not an input arec can name.
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1)
    throw std::runtime_error("initialising OpenSSL digest failed");
  return ctx;
}

// The digest of what `ctx` was given, in lowercase hex; `ctx` starts again (with `type`) for the next file.
std::string finish_hex(EVP_MD_CTX* ctx, const EVP_MD* type) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EVP_DigestFinal_ex(ctx, md, &size);
  EVP_DigestInit_ex(ctx, type, nullptr);
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{size} * 2);
  for (unsigned i = 0; i < size; ++i) {
    out.push_back(k_hex[md[i] >> 4]);
    out.push_back(k_hex[md[i] & 0xf]);
  }
  return out;
}

}  // namespace

// ---- BlockPool ---------------------------------------------------------------------------------------

struct BlockPool::State {
  std::mutex mutex;
  std::condition_variable returned;
  std::vector<std::unique_ptr<std::vector<std::byte>>> blocks;  // every block made, freed with the state
  std::vector<std::vector<std::byte>*> free;
  std::size_t limit = 0;
};

BlockPool::BlockPool(std::size_t blocks, std::size_t block_size)
    : m_block_size(block_size), m_state(std::make_shared<State>()) {
  m_state->limit = std::max<std::size_t>(blocks, 1);
}

BlockPool::~BlockPool() = default;

std::shared_ptr<std::vector<std::byte>> BlockPool::take() {
  std::vector<std::byte>* block = nullptr;
  {
    std::unique_lock lock(m_state->mutex);
    m_state->returned.wait(lock, [&] { return !m_state->free.empty() || m_state->blocks.size() < m_state->limit; });
    if (m_state->free.empty()) {
      m_state->blocks.push_back(std::make_unique<std::vector<std::byte>>(m_block_size));
      block = m_state->blocks.back().get();
    } else {
      block = m_state->free.back();
      m_state->free.pop_back();
    }
  }
  return {block, [state = m_state](std::vector<std::byte>* b) {
            {
              std::lock_guard lock(state->mutex);
              state->free.push_back(b);
            }
            state->returned.notify_one();
          }};
}

// ---- Checksummer -------------------------------------------------------------------------------------

struct Checksummer::Impl {
  EvpContext sha1 = new_context(EVP_sha1());
  EvpContext sha256 = new_context(EVP_sha256());
};

Checksummer::Checksummer() : m_impl(std::make_unique<Impl>()) {}
Checksummer::~Checksummer() = default;

void Checksummer::update(std::span<const std::byte> data) {
  if (data.empty()) return;
  EVP_DigestUpdate(m_impl->sha1.get(), data.data(), data.size());
  EVP_DigestUpdate(m_impl->sha256.get(), data.data(), data.size());
}

FileChecksums Checksummer::finish() {
  return {finish_hex(m_impl->sha1.get(), EVP_sha1()), finish_hex(m_impl->sha256.get(), EVP_sha256())};
}

FileChecksums checksums_of(std::string_view bytes) {
  Checksummer sums;
  sums.update(std::as_bytes(std::span(bytes.data(), bytes.size())));
  return sums.finish();
}

// ---- ChecksumTable -----------------------------------------------------------------------------------

void ChecksumTable::put(const std::string& path, FileChecksums checksums) {
  std::lock_guard lock(m_mutex);
  m_checksums.insert_or_assign(path, std::move(checksums));
}

void ChecksumTable::put_part(const std::string& path, std::string FileChecksums::*part, std::string hex) {
  std::lock_guard lock(m_mutex);
  m_checksums[path].*part = std::move(hex);
}

std::optional<FileChecksums> ChecksumTable::find(const std::string& path) const {
  std::lock_guard lock(m_mutex);
  const auto it = m_checksums.find(path);
  if (it == m_checksums.end() || it->second.sha1.empty() || it->second.sha256.empty()) return std::nullopt;
  return it->second;
}

std::size_t ChecksumTable::size() const {
  std::lock_guard lock(m_mutex);
  return m_checksums.size();
}

// ---- FileHashing -------------------------------------------------------------------------------------

// One hash over the files' blocks, in order, on a thread of its own. The blocks it waits on are the
// pool's: the pool, not this queue, bounds what is held.
class FileHashing::Worker {
 public:
  Worker(const EVP_MD* md, ChecksumTable& table, std::string FileChecksums::*part)
      : m_md(md), m_ctx(new_context(md)), m_table(table), m_part(part), m_queue([this](Item& item) { take(item); }) {}

  ~Worker() { m_queue.discard(); }  // an unfinished layer: what is left is not wanted

  void add(const SharedBytes& bytes) { m_queue.put(Item{bytes, {}}); }
  void end(const std::string& path) { m_queue.put(Item{{}, path}); }
  void finish() { m_queue.close(); }

 private:
  struct Item {
    SharedBytes bytes;
    std::string ended;  // a file's image path once it is whole, else empty
  };

  void take(const Item& item) {
    if (!item.bytes.bytes.empty()) EVP_DigestUpdate(m_ctx.get(), item.bytes.bytes.data(), item.bytes.bytes.size());
    if (!item.ended.empty()) m_table.put_part(item.ended, m_part, finish_hex(m_ctx.get(), m_md));
  }

  const EVP_MD* m_md;
  EvpContext m_ctx;
  ChecksumTable& m_table;
  std::string FileChecksums::*m_part;
  WorkQueue<Item> m_queue;  // last: its thread stops before the members it uses go
};

FileHashing::FileHashing(ChecksumTable& table) : m_table(table) {}

FileHashing::~FileHashing() = default;

void FileHashing::begin(std::string path, std::int64_t size) {
  m_path = std::move(path);
  m_inline = size <= k_hashed_inline;
  if (!m_inline && !m_sha1) {
    m_sha1 = std::make_unique<Worker>(EVP_sha1(), m_table, &FileChecksums::sha1);
    m_sha256 = std::make_unique<Worker>(EVP_sha256(), m_table, &FileChecksums::sha256);
  }
}

void FileHashing::add(const SharedBytes& bytes) {
  if (m_inline) {
    m_inline_sums.update(bytes.bytes);
    return;
  }
  m_sha1->add(bytes);
  m_sha256->add(bytes);
}

void FileHashing::end() {
  if (m_inline) {
    m_table.put(m_path, m_inline_sums.finish());
    return;
  }
  m_sha1->end(m_path);
  m_sha256->end(m_path);
}

void FileHashing::finish() {
  if (!m_sha1) return;
  m_sha1->finish();
  m_sha256->finish();
}

}  // namespace arec
