#include "recorder/store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace arec {

namespace {

constexpr std::string_view k_layout_file = R"({"imageLayoutVersion":"1.0.0"})";
constexpr std::size_t k_write_buffer = std::size_t{1} << 20;

// See Layout::has_blob.
bool is_complete_blob(const fs::Path& path, std::int64_t size) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_size == size;
}

std::string in_store(const fs::Path& dir, std::string_view what) { return (dir / what).string(); }

bool path_exists(const fs::Path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// True when `dir` holds anything but what a store being created by a concurrent arec may already have.
bool holds_foreign_files(const fs::Path& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto name = entry.path().filename();
    // oci-layout too: another arec may rename it into place after the caller looked for it.
    if (name != "blobs" && name != "arec" && name != "index.json" && name != "oci-layout") return true;
  }
  return false;
}

}  // namespace

// ---- Layout ----------------------------------------------------------------------------------------

Result<Layout> Layout::open(const fs::Path& dir) {
  const auto layout_file = dir / "oci-layout";
  auto text = fs::read_file(layout_file);
  if (!text) return fail_input(dir.string() + ": not an OCI image layout (no readable oci-layout file)");
  auto json = parse_json(*text, layout_file.string());
  if (!json) return fail(json.error());
  if (!json->is_object() || !json->contains("imageLayoutVersion")) {
    return fail_input(layout_file.string() + ": imageLayoutVersion is missing");
  }
  return Layout(dir);
}

fs::Path Layout::blob_path(const Digest& digest) const {
  return m_dir / "blobs" / std::string(digest.algorithm_name()) / digest.hex();
}

bool Layout::has_blob(const Descriptor& descriptor) const { return is_complete_blob(blob_path(descriptor.digest), descriptor.size); }

Result<Index> Layout::read_index() const {
  const auto path = m_dir / "index.json";
  auto text = fs::read_file(path);
  if (!text) return fail(text.error());
  auto json = parse_json(*text, path.string());
  if (!json) return fail(json.error());
  return index_from_json(*json, path.string());
}

Result<std::string> Layout::read_blob(const Descriptor& descriptor) const {
  const auto path = blob_path(descriptor.digest);
  auto bytes = fs::read_file(path);
  if (!bytes) return fail(bytes.error());
  if (static_cast<std::int64_t>(bytes->size()) != descriptor.size) {
    return fail_input(path.string() + ": size " + std::to_string(bytes->size()) + " does not match the descriptor's " +
                      std::to_string(descriptor.size));
  }
  if (digest_of(*bytes, descriptor.digest.algorithm()) != descriptor.digest) {
    return fail_input(path.string() + ": content does not match its digest");
  }
  return bytes;
}

namespace {

// A small document of the layout, parsed by `from_json` under the name of its blob file.
template <typename Document>
Result<Document> read_document(const Layout& layout, const Descriptor& descriptor,
                               Result<Document> (*from_json)(const nlohmann::json&, std::string_view)) {
  auto bytes = layout.read_blob(descriptor);
  if (!bytes) return fail(bytes.error());
  const std::string what = layout.blob_path(descriptor.digest).string();
  auto json = parse_json(*bytes, what);
  if (!json) return fail(json.error());
  return from_json(*json, what);
}

}  // namespace

Result<Manifest> Layout::read_manifest(const Descriptor& manifest) const {
  return read_document(*this, manifest, manifest_from_json);
}

Result<Index> Layout::read_image_index(const Descriptor& index) const {
  return read_document(*this, index, index_from_json);
}

Result<ImageConfig> Layout::read_config(const Manifest& manifest) const {
  return read_document(*this, manifest.config, config_from_json);
}

bool Layout::holds_image(const Descriptor& manifest) const {
  auto read = read_manifest(manifest);
  return read && std::ranges::all_of(blobs_of(*read), [this](const Descriptor& d) { return has_blob(d); });
}

// ---- BlobWriter ------------------------------------------------------------------------------------

BlobWriter::BlobWriter(fs::AtomicFile file, fs::Path blobs_dir, Hashing hashing)
    : m_file(std::move(file)), m_blobs_dir(std::move(blobs_dir)) {
  if (hashing == Hashing::yes) m_hasher.emplace();
  m_buffer.reserve(k_write_buffer);
}

Status BlobWriter::write(std::span<const std::byte> data) {
  if (m_hasher) m_hasher->update(data);
  m_size += static_cast<std::int64_t>(data.size());
  if (m_buffer.size() + data.size() > k_write_buffer) {
    if (auto s = flush(); !s) return s;
  }
  if (data.size() >= k_write_buffer) return m_file.write(data);
  m_buffer.insert(m_buffer.end(), data.begin(), data.end());
  return {};
}

Status BlobWriter::flush() {
  if (m_buffer.empty()) return {};
  auto s = m_file.write(m_buffer);
  m_buffer.clear();
  return s;
}

