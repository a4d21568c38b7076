// The store: an OCI image layout directory (image-layout.md) that is also arec's record book.
//
//   oci-layout, index.json, blobs/<alg>/<hex>   the layout, readable by skopeo, umoci and any OCI tool
//   arec/history.db                             every record ever made (SQLite, see history.hpp)
//   arec/lock                                   serialises writers of the history and index.json (flock)
//   arec/tmp/                                   temporaries, renamed into place when complete
//   arec/layers/<hex>.<compression>             compressed layer known for a DiffID, to skip recompression
//   arec/mounts/<hex>                           repositories a push or pull found holding a blob, to mount from
//   arec/uploads/<hex>-<repository's>           an upload session a push has open at a registry (uploads.hpp)
//
// The history database is the source of truth. index.json is the OCI view derived from it: the image
// of each module/name as arec composes it (the latest of the default configuration, where it has
// records of several; carrying org.opencontainers.image.ref.name = module/name, which tools look images
// up by), each other configuration's latest under module/name:latest-<config> (the tag push gives it),
// the pulled images and the referrers of those, so its size follows the number of module/names and
// configurations, not of builds. A writer commits to the database in one transaction, then rewrites index.json
// atomically; index.json names the database generation it was derived from, so a view left behind by a
// killed writer is found and rewritten by the next writer (or `arec check --repair`).
//
// A store made before the database (format 1: index.json held the whole history) is converted by its
// first writer, under the lock; readers read it as it is until then.
//
// Reading and writing are two types. `Store` reads (its const members change nothing on disk) and adds
// blobs and the caches beside them (not const: they write, but outside the lock, since a blob nothing
// names yet changes no reader's answer). `StoreWriter` is the only way to change the history and
// index.json: it exists only while it holds the store's lock and releases it when destroyed, so a
// caller takes one around its commit, never while packing or downloading.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oci/oci.hpp"
#include "oci/record.hpp"
#include "store/history.hpp"
#include "util/byte_sink.hpp"
#include "util/fs.hpp"

