// The store's history: every record ever made, and the index entries that are not records (pulled
// images, referrers such as SBOMs), in an SQLite database at arec/history.db. It is the source of
// truth; index.json is the OCI view derived from it (see Store).
//
// One row per history entry, numbered in the order they were made (seq); the latest of each
// module/name, the newest of each configuration and the platforms of each image are kept in tables of
// their own, and the records they name are copied together into one more (heads), so neither "the
// latest of each" nor "the history of one module/name" reads pages across the whole history. WAL mode: readers never
// wait for the writer, and a writer killed mid-transaction leaves nothing behind.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/oci.hpp"
#include "oci/record.hpp"
#include "util/fs.hpp"

struct sqlite3;

namespace arec {

// The store format this arec writes: 1 was index.json alone, 2 adds arec/history.db, 3 the platforms
// each module/name's image is made of, 4 the newest record of each configuration, 5 a copy of each record
// those name, kept together (a database of format 2, 3 or 4 is brought to 5 when opened by an arec that
// may write it).
inline constexpr int k_store_format = 5;

enum class DbAccess { read, write };

class HistoryDb {
 public:
  // Opens an existing database. A database of a newer format than k_store_format is refused for
  // writing (Access::write) and reading alike: this arec cannot know what it holds.
  static Result<std::shared_ptr<HistoryDb>> open(const fs::Path& path, DbAccess access);
  // Creates the database at `path` (replacing a partial one) holding `legacy`'s entries in order: the
  // records (the one carrying ref.name is the latest of its module/name) and the other entries.
  // Closed when done, for the caller to rename into place.
  static Status create(const fs::Path& path, const Index& legacy);

  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  using RecordVisitor = std::function<Status(Record&&)>;
  // The latest record of each module/name, in the order they became latest.
  Status for_each_latest(const RecordVisitor& visit) const;
  // Every history entry, oldest first.
  Status for_each_record(const RecordVisitor& visit) const;
  Result<std::vector<Record>> history_of(std::string_view module, std::string_view name) const;
  Result<std::optional<Record>> latest(std::string_view module, std::string_view name) const;
  // The newest record of each configuration of each module/name, in the order they were made.
  Status for_each_config_latest(const RecordVisitor& visit) const;
  // The newest record of each configuration module/name has records of, by configuration.
  Result<std::vector<Record>> config_latest_of(std::string_view module, std::string_view name) const;
  // The platforms module/name's image is made of: the newest record of each, by platform text
  // (platform_text). Recording for a platform replaces that platform's; two or more make the image an
  // index over them (see Store::LatestImage).
  Result<std::vector<Record>> platform_set(std::string_view module, std::string_view name) const;
  // The same for every module/name made of two or more platforms, by "module/name".
  Result<std::map<std::string, std::vector<Record>>> platform_sets() const;
  // Every platform module/name has a record for, by platform text.
  Result<std::vector<std::string>> recorded_platforms(std::string_view module, std::string_view name) const;
  // Index entries that are not records (pulled images, referrers), oldest first; with a subject, only
  // the referrers of that manifest.
  Result<std::vector<Descriptor>> others(std::optional<std::string_view> subject = std::nullopt) const;
  // Those index.json lists: pulled images and the referrers of what it lists.
  Result<std::vector<Descriptor>> others_in_view() const;
  // Bumped by every change; index.json carries the generation it was derived from.
  Result<std::int64_t> generation() const;
  // The generation index.json was last written from, noted after writing it, so that a writer can tell
  // without reading index.json whether a killed writer left it behind.
  Result<std::int64_t> view_generation() const;
  Status set_view_generation(std::int64_t generation);

  // Writing: the caller holds the store lock. `work` runs in one transaction, committed when it
  // returns Outcome::commit, rolled back on failure or Outcome::roll_back (a dry run).
  enum class Outcome { commit, roll_back };
  Status transaction(const std::function<Result<Outcome>()>& work);
  // Inside a transaction:
  Status append(const Record& record);                   // a new history entry, now the latest
  Result<bool> add_other(const Descriptor& descriptor);  // false when its digest is listed already
  Result<bool> has_record_digest(const Digest& digest) const;
  // Removes history entries of module/name (all, or those of `digest`); the latest becomes the newest
  // entry left. Returns how many were removed.
  Result<std::size_t> remove(std::string_view module, std::string_view name, std::optional<Digest> digest);
  // Makes module/name's image the newest record of each of `platforms` (platform texts); one that has
  // no record is refused.
  Status set_platforms(std::string_view module, std::string_view name, const std::vector<std::string>& platforms);
  // Keeps the newest `keep` entries of each module/name; returns how many were removed.
  Result<std::size_t> trim(std::size_t keep);
  // Removes referrers whose subject is neither a record nor another entry; returns how many.
  Result<std::size_t> drop_orphan_referrers();
  Status bump_generation();
  // Problems with the database's own invariants (each latest is the newest entry of its module/name,
  // the heads are copies of exactly the records the latest, configurations and platforms name).
  Result<std::vector<std::string>> integrity_problems() const;

 private:
  HistoryDb(sqlite3* db, fs::Path path) : m_db(db), m_path(std::move(path)) {}
  Status exec(const char* sql) const;
  // Brings a database of format `from` (2, 3 or 4) to k_store_format, in one transaction.
  Status upgrade(std::int64_t from);
  // Makes the heads of module/name the copies of the records its latest, configurations and platforms
  // name, after any change to those.
  Status sync_heads(std::string_view module, std::string_view name);
  Status heads_problems(std::vector<std::string>& problems) const;
  // The table the records named by latest, configs and platforms are read from: heads, or the history
  // itself in a database older than format 5 that this reader may not bring up.
  std::string heads() const { return m_format >= 5 ? "heads" : "records"; }
  Result<std::vector<Descriptor>> others_where(std::string_view where, std::optional<std::string_view> subject) const;

  sqlite3* m_db;
  fs::Path m_path;
  std::int64_t m_format = k_store_format;  // older only for a reader that may not bring it up
  mutable std::recursive_mutex m_mutex;    // push reads from several threads
};

}  // namespace arec
