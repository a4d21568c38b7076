// The history's schema: its tables, opening it (and migrating an older format once, on open) and
// making it from an older store's index.json.
#include <sqlite3.h>
#include <unistd.h>

#include "store/history.hpp"
#include "store/history_internal.hpp"

namespace arec {

namespace history_sql {

std::string named_seqs(std::string_view where) {
  const std::string w(where);
  return "SELECT seq FROM latest " + w + " UNION SELECT seq FROM configs " + w + " UNION SELECT seq FROM platforms " +
         w;
}

std::string platform_of(std::string_view r) {
  const std::string t(r);
  return t + ".os || '/' || " + t + ".architecture || CASE WHEN IFNULL(" + t +
         ".variant, '') = '' THEN '' ELSE '/' || " + t + ".variant END";
}

Result<Record> record_of(const SqlStatement& row, const std::string& where) {
  Record r;
  r.module = row.text(0);
  r.name = row.text(1);
  if (row.is_null(10)) {
    auto digest = Digest::parse(row.text(2));
    if (!digest) return fail(std::move(digest.error()).context(where));
    r.manifest.digest = *digest;
    r.manifest.size = row.integer(3);
    r.manifest.media_type = row.text(4);
    if (!row.is_null(11)) r.manifest.platform = Platform{row.text(11), row.text(12), row.text(13)};
  } else {
    auto d = parse_document<Descriptor>(row.text(10), where);
    if (!d) return fail(d.error());
    r.manifest = std::move(*d);
  }
  r.recorded = row.text(5);
  r.target = row.text(6);
  r.config = row.text(7);
  r.revision = row.text(8);
  r.base_digest = row.text(9);
  return r;
}

Status each_record(SqlStatement& q, const std::string& where, const HistoryDb::RecordVisitor& visit) {
  while (q.step()) {
    auto r = record_of(q, where);
    if (!r) return fail(r.error());
    if (auto s = visit(std::move(*r)); !s) return s;
  }
  return q.status(where);
}

Result<std::vector<Record>> all_records(SqlStatement& q, const std::string& where) {
  std::vector<Record> out;
  auto s = each_record(q, where, [&](Record&& r) -> Status {
    out.push_back(std::move(r));
    return {};
  });
  if (!s) return fail(s.error());
  return out;
}

namespace {

bool has_extra(const Descriptor& d) { return !d.urls.empty() || !d.artifact_type.empty(); }

}  // namespace

Status bind_record(SqlStatement& insert, const Record& r) {
  insert.bind(r.module).bind(r.name).bind(r.manifest.digest.str()).bind(r.manifest.size).bind(r.manifest.media_type);
  insert.bind(r.recorded).bind(r.target).bind(r.config).bind(r.revision).bind(r.base_digest);
  if (const auto& p = r.manifest.platform) {
    insert.bind(p->architecture).bind(p->os).bind(p->variant);
  } else {
    insert.bind_null().bind_null().bind_null();
  }
  if (!has_extra(r.manifest)) {
    insert.bind_null();
    return {};
  }
  auto text = canonical_json(to_json(r.manifest));
  if (!text) return fail(text.error());
  insert.bind(*text);
  return {};
}

}  // namespace history_sql

namespace {

using namespace history_sql;

constexpr const char* k_schema = R"(
CREATE TABLE records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  module TEXT NOT NULL, name TEXT NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL,
  media_type TEXT NOT NULL, recorded TEXT NOT NULL, target TEXT NOT NULL, config TEXT NOT NULL,
  revision TEXT NOT NULL, base TEXT NOT NULL,
  architecture TEXT, os TEXT, variant TEXT,  -- the manifest's platform, when it has one
  extra TEXT  -- the manifest descriptor as JSON when it has urls or an artifact type too
);
CREATE TABLE latest (module TEXT NOT NULL, name TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (module, name))
  WITHOUT ROWID;
CREATE TABLE others (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  digest TEXT NOT NULL UNIQUE, subject TEXT NOT NULL, descriptor TEXT NOT NULL
);
CREATE INDEX others_by_subject ON others (subject);
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES ('generation', 0), ('view', 0);
)";

// Made after the rows of a converted store are in (see create).
constexpr const char* k_record_indexes = R"(
CREATE INDEX records_by_name ON records (module, name, seq);
CREATE INDEX records_by_time ON records (recorded);
CREATE INDEX records_by_digest ON records (digest);
)";