Status BlobWriter::finish() { return flush(); }

Result<Descriptor> BlobWriter::commit(std::string_view media_type, std::optional<Digest> known) {
  if (auto s = flush(); !s) return fail(s.error());
  Descriptor d;
  d.media_type = std::string(media_type);
  d.size = m_size;
  d.digest = known ? *known : m_hasher->finish();
  const auto target = m_blobs_dir / std::string(d.digest.algorithm_name()) / d.digest.hex();
  // Already there: the temporary goes away.
  if (is_complete_blob(target, d.size)) return d;
  m_file.retarget(target);
  if (auto s = m_file.commit(); !s) return fail(s.error());
  return d;
}

// ---- Store -----------------------------------------------------------------------------------------

namespace {
std::atomic<std::int64_t> g_lock_timeout_ms{k_default_lock_timeout.count()};
}  // namespace

std::chrono::milliseconds Store::lock_timeout() { return std::chrono::milliseconds(g_lock_timeout_ms.load(std::memory_order_relaxed)); }

void Store::set_lock_timeout(std::chrono::milliseconds timeout) { g_lock_timeout_ms.store(timeout.count(), std::memory_order_relaxed); }

Result<Store> Store::open_existing(const fs::Path& dir) {
  auto layout = Layout::open(dir);
  if (!layout) return fail(layout.error());
  return Store(dir);
}

Result<Store> Store::open(const fs::Path& dir) {
  const std::string what = "store " + dir.string();
  if (!path_exists(dir / "oci-layout") && holds_foreign_files(dir)) {
    return fail_input(what + ": exists and is not an OCI image layout; give an empty or new directory");
  }
  for (const auto& sub : {dir / "blobs" / "sha256", dir / "arec" / "tmp", dir / "arec" / "layers"}) {
    if (auto s = fs::make_directories(sub); !s) return fail(std::move(s.error()).context(what));
  }
  if (::access(dir.c_str(), W_OK) != 0) return fail_input(what + ": not writable: " + fs::errno_text(errno));
  Store store(dir);
  auto writers = fs::FileLock::acquire(store.writers_lock_path(), lock_timeout(), fs::LockMode::shared);
  if (!writers) return fail(std::move(writers.error()).context(what + ": waiting for a garbage collection to finish"));
  store.m_writers_lock = std::make_shared<fs::FileLock>(std::move(*writers));
  store.sweep_abandoned_temporaries();
  // Concurrent first recorders may both get here: each writes identical content atomically.
  if (!path_exists(dir / "oci-layout")) {
    if (auto s = fs::write_file_atomic(store.temp_dir(), dir / "oci-layout", k_layout_file); !s) {
      return fail(std::move(s.error()).context(what));
    }
  }
  if (!path_exists(dir / "index.json")) {
    auto lock = fs::FileLock::acquire(store.lock_path(), lock_timeout());
    if (!lock) return fail(lock.error());
    if (!path_exists(dir / "index.json")) {
      if (auto s = store.write_index(Index{}); !s) return fail(std::move(s.error()).context(what));
    }
  }
  return store;
}

std::size_t Store::sweep_abandoned_temporaries() const {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(temp_dir(), ec)) {
    if (fs::is_abandoned_temporary(entry.path()) && ::unlink(entry.path().c_str()) == 0) ++removed;
  }
  return removed;
}

Result<BlobWriter> Store::begin_blob(Hashing hashing) {
  auto file = fs::AtomicFile::create(temp_dir(), {});
  if (!file) return fail(file.error());
  return BlobWriter(std::move(*file), m_dir / "blobs", hashing);
}

Result<Descriptor> Store::put_blob(std::string_view bytes, std::string_view media_type) {
  const Digest digest = digest_of(bytes);
  Descriptor d{std::string(media_type), digest, static_cast<std::int64_t>(bytes.size()), {}, {}, {}, {}};
  if (has_blob(d)) return d;
  auto writer = begin_blob(Hashing::no);
  if (!writer) return fail(writer.error());
  if (auto s = writer->write(std::as_bytes(std::span(bytes.data(), bytes.size()))); !s) return fail(s.error());
  return writer->commit(media_type, digest);
}

Result<Descriptor> Store::copy_blob(const Layout& from, const Descriptor& descriptor) {
  if (has_blob(descriptor)) return descriptor;
  const auto source = from.blob_path(descriptor.digest);
  auto fd = fs::open_read(source);
  if (!fd) return fail(fd.error());
  auto writer = begin_blob(Hashing::no);
  if (!writer) return fail(writer.error());
  Hasher hasher(descriptor.digest.algorithm());
  std::vector<std::byte> buffer(k_write_buffer);
  std::int64_t size = 0;
  for (;;) {
    auto n = fs::read_some(fd->get(), buffer, source);
    if (!n) return fail(n.error());
    if (*n == 0) break;
    const auto chunk = std::span(buffer.data(), *n);
    hasher.update(chunk);
    size += static_cast<std::int64_t>(*n);
    if (auto s = writer->write(chunk); !s) return fail(s.error());
  }
  if (size != descriptor.size || hasher.finish() != descriptor.digest) {
    return fail_input(source.string() + ": content does not match " + descriptor.digest.str());
  }
  return writer->commit(descriptor.media_type, descriptor.digest);
}