namespace arec {

// How long a writer waits for the store's lock unless told otherwise (Store::set_lock_timeout).
inline constexpr std::chrono::milliseconds k_default_lock_timeout{120'000};

// Any OCI image layout, read side: the store itself, or a base image's layout.
class Layout {
 public:
  static Result<Layout> open(const fs::Path& dir);

  const fs::Path& dir() const { return m_dir; }
  fs::Path blob_path(const Digest& digest) const;
  // Whether the layout holds the blob at its full size. Content-addressed: a blob of the right name
  // and size holds the right bytes; one of another size was cut short by a power loss (see fs::syncing)
  // and counts as missing, so whatever needs it writes it again.
  // Only a regular file counts: a symbolic link in blobs/ was planted, since arec never makes one.
  bool has_blob(const Descriptor& descriptor) const;
  // A blob's file opened for reading with fs::open_own_file: a link, a FIFO or a device is an error
  // naming it, so that nothing is read (or pushed) through a link to another file.
  Result<fs::Fd> open_blob(const Digest& digest) const;
  // The image `manifest` names has no blob that is a link or any other non-regular file (what push and
  // verify check before they speak for the store's copy). A missing blob is not this check's concern.
  Status check_image_files(const Descriptor& manifest) const;
  Result<Index> read_index() const;
  // A small blob (manifest, config), verified against the descriptor's size and digest.
  Result<std::string> read_blob(const Descriptor& descriptor) const;

  // The documents of an image, read with read_blob and parsed. Their errors name the blob's file;
  // the caller says what it was doing.
  Result<Manifest> read_manifest(const Descriptor& manifest) const;
  Result<Index> read_image_index(const Descriptor& index) const;
  Result<ImageConfig> read_config(const Manifest& manifest) const;
  // Whether the layout holds the image `manifest` names whole: the manifest, its config and every
  // layer at full size (has_blob). What misses a blob is fetched or made again by whoever needs it.
  bool holds_image(const Descriptor& manifest) const;

 protected:
  explicit Layout(fs::Path dir) : m_dir(std::move(dir)) {}
  fs::Path m_dir;
};

enum class Hashing { yes, no };

// A blob being written: bytes go to a temporary file (hashed unless the caller already knows the
// digest) and become blobs/<alg>/<hex> on commit. Dropped without commit, nothing is left.
class BlobWriter final : public ByteSink {
 public:
  BlobWriter(fs::AtomicFile file, fs::Path blobs_dir, Hashing hashing);
  Status write(std::span<const std::byte> data) override;
  Status finish() override;
  // Commits under the digest of what was written (Hashing::yes) or the digest given (Hashing::no).
  Result<Descriptor> commit(std::string_view media_type, std::optional<Digest> known = std::nullopt);

 private:
  Status flush();

  fs::AtomicFile m_file;
  fs::Path m_blobs_dir;
  std::optional<Hasher> m_hasher;
  std::vector<std::byte> m_buffer;
  std::int64_t m_size = 0;
};

enum class History { latest, all };

class StoreWriter;

// Whether blobs may be added while a writer holds the lock. Recorders, pulls and imports add theirs
// outside the lock, holding writers.lock shared from Store::open; gc, which removes every blob nothing
// names, first waits for them to finish and keeps them out (writers.lock exclusively).
enum class BlobWriters { allowed, excluded };

class Store : public Layout {
 public:
  // Opens the store at `dir`, creating it when missing. A directory that exists, is not empty and is
  // not an OCI layout is refused rather than written into.
  static Result<Store> open(const fs::Path& dir);
  // Opens an existing store without creating anything (for readers).
  static Result<Store> open_existing(const fs::Path& dir);

  Result<BlobWriter> begin_blob(Hashing hashing);
  Result<Descriptor> put_blob(std::string_view bytes, std::string_view media_type);
  // Copies a blob from another layout, streamed and verified; skipped when already present.
  Result<Descriptor> copy_blob(const Layout& from, const Descriptor& descriptor);

  std::optional<Descriptor> cached_layer(const Digest& diff_id, Compression compression) const;
  fs::Path layer_cache_dir() const { return m_dir / "arec" / "layers"; }
  fs::Path layer_cache_path(const Digest& diff_id, Compression compression) const;
  void remember_layer(const Digest& diff_id, Compression compression, const Descriptor& layer);
  // Where the DiffID of a layer's files as they are on disk is kept, by the digest of what identifies
  // them (their paths, sizes, inodes and times): a record finds the layer by it without reading the
  // files. gc keeps one while a remembered layer of its DiffID stays.
  fs::Path files_shortcut_path(const Digest& identity) const;
  static bool is_files_shortcut(const fs::Path& path);

  // Where a blob was last seen at a registry: the repositories (paths only, no registry, rule 1) a push
  // sent it to or found it in, or a pull fetched it from, newest first. A later push may mount the blob
  // from one of them instead of uploading it, also after the record that took it there was removed.
  // Only a hint: the registry checks a mount, and a repository that lacks the blob gets an upload.
  fs::Path mount_hints_dir() const { return m_dir / "arec" / "mounts"; }
  std::vector<std::string> repositories_holding(const Digest& digest) const;
  void note_repository(const Digest& digest, std::string_view repository);
  // Where the upload sessions a push keeps open are noted (UploadNote, store/uploads.hpp).
  fs::Path uploads_dir() const { return m_dir / "arec" / "uploads"; }
  // The images this store built (recorder/image notes each by its manifest's digest), as opposed to
  // those pulled or imported: a signing key signs records of what its store built, and a record made
  // elsewhere only when asked (recorder/signing). A note failing to be written costs that request.
  fs::Path built_notes_dir() const { return m_dir / "arec" / "built"; }
  void note_built(const Digest& manifest);
  bool built_here(const Digest& manifest) const;

  Result<std::vector<Record>> records(History history) const;
  // The same, one record at a time, without holding them all (History::all of a large store).
  Status for_each_record(History history, const HistoryDb::RecordVisitor& visit) const;
  // Every history entry of module/name, oldest first.
  Result<std::vector<Record>> history_of(std::string_view module, std::string_view name) const;
  // The latest record of module/name, if any. Reads without the lock (WAL readers never wait).
  Result<std::optional<Record>> latest(std::string_view module, std::string_view name) const;

  // ---- Configurations (ARCHITECTURE.md, "Configurations")
  // The newest record of each configuration of module/name, by configuration.
  Result<std::vector<Record>> config_latest_of(std::string_view module, std::string_view name) const;
  // The newest record of module/name in `config` ("": records naming none), if any.
  Result<std::optional<Record>> latest_of_config(std::string_view module, std::string_view name,
                                                 std::string_view config) const;
  // The newest record of each configuration of each module/name, in the order they were made.
  Status for_each_config_latest(const HistoryDb::RecordVisitor& visit) const;
  // The latest record of module/name in the configuration `choice` means (choose_config), and the note
  // saying the default was used, if it was. Nothing when module/name has no record at all.
  struct Chosen {
    std::optional<Record> record;
    std::string note;
  };
  Result<Chosen> latest(std::string_view module, std::string_view name, const ConfigChoice& choice) const;
  // The latest record of each module/name in the configuration `choice` means, in the order they were
  // made. A module/name without a record of the configuration asked for is left out; one whose
  // configurations leave the choice open (several, none the default) is left out with a note.
  Result<std::vector<Record>> latest_records(const ConfigChoice& choice, std::vector<std::string>& notes) const;
  // The newest record of each configuration of every module/name (choice.asked: of that one only).
  Result<std::vector<Record>> config_latest_records(const ConfigChoice& choice) const;

  // What `module/name` (its latest) names: the newest record's manifest when module/name has records
  // of one platform, else an OCI image index over the newest record of each platform, sorted by
  // platform so that the same set always gives the same bytes and digest.
  struct LatestImage {
    Descriptor descriptor;          // the manifest's, or the index's (media type, digest, size)
    std::string index;              // the index's bytes; empty for a single manifest
    std::vector<Record> platforms;  // the records it covers, in the index's order; the newest alone for a manifest
    bool is_index() const { return !index.empty(); }
  };
  Result<std::optional<LatestImage>> latest_image(std::string_view module, std::string_view name) const;
  // The same in one configuration (nothing: any, as above): its newest record, or an index over its
  // newest record of each platform the image of module/name is made of, when that gives two or more.
  Result<std::optional<LatestImage>> latest_image(std::string_view module, std::string_view name,
                                                  const std::optional<std::string>& config) const;
  // The images of the module/names made of several platforms (indexes), by "module/name", read in one
  // query: every other module/name's image is its latest record.
  Result<std::map<std::string, LatestImage>> indexes() const;
  // The images among `records` that are indexes: those of the module/names whose latest they hold.
  Result<std::vector<LatestImage>> indexes_of(const std::vector<Record>& records) const;
  // `records` and, for each index of indexes_of(records), the records of its other platforms after
  // them: what carrying those images (push, verify, move, export) takes.
  Result<std::vector<Record>> with_platforms(std::vector<Record> records) const;
  // The same for indexes the caller has already (of indexes_of(records)).
  static std::vector<Record> with_platforms(std::vector<Record> records, const std::vector<LatestImage>& indexes);

  struct Commit {
    Record record;  // what the store holds as the latest of module/name
    bool changed;   // false when it already held exactly this digest
  };
  // The index.json entries of the referrers of the manifest `subject` (annotation::k_subject), in order.
  Result<std::vector<Descriptor>> referrers(const Digest& subject) const;

  // The writer of the history and index.json: takes the store's lock (arec/lock, waiting up to
  // lock_timeout()), which the writer holds until it is destroyed. Opens the history for writing first,
  // converting a store of format 1 (under the lock); a store opened with open_existing becomes writable
  // here. With BlobWriters::excluded, waits for every writer of blobs to finish first (gc).
  Result<StoreWriter> writer(BlobWriters blob_writers = BlobWriters::allowed);
  // `change(writer)`, the lock held for that call alone: for one change amid work that must not hold
  // the lock (a pull between downloads, a command before its output).
  template <typename Change>
  auto with_writer(Change&& change, BlobWriters blob_writers = BlobWriters::allowed)
      -> decltype(change(std::declval<StoreWriter&>()));

  // The history database, read only, or null for a store not converted yet opened by a reader.
  const HistoryDb* history() const { return m_history.get(); }
  fs::Path history_path() const { return m_dir / "arec" / "history.db"; }
  // The OCI view index.json should hold, derived from the database with default_config().
  Result<Index> view() const;
  // The same with another default configuration.
  Result<Index> view(std::string_view default_config) const;
  enum class ViewState { current, behind, missing, differs };
  // How index.json compares with the view derived with the default configuration index.json names (for
  // check; StoreWriter::write_view rewrites it). `written_with`, when given, gets that configuration.
  Result<ViewState> view_state(std::string* written_with = nullptr) const;

  fs::Path temp_dir() const { return m_dir / "arec" / "tmp"; }
  fs::Path lock_path() const { return m_dir / "arec" / "lock"; }
  // Writers hold this shared while they may add blobs; gc takes it exclusively, so it never removes a
  // blob that a record about to be committed needs.
  fs::Path writers_lock_path() const { return m_dir / "arec" / "writers.lock"; }

  // How long a writer waits for a lock of any store of the process: 120 s unless the command line
  // sets it (AREC_LOCK_TIMEOUT) before opening one. Set once rather than passed, because every opening
  // of a store and gc take the lock.
  static std::chrono::milliseconds lock_timeout();
  static void set_lock_timeout(std::chrono::milliseconds timeout);
  // The configuration the view names module/name by where it has records of several (choose_config's
  // default): Release unless the command line sets it (AREC_DEFAULT_CONFIG) before opening a store.
  // index.json names the one it was written with when it is another (annotation dev.arec.default-config).
  static const std::string& default_config();
  static void set_default_config(std::string config);

  // Removes temporaries that killed writers left behind (see fs::is_abandoned_temporary).
  // Returns how many it removed.
  std::size_t sweep_abandoned_temporaries();
  // The directories arec makes in a store (blobs/, blobs/sha256/, arec/, arec/tmp/, arec/layers/):
  // each, when present, must be a directory and not a symbolic link. A link there was planted, and
  // following it would write into, or remove from, a directory elsewhere: an error naming it.
  static Status check_own_directories(const fs::Path& dir);

 private:
  friend class StoreWriter;
  using Layout::Layout;
  // Converts a store of format 1 and opens the database for writing (the conversion under the lock).
  Status open_history();
  Status catch_up_view();
  // The view's entries in order, each digest once. An entry naming a derived image index comes with
  // the index's bytes (else empty), for the writer to write its blob before the view names it.
  Status for_each_view_entry(std::string_view default_config,
                             const std::function<Status(Descriptor&&, std::string_view index_bytes)>& visit) const;

  std::shared_ptr<fs::FileLock> m_writers_lock;
  std::shared_ptr<HistoryDb> m_history;
};

// Every change to the history and index.json. A writer holds the store's lock from Store::writer until
// it is destroyed; take it around the change alone. Each change commits one transaction and rewrites
// index.json from the history (or only brings a view left behind up to date when nothing changed).
class StoreWriter {
 public:
  using Commit = Store::Commit;
  using LatestImage = Store::LatestImage;

  StoreWriter(StoreWriter&&) noexcept = default;
  StoreWriter& operator=(StoreWriter&&) noexcept = default;

  // The store written, to read it (and add blobs) while the lock is held.
  Store& store() { return *m_store; }
  const Store& store() const { return *m_store; }
  // The history for writing (maintenance: trimming, dropping referrers), inside HistoryDb::transaction.
  HistoryDb& history() { return *m_store->m_history; }
  // Whether writers of blobs are kept out (Store::writer(BlobWriters::excluded)), as gc requires.
  bool excludes_blob_writers() const { return m_blob_writers.has_value(); }

  // Makes `record` the latest of its module/name and lists its referrers (artifacts whose subject it
  // is, such as its SBOM) in the same write of index.json.
  Result<Commit> commit(const Record& record, const std::vector<Descriptor>& referrers = {});
  // commit() of several records in order (an import), in one transaction and one write of index.json:
  // N records cost one rewrite of the view, not N.
  Result<std::vector<Commit>> commit_all(const std::vector<std::pair<Record, std::vector<Descriptor>>>& records);
  // Lists an image that is not a record (a pulled base image) in index.json, once per digest. Its
  // blobs must be in the store already. False when it was listed before.
  Result<bool> keep(const Descriptor& image);
  // Makes the record module/name@digest of the history the latest again, as a new history entry
  // recorded now; nothing earlier is rewritten. `changed` is false when it is the latest already.
  Result<Commit> tag(std::string_view module, std::string_view name, const Digest& digest);
  // Drops the history entries of module/name (all, or those of `digest`) and the referrers only they
  // had; their blobs stay until `arec gc`. Returns how many entries were dropped (0: none matched).
  Result<std::size_t> remove(std::string_view module, std::string_view name, std::optional<Digest> digest);
  // Makes module/name's image the newest record of each of `platforms` ("os/arch[/variant]"), or of
  // every platform recorded when it is empty. A single platform's newest record also becomes the
  // latest, as `tag` makes it (a new history entry), so the image and the latest agree.
  Result<LatestImage> set_platforms(std::string_view module, std::string_view name,
                                    const std::vector<std::string>& platforms);
  // Rewrites index.json from the history: the bytes of canonical_json(to_json(Store::view())), written
  // entry by entry; each derived index blob is written before the view names it.
  Status write_view();
  // write_view() when index.json is not the view (left behind, missing or edited), or was written with
  // another default configuration than Store::default_config().
  Status refresh_view_if_behind();

 private:
  friend class Store;
  StoreWriter(Store& store, fs::FileLock lock, std::optional<fs::FileLock> blob_writers = std::nullopt)
      : m_store(&store), m_blob_writers(std::move(blob_writers)), m_lock(std::move(lock)) {}

  Store* m_store;
  // Declared before the lock, so released after it: taken first, let go last.
  std::optional<fs::FileLock> m_blob_writers;
  fs::FileLock m_lock;
};

template <typename Change>
auto Store::with_writer(Change&& change, BlobWriters blob_writers) -> decltype(change(std::declval<StoreWriter&>())) {
  auto w = writer(blob_writers);
  if (!w) return fail(std::move(w.error()));
  return change(*w);
}

// A descriptor kept as a JSON file, or nothing when it is missing or unreadable.
std::optional<Descriptor> read_descriptor_file(const fs::Path& path);

}  // namespace arec