// Format 3: the platforms module/name's image is made of, the newest record of each (see platform_set).
constexpr const char* k_platforms_schema = R"(
CREATE TABLE platforms (module TEXT NOT NULL, name TEXT NOT NULL, platform TEXT NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (module, name, platform)) WITHOUT ROWID;
)";

// Format 4: the newest entry of each configuration of each module/name, so that "the latest of M/N
// in Release" and "the configurations M/N has records of" read one row each, whatever the history.
constexpr const char* k_configs_schema = R"(
CREATE TABLE configs (module TEXT NOT NULL, name TEXT NOT NULL, config TEXT NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (module, name, config)) WITHOUT ROWID;
)";

// Format 5: a copy of each record that latest, configs or platforms name, with the columns of records.
// Listing the latest of each then reads a table the size of the latest alone, whose pages do not lie
// scattered among a history of a million entries.
constexpr const char* k_heads_schema = R"(
CREATE TABLE heads (
  seq INTEGER PRIMARY KEY,
  module TEXT NOT NULL, name TEXT NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL,
  media_type TEXT NOT NULL, recorded TEXT NOT NULL, target TEXT NOT NULL, config TEXT NOT NULL,
  revision TEXT NOT NULL, base TEXT NOT NULL, architecture TEXT, os TEXT, variant TEXT, extra TEXT
);
CREATE INDEX heads_by_name ON heads (module, name);
)";

// Fills the heads table from the history.
std::string heads_of_history() {
  return std::string("INSERT INTO heads (") + k_columns + ") SELECT " + k_columns + " FROM records WHERE seq IN (" +
         named_seqs() + ")";
}

// Fills the configs table from the history: the newest entry of each configuration, except that the
// latest of each module/name stands for its own configuration (a format-1 index could name an older one).
constexpr const char* k_configs_of_history =
    "INSERT OR REPLACE INTO configs (module, name, config, seq) SELECT module, name, config, MAX(seq) FROM records "
    "GROUP BY module, name, config; "
    "INSERT OR REPLACE INTO configs (module, name, config, seq) SELECT l.module, l.name, r.config, l.seq FROM latest l "
    "JOIN records r ON r.seq = l.seq;";

// Fills the platforms table from the latest record of each module/name alone.
std::string platforms_of_latest() {
  return "INSERT INTO platforms (module, name, platform, seq) SELECT l.module, l.name, " + platform_of("r") +
         ", l.seq FROM latest l JOIN records r ON r.seq = l.seq WHERE r.architecture IS NOT NULL";
}

}  // namespace