std::optional<Descriptor> read_descriptor_file(const fs::Path& path) {
  auto text = fs::read_file(path);
  if (!text) return std::nullopt;
  auto json = parse_json(*text, path.string());
  if (!json) return std::nullopt;
  auto d = descriptor_from_json(*json, path.string());
  if (!d) return std::nullopt;
  return *d;
}

std::optional<Descriptor> Store::cached_layer(const Digest& diff_id, Compression compression) const {
  auto d = read_descriptor_file(layer_cache_path(diff_id, compression));
  if (!d) return std::nullopt;
  if (!has_blob(*d)) return std::nullopt;
  return *d;
}

void Store::remember_layer(const Digest& diff_id, Compression compression, const Descriptor& layer) const {
  auto text = canonical_json(to_json(layer));
  // Only a shortcut: failing to remember costs a recompression next time, nothing else.
  if (text) (void)fs::write_file_atomic(temp_dir(), layer_cache_path(diff_id, compression), *text);
}

fs::Path Store::layer_cache_path(const Digest& diff_id, Compression compression) const {
  return layer_cache_dir() / (diff_id.hex() + "." + std::string(compression_name(compression)));
}

Result<std::vector<Record>> Store::records(History history) const {
  auto index = read_index();
  if (!index) return fail(index.error());
  std::vector<Record> out;
  for (const auto& d : index->manifests) {
    if (history == History::latest && d.annotation(annotation::k_ref_name).empty()) continue;
    auto record = record_from_descriptor(d);
    if (!record) continue;
    if (history == History::latest && d.annotation(annotation::k_ref_name) != record->repository()) continue;
    out.push_back(std::move(*record));
  }
  return out;
}

Result<std::optional<Record>> Store::latest(std::string_view module, std::string_view name) const {
  auto all = records(History::latest);
  if (!all) return fail(all.error());
  for (auto& r : *all) {
    if (r.module == module && r.name == name) return std::optional<Record>(std::move(r));
  }
  return std::optional<Record>();
}

Result<std::vector<Descriptor>> Store::referrers(const Digest& subject) const {
  auto index = read_index();
  if (!index) return fail(index.error());
  std::vector<Descriptor> out;
  const std::string digest = subject.str();
  for (const auto& d : index->manifests) {
    if (d.annotation(annotation::k_subject) == digest) out.push_back(d);
  }
  return out;
}

Result<Store::Commit> Store::commit(const Record& record, const std::vector<Descriptor>& referrers) const {
  auto lock = fs::FileLock::acquire(lock_path(), lock_timeout());
  if (!lock) return fail(lock.error());
  auto index = read_index();
  if (!index) return fail(index.error());
  const std::string ref = record.repository();
  std::optional<Record> existing;
  for (const auto& d : index->manifests) {
    if (d.annotation(annotation::k_ref_name) != ref) continue;
    if (auto r = record_from_descriptor(d); r && r->manifest.digest == record.manifest.digest) existing = std::move(r);
  }
  if (!existing) {
    for (auto& d : index->manifests) {
      if (d.annotation(annotation::k_ref_name) == ref) d.annotations.erase(std::string(annotation::k_ref_name));
    }
    index->manifests.push_back(to_descriptor(record, Latest::yes));
  }
  bool listed_referrer = false;
  for (const auto& referrer : referrers) {
    const bool listed = std::any_of(index->manifests.begin(), index->manifests.end(),
                                    [&](const Descriptor& d) { return d.digest == referrer.digest; });
    if (!listed) index->manifests.push_back(referrer);
    listed_referrer = listed_referrer || !listed;
  }
  if (existing && !listed_referrer) return Commit{*existing, false};
  if (auto s = write_index(*index); !s) return fail(s.error());
  if (existing) return Commit{*existing, false};
  return Commit{record, true};
}

Result<bool> Store::keep(const Descriptor& image) const {
  auto lock = fs::FileLock::acquire(lock_path(), lock_timeout());
  if (!lock) return fail(lock.error());
  auto index = read_index();
  if (!index) return fail(index.error());
  for (const auto& d : index->manifests) {
    if (d.digest == image.digest) return false;
  }
  index->manifests.push_back(image);
  if (auto s = write_index(*index); !s) return fail(s.error());
  return true;
}

Status Store::write_index(const Index& index) const {
  auto text = canonical_json(to_json(index));
  if (!text) return fail(std::move(text.error()).context("writing " + in_store(m_dir, "index.json")));
  return fs::write_file_atomic(temp_dir(), m_dir / "index.json", *text);
}

}  // namespace arec
