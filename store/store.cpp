#include "store/store.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <set>

#include "store/store_internal.hpp"

namespace arec {

namespace {

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

// ---- Store -----------------------------------------------------------------------------------------

namespace {
std::atomic<std::int64_t> g_lock_timeout_ms{k_default_lock_timeout.count()};
}  // namespace

std::chrono::milliseconds Store::lock_timeout() {
  return std::chrono::milliseconds(g_lock_timeout_ms.load(std::memory_order_relaxed));
}

void Store::set_lock_timeout(std::chrono::milliseconds timeout) {
  g_lock_timeout_ms.store(timeout.count(), std::memory_order_relaxed);
}

namespace {
std::string& default_config_setting() {
  static std::string config(k_default_config);
  return config;
}
}  // namespace

const std::string& Store::default_config() { return default_config_setting(); }

void Store::set_default_config(std::string config) { default_config_setting() = std::move(config); }

Status Store::check_own_directories(const fs::Path& dir) {
  for (const char* sub :
       {"blobs", "blobs/sha256", "arec", "arec/tmp", "arec/layers", "arec/mounts", "arec/uploads", "arec/built"}) {
    const auto path = dir / sub;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;
      return fail_input("store " + dir.string() + ": " + path.string() + ": " + fs::errno_text(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return fail_input("store " + dir.string() + ": " + path.string() + " is " + fs::file_kind(st.st_mode) +
                        " where arec keeps a directory; arec follows no link it did not make (remove it)");
    }
  }
  return {};
}

Result<Store> Store::open_existing(const fs::Path& dir) {
  auto layout = Layout::open(dir);
  if (!layout) return fail(layout.error());
  if (auto s = check_own_directories(dir); !s) return fail(s.error());
  Store store(dir);
  // Without the database (a store of format 1), readers read index.json as it is.
  if (path_exists(store.history_path())) {
    auto db = HistoryDb::open(store.history_path(), DbAccess::read);
    if (!db) return fail(db.error());
    store.m_history = std::move(*db);
  }
  return store;
}

Result<Store> Store::open(const fs::Path& dir) {
  const std::string what = "store " + dir.string();
  if (!path_exists(dir / "oci-layout") && holds_foreign_files(dir)) {
    return fail_input(what + ": exists and is not an OCI image layout; give an empty or new directory");
  }
  // Before creating anything: creating arec/tmp under a planted link would create it elsewhere.
  if (auto s = check_own_directories(dir); !s) return fail(s.error());
  for (const auto& sub : {dir / "blobs" / "sha256", dir / "arec" / "tmp", dir / "arec" / "layers"}) {
    if (auto s = fs::make_directories(sub); !s) return fail(std::move(s.error()).context(what));
  }
  // Again: a link planted between the check and the creation.
  if (auto s = check_own_directories(dir); !s) return fail(s.error());
  if (::access(dir.c_str(), W_OK) != 0) return fail_input(what + ": not writable: " + fs::errno_text(errno));
  Store store(dir);
  auto writers = fs::FileLock::acquire(store.writers_lock_path(), lock_timeout(), fs::LockMode::shared);
  if (!writers) return fail(std::move(writers.error()).context(what + ": waiting for a garbage collection to finish"));
  store.m_writers_lock = std::make_shared<fs::FileLock>(std::move(*writers));
  store.sweep_abandoned_temporaries();
  // Concurrent first recorders may both get here: each writes identical content atomically.
  if (!path_exists(dir / "oci-layout")) {
    if (auto s = fs::write_file_atomic(store.temp_dir(), dir / "oci-layout", k_oci_layout_document); !s) {
      return fail(std::move(s.error()).context(what));
    }
  }
  if (auto s = store.open_history(); !s) return fail(std::move(s.error()));
  // A writer killed between its commit and rewriting index.json left the view behind.
  if (auto s = store.catch_up_view(); !s) return fail(std::move(s.error()).context(what));
  return store;
}

std::size_t Store::sweep_abandoned_temporaries() {
  // A link in place of arec/tmp is refused when the store is opened; here it is simply not swept.
  auto scan = fs::scan_temporaries(temp_dir(), fs::RemoveAbandoned::yes);
  return scan ? scan->removed : 0;
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
  auto fd = from.open_blob(descriptor.digest);
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
  auto d = parse_document<Descriptor>(*text, path.string());
  if (!d) return std::nullopt;
  return *d;
}

std::optional<Descriptor> Store::cached_layer(const Digest& diff_id, Compression compression) const {
  auto d = read_descriptor_file(layer_cache_path(diff_id, compression));
  if (!d) return std::nullopt;
  if (!has_blob(*d)) return std::nullopt;
  return *d;
}

void Store::remember_layer(const Digest& diff_id, Compression compression, const Descriptor& layer) {
  auto text = canonical_json(to_json(layer));
  // Only a shortcut: failing to remember costs a recompression next time, nothing else.
  if (text) (void)fs::write_file_atomic(temp_dir(), layer_cache_path(diff_id, compression), *text);
}

fs::Path Store::files_shortcut_path(const Digest& identity) const {
  return layer_cache_dir() / ("files-" + identity.hex() + ".diffid");
}

bool Store::is_files_shortcut(const fs::Path& path) {
  const std::string name = path.filename().string();
  return name.starts_with("files-") && name.ends_with(".diffid");
}

fs::Path Store::layer_cache_path(const Digest& diff_id, Compression compression) const {
  return layer_cache_dir() / (diff_id.hex() + "." + std::string(compression_name(compression)));
}

namespace {
// Enough for a blob that many services share to find one to mount from, small enough to read per blob.
constexpr std::size_t k_mount_hints = 8;
}  // namespace

std::vector<std::string> Store::repositories_holding(const Digest& digest) const {
  std::vector<std::string> out;
  auto text = fs::read_file(mount_hints_dir() / digest.hex());
  if (!text) return out;
  std::string_view rest = *text;
  while (!rest.empty() && out.size() < k_mount_hints) {
    const auto end = rest.find('\n');
    const auto line = rest.substr(0, end);
    if (!line.empty()) out.emplace_back(line);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  return out;
}

void Store::note_repository(const Digest& digest, std::string_view repository) {
  if (repository.empty() || repository.find('\n') != std::string_view::npos) return;
  auto known = repositories_holding(digest);
  if (!known.empty() && known.front() == repository) return;  // nothing to write
  std::erase(known, std::string(repository));
  known.insert(known.begin(), std::string(repository));
  if (known.size() > k_mount_hints) known.resize(k_mount_hints);
  std::string text;
  for (const auto& r : known) text += r + "\n";
  // Only a hint: failing to note it (a read-only store, two pushes noting at once) costs an upload later.
  if (fs::make_directories(mount_hints_dir()))
    (void)fs::write_file_atomic(temp_dir(), mount_hints_dir() / digest.hex(), text);
}

void Store::note_built(const Digest& manifest) {
  if (built_here(manifest)) return;
  if (fs::make_directories(built_notes_dir()))
    (void)fs::write_file_atomic(temp_dir(), built_notes_dir() / manifest.hex(), "");
}

bool Store::built_here(const Digest& manifest) const {
  struct stat st {};
  return ::lstat((built_notes_dir() / manifest.hex()).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

namespace {

// The records of a format-1 index.json (the whole history, the latest carrying ref.name).
std::vector<Record> legacy_records(const Index& index, History history) {
  std::vector<Record> out;
  for (const auto& d : index.manifests) {
    if (history == History::latest && d.annotation(annotation::k_ref_name).empty()) continue;
    auto record = record_from_descriptor(d);
    if (!record) continue;
    if (history == History::latest && d.annotation(annotation::k_ref_name) != record->repository()) continue;
    out.push_back(std::move(*record));
  }
  return out;
}

}  // namespace

Status Store::open_history() {
  if (m_history) return {};
  const auto path = history_path();
  if (!path_exists(path)) {
    auto lock = fs::FileLock::acquire(lock_path(), lock_timeout());
    if (!lock) return fail(lock.error());
    if (!path_exists(path)) {
      // Format 1, or a new store: the database is built beside, then renamed into place, so a killed
      // conversion leaves the store as it was and the next writer starts again.
      Index legacy;
      if (path_exists(m_dir / "index.json")) {
        auto index = read_index();
        if (!index) return fail(std::move(index.error()).context("converting store " + m_dir.string()));
        legacy = std::move(*index);
      }
      const auto building = m_dir / "arec" / "history.db.new";
      if (auto s = HistoryDb::create(building, legacy); !s) {
        return fail(std::move(s.error()).context("converting store " + m_dir.string()));
      }
      if (::rename(building.c_str(), path.c_str()) != 0) {
        return fail_input("converting store " + m_dir.string() + ": renaming " + building.string() + ": " +
                          fs::errno_text(errno));
      }
      if (fs::syncing()) {
        if (auto s = fs::fsync_directory(path.parent_path()); !s) return s;
      }
      auto db = HistoryDb::open(path, DbAccess::write);
      if (!db) return fail(db.error());
      m_history = std::move(*db);
      // The lock taken for the conversion is the writer's.
      return StoreWriter(*this, std::move(*lock)).write_view();
    }
  }
  auto db = HistoryDb::open(path, DbAccess::write);
  if (!db) return fail(db.error());
  m_history = std::move(*db);
  return {};
}

Result<StoreWriter> Store::writer(BlobWriters blob_writers) {
  std::optional<fs::FileLock> excluded;
  if (blob_writers == BlobWriters::excluded) {
    // Before the lock, as every writer of blobs takes them: one holding writers.lock may be waiting
    // for the lock to commit.
    auto writers = fs::FileLock::acquire(writers_lock_path(), lock_timeout(), fs::LockMode::exclusive);
    if (!writers) return fail(std::move(writers.error()).context("waiting for recorders to finish"));
    excluded = std::move(*writers);
  }
  if (auto s = open_history(); !s) return fail(s.error());
  auto lock = fs::FileLock::acquire(lock_path(), lock_timeout());
  if (!lock) return fail(lock.error());
  return StoreWriter(*this, std::move(*lock), std::move(excluded));
}

namespace {

// An image index over the records of `set` (two or more platforms) in the set's order (by platform),
// so that the same set always gives the same bytes.
Result<Store::LatestImage> index_over(std::vector<Record> set) {
  Store::LatestImage image;
  Index index;
  for (const auto& r : set) {
    Descriptor d = r.manifest;
    d.annotations.clear();
    d.urls.clear();
    index.manifests.push_back(std::move(d));
  }
  auto bytes = canonical_json(to_json(index));
  if (!bytes) return fail(bytes.error());
  image.descriptor = Descriptor{
      std::string(media_type::k_index), digest_of(*bytes), static_cast<std::int64_t>(bytes->size()), {}, {}, {}, {}};
  image.index = std::move(*bytes);
  image.platforms = std::move(set);
  return image;
}

// The image of module/name: its latest record alone, or the index over `set` when it holds two or more.
Result<Store::LatestImage> image_of(Record latest, std::vector<Record> set) {
  if (set.size() >= 2) return index_over(std::move(set));
  Store::LatestImage image;
  image.descriptor = latest.manifest;
  image.platforms.push_back(std::move(latest));
  return image;
}

}  // namespace

Result<std::optional<Store::LatestImage>> Store::latest_image(std::string_view module, std::string_view name) const {
  auto newest = latest(module, name);
  if (!newest) return fail(newest.error());
  if (!*newest) return std::optional<LatestImage>();
  std::vector<Record> set;
  if (m_history) {
    auto platforms = m_history->platform_set(module, name);
    if (!platforms) return fail(platforms.error());
    set = std::move(*platforms);
  }
  auto image = image_of(std::move(**newest), std::move(set));
  if (!image) return fail(image.error());
  return std::optional<LatestImage>(std::move(*image));
}

Result<std::optional<Store::LatestImage>> Store::latest_image(std::string_view module, std::string_view name,
                                                              const std::optional<std::string>& config) const {
  auto image = latest_image(module, name);
  if (!image || !*image || !config) return image;
  // The image of module/name is of this configuration already: nothing else to do.
  if (std::ranges::all_of((*image)->platforms, [&](const Record& r) { return r.config == *config; })) return image;
  auto history = history_of(module, name);
  if (!history) return fail(history.error());
  const Record* newest = newest_of(*history, ChosenConfig{config, {}});
  if (newest == nullptr) return std::optional<LatestImage>();
  // Each platform of the image, as this configuration last recorded it.
  std::vector<Record> set;
  for (const auto& p : (*image)->platforms) {
    if (!p.manifest.platform) continue;
    for (auto r = history->rbegin(); r != history->rend(); ++r) {
      if (r->config == *config && r->manifest.platform &&
          platform_text(*r->manifest.platform) == platform_text(*p.manifest.platform)) {
        set.push_back(*r);
        break;
      }
    }
  }
  auto chosen = image_of(*newest, set.size() >= 2 ? std::move(set) : std::vector<Record>());
  if (!chosen) return fail(chosen.error());
  return std::optional<LatestImage>(std::move(*chosen));
}

Result<std::vector<Record>> Store::config_latest_of(std::string_view module, std::string_view name) const {
  if (m_history) return m_history->config_latest_of(module, name);
  auto latest = this->latest(module, name);
  if (!latest) return fail(latest.error());
  return *latest ? std::vector<Record>{**latest} : std::vector<Record>();
}

Result<std::optional<Record>> Store::latest_of_config(std::string_view module, std::string_view name,
                                                      std::string_view config) const {
  auto lines = config_latest_of(module, name);
  if (!lines) return fail(lines.error());
  for (auto& r : *lines) {
    if (r.config == config) return std::optional<Record>(std::move(r));
  }
  return std::optional<Record>();
}

Status Store::for_each_config_latest(const HistoryDb::RecordVisitor& visit) const {
  if (m_history) return m_history->for_each_config_latest(visit);
  return for_each_record(History::latest, visit);
}

Result<Store::Chosen> Store::latest(std::string_view module, std::string_view name, const ConfigChoice& choice) const {
  auto lines = config_latest_of(module, name);
  if (!lines) return fail(lines.error());
  if (lines->empty()) return Chosen{};
  std::vector<std::string> recorded;
  for (const auto& r : *lines) recorded.push_back(r.config);
  auto chosen = choose_config(std::string(module) + "/" + std::string(name), recorded, choice);
  if (!chosen) return fail(chosen.error());
  if (!chosen->config) {
    // One configuration: the latest, exactly as before configurations were told apart.
    auto latest = this->latest(module, name);
    if (!latest) return fail(latest.error());
    return Chosen{std::move(*latest), {}};
  }
  for (auto& r : *lines) {
    if (r.config == *chosen->config) return Chosen{std::move(r), std::move(chosen->note)};
  }
  return Chosen{};
}

Result<std::vector<Record>> Store::latest_records(const ConfigChoice& choice, std::vector<std::string>& notes) const {
  auto lines = config_latest_records(ConfigChoice{std::nullopt, choice.default_config});
  if (!lines) return fail(lines.error());
  std::map<std::string, std::vector<std::string>> recorded;  // repository -> its configurations
  for (const auto& r : *lines) recorded[r.repository()].push_back(r.config);
  std::map<std::string, std::optional<std::string>> chosen;  // repository -> its configuration, when it has one
  for (auto& [repository, configs] : recorded) {
    std::ranges::sort(configs);
    auto c = choose_config(repository, configs, choice);
    if (!c) {
      if (!choice.asked) notes.push_back(c.error().message + "; left out");
      continue;
    }
    if (!c->note.empty()) notes.push_back(std::move(c->note));
    chosen.emplace(repository, std::move(c->config));
  }
  // In place: a store of one configuration each keeps every line, and moves none.
  std::erase_if(*lines, [&](const Record& r) {
    const auto it = chosen.find(r.repository());
    return it == chosen.end() || (it->second && r.config != *it->second);
  });
  // Where one configuration is recorded, its newest is the latest (the same entry), so this is the
  // latest of each module/name in the order they became latest, as before configurations were told apart.
  return std::move(*lines);
}

Result<std::vector<Record>> Store::config_latest_records(const ConfigChoice& choice) const {
  std::vector<Record> out;
  auto s = for_each_config_latest([&](Record&& r) -> Status {
    if (!choice.asked || r.config == *choice.asked) out.push_back(std::move(r));
    return {};
  });
  if (!s) return fail(s.error());
  return out;
}

Result<std::map<std::string, Store::LatestImage>> Store::indexes() const {
  std::map<std::string, LatestImage> out;
  if (!m_history) return out;
  auto sets = m_history->platform_sets();
  if (!sets) return fail(sets.error());
  for (auto& [repository, set] : *sets) {
    auto image = index_over(std::move(set));
    if (!image) return fail(image.error());
    out.emplace(repository, std::move(*image));
  }
  return out;
}

Result<std::vector<Record>> Store::records(History history) const {
  std::vector<Record> out;
  auto s = for_each_record(history, [&](Record&& r) -> Status {
    out.push_back(std::move(r));
    return {};
  });
  if (!s) return fail(s.error());
  return out;
}

Status Store::for_each_record(History history, const HistoryDb::RecordVisitor& visit) const {
  if (m_history)
    return history == History::latest ? m_history->for_each_latest(visit) : m_history->for_each_record(visit);
  auto index = read_index();
  if (!index) return fail(index.error());
  for (auto& r : legacy_records(*index, history)) {
    if (auto s = visit(std::move(r)); !s) return s;
  }
  return {};
}

Result<std::vector<Record>> Store::history_of(std::string_view module, std::string_view name) const {
  if (m_history) return m_history->history_of(module, name);
  auto all = records(History::all);
  if (!all) return fail(all.error());
  std::erase_if(*all, [&](const Record& r) { return r.module != module || r.name != name; });
  return all;
}

Result<std::optional<Record>> Store::latest(std::string_view module, std::string_view name) const {
  if (m_history) return m_history->latest(module, name);
  auto all = records(History::latest);
  if (!all) return fail(all.error());
  for (auto& r : *all) {
    if (r.module == module && r.name == name) return std::optional<Record>(std::move(r));
  }
  return std::optional<Record>();
}

Result<std::vector<Descriptor>> Store::referrers(const Digest& subject) const {
  const std::string digest = subject.str();
  if (m_history) return m_history->others(digest);
  auto index = read_index();
  if (!index) return fail(index.error());
  std::vector<Descriptor> out;
  for (const auto& d : index->manifests) {
    if (d.annotation(annotation::k_subject) == digest) out.push_back(d);
  }
  return out;
}

Result<std::vector<Store::LatestImage>> Store::indexes_of(const std::vector<Record>& records) const {
  auto all_latest = this->records(History::latest);
  if (!all_latest) return fail(all_latest.error());
  std::set<std::string> latest_ids;
  for (const auto& r : *all_latest) latest_ids.insert(r.identity());
  std::vector<Record> latest;
  for (const auto& r : records) {
    if (latest_ids.contains(r.identity())) latest.push_back(r);
  }
  auto all = indexes();
  if (!all) return fail(all.error());
  std::vector<LatestImage> out;
  for (const auto& r : latest) {
    if (auto found = all->find(r.repository()); found != all->end()) out.push_back(std::move(found->second));
  }
  return out;
}

Result<std::vector<Record>> Store::with_platforms(std::vector<Record> records) const {
  auto indexes = indexes_of(records);
  if (!indexes) return fail(indexes.error());
  return with_platforms(std::move(records), *indexes);
}

std::vector<Record> Store::with_platforms(std::vector<Record> records, const std::vector<LatestImage>& indexes) {
  std::set<std::string> have;
  for (const auto& r : records) have.insert(r.identity());
  for (const auto& image : indexes) {
    for (const auto& p : image.platforms) {
      if (have.insert(p.identity()).second) records.push_back(p);
    }
  }
  return records;
}

}  // namespace arec