Result<std::shared_ptr<HistoryDb>> HistoryDb::open(const fs::Path& path, DbAccess access) {
  sqlite3* raw = nullptr;
  // Readers open read-write too when they may (SQLite then keeps the WAL index in shared memory);
  // a store they cannot write is read read-only.
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK && access == DbAccess::read) {
    sqlite3_close_v2(raw);
    raw = nullptr;
    rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  }
  std::shared_ptr<HistoryDb> db(new HistoryDb(raw, path));
  if (rc != SQLITE_OK) return fail_input(path.string() + ": " + sqlite3_errstr(rc));
  // Waiting on a checkpoint or on the writer of another store opened without the lock, never for long.
  sqlite3_busy_timeout(raw, 10000);
  std::int64_t format = 0;
  {
    SqlStatement version(raw, "PRAGMA user_version");
    if (!version.step()) {
      if (auto s = version.status(path.string()); !s) return fail(s.error());
      return fail_input(path.string() + ": no format version");
    }
    format = version.integer(0);
  }
  if (format > k_store_format) {
    return fail_input("store " + fs::directory_of(fs::directory_of(path)).string() + ": its format (" +
                      std::to_string(format) + ") is newer than this arec understands (" +
                      std::to_string(k_store_format) + "); use a newer arec " +
                      (access == DbAccess::write ? "to write to it" : "to read it"));
  }
  if (format >= 2 && format < k_store_format) {
    if (access == DbAccess::read && sqlite3_db_readonly(raw, "main") == 1) {
      // A reader that may not write reads an older format as it is, through the history.
      db->m_format = format;
    } else if (auto s = db->upgrade(format); !s) {
      return fail(
          std::move(s.error()).context("bringing the store's history to format " + std::to_string(k_store_format)));
    }
  } else if (format != k_store_format) {
    return fail_input(path.string() + ": format " + std::to_string(format) + " is not one this arec wrote");
  }
  // Without AREC_SYNC nothing is synced, as for every other file of the store (fs::syncing).
  if (auto s = db->exec(fs::syncing() ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF"); !s)
    return fail(s.error());
  // Mapped, the pages a query reads cost no read call each.
  if (auto s = db->exec("PRAGMA mmap_size=1073741824"); !s) return fail(s.error());
  return db;
}

Status HistoryDb::create(const fs::Path& path, const Index& legacy) {
  ::unlink(path.c_str());
  ::unlink((path.string() + "-journal").c_str());
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::shared_ptr<HistoryDb> db(new HistoryDb(raw, path));
  if (rc != SQLITE_OK) return fail_input(path.string() + ": " + sqlite3_errstr(rc));
  if (auto s = db->exec(fs::syncing() ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF"); !s)
    return fail(s.error());
  auto filled = db->transaction([&]() -> Result<Outcome> {
    for (const char* schema : {k_schema, k_platforms_schema, k_configs_schema, k_heads_schema}) {
      if (auto s = db->exec(schema); !s) return fail(s.error());
    }
    // One prepared statement for every entry, the indexes made after them and the other tables filled
    // by one statement each: appending each entry (statements prepared per entry, indexes kept as it
    // went) took 73 s for a million rather than 29.
    SqlStatement insert(raw, k_insert_record);
    std::vector<Record> named;  // the entries carrying ref.name
    for (const auto& d : legacy.manifests) {
      auto record = record_from_descriptor(d);
      if (!record) {
        auto added = db->add_other(d);
        if (!added) return fail(added.error());
        continue;
      }
      if (auto s = bind_record(insert, *record); !s) return fail(s.error());
      insert.step();
      if (auto s = insert.status(path.string()); !s) return fail(s.error());
      insert.reset();
      if (d.annotation(annotation::k_ref_name) == record->repository()) named.push_back(std::move(*record));
    }
    if (auto s = db->exec(k_record_indexes); !s) return fail(s.error());
    if (auto s = db->exec("INSERT INTO latest (module, name, seq) SELECT module, name, MAX(seq) FROM records "
                          "GROUP BY module, name");
        !s)
      return fail(s.error());
    // The entry carrying ref.name is the latest of its module/name, wherever it stands.
    SqlStatement latest(raw,
                        "UPDATE latest SET seq = (SELECT MAX(seq) FROM records WHERE module = ?1 AND name = ?2 AND "
                        "digest = ?3) WHERE module = ?1 AND name = ?2");
    for (const auto& r : named) {
      latest.bind(r.module).bind(r.name).bind(r.manifest.digest.str()).step();
      if (auto s = latest.status(path.string()); !s) return fail(s.error());
      latest.reset();
    }
    // Each image is its latest record alone, as index.json named it.
    if (auto s = db->exec(platforms_of_latest().c_str()); !s) return fail(s.error());
    if (auto s = db->exec(k_configs_of_history); !s) return fail(s.error());
    if (auto s = db->exec(heads_of_history().c_str()); !s) return fail(s.error());
    if (!legacy.manifests.empty()) {
      if (auto s = db->bump_generation(); !s) return fail(s.error());
    }
    // Last: a database cut short by a crash has no version and is made again.
    if (auto s = db->exec(("PRAGMA user_version=" + std::to_string(k_store_format)).c_str()); !s)
      return fail(s.error());
    return Outcome::commit;
  });
  if (!filled) return fail(filled.error());
  return db->exec("PRAGMA journal_mode=WAL");
}

Status HistoryDb::upgrade(std::int64_t from) {
  return transaction([&]() -> Result<Outcome> {
    // Another process may have brought it up meanwhile.
    SqlStatement version(m_db, "PRAGMA user_version");
    if (!version.step()) return fail(version.status(m_path.string()).error());
    if (version.integer(0) != from) return Outcome::roll_back;
    if (from == 2) {
      // Format 2 had one image per module/name, its latest record: so it stays.
      if (auto s = exec(k_platforms_schema); !s) return fail(s.error());
      if (auto s = exec(platforms_of_latest().c_str()); !s) return fail(s.error());
    }
    if (from <= 3) {
      // Formats 2 and 3 kept configurations in the history only: the newest of each is read from it.
      if (auto s = exec(k_configs_schema); !s) return fail(s.error());
      if (auto s = exec(k_configs_of_history); !s) return fail(s.error());
    }
    // Formats 2 to 4 read the records those name from the history.
    if (auto s = exec(k_heads_schema); !s) return fail(s.error());
    if (auto s = exec(heads_of_history().c_str()); !s) return fail(s.error());
    if (auto s = exec(("PRAGMA user_version=" + std::to_string(k_store_format)).c_str()); !s) return fail(s.error());
    return Outcome::commit;
  });
}

}  // namespace arec
