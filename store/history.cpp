#include "store/history.hpp"

#include <sqlite3.h>

#include "store/history_internal.hpp"

namespace arec {

using namespace history_sql;

HistoryDb::~HistoryDb() { sqlite3_close_v2(m_db); }

Status HistoryDb::exec(const char* sql) const {
  char* message = nullptr;
  if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string text = message != nullptr ? message : sqlite3_errmsg(m_db);
  sqlite3_free(message);
  return fail_input(m_path.string() + ": " + text);
}

Status HistoryDb::transaction(const std::function<Result<Outcome>()>& work) {
  std::lock_guard guard(m_mutex);
  if (auto s = exec("BEGIN IMMEDIATE"); !s) return s;
  auto outcome = work();
  if (!outcome || *outcome == Outcome::roll_back) {
    (void)exec("ROLLBACK");
    if (!outcome) return fail(outcome.error());
    return {};
  }
  if (auto s = exec("COMMIT"); !s) {
    (void)exec("ROLLBACK");
    return s;
  }
  return {};
}

Status HistoryDb::append(const Record& r) {
  SqlStatement insert(m_db, k_insert_record);
  if (auto s = bind_record(insert, r); !s) return s;
  insert.step();
  if (auto s = insert.status(m_path.string()); !s) return s;
  const std::int64_t seq = sqlite3_last_insert_rowid(m_db);
  SqlStatement latest(m_db, "INSERT OR REPLACE INTO latest (module, name, seq) VALUES (?, ?, ?)");
  latest.bind(r.module).bind(r.name).bind(seq).step();
  if (auto s = latest.status(m_path.string()); !s) return s;
  SqlStatement config(m_db, "INSERT OR REPLACE INTO configs (module, name, config, seq) VALUES (?, ?, ?, ?)");
  config.bind(r.module).bind(r.name).bind(r.config).bind(seq).step();
  if (auto s = config.status(m_path.string()); !s) return s;
  if (r.manifest.platform) {
    // It replaces the record of its platform in the image of module/name, and no other.
    SqlStatement platform(m_db, "INSERT OR REPLACE INTO platforms (module, name, platform, seq) VALUES (?, ?, ?, ?)");
    platform.bind(r.module).bind(r.name).bind(platform_text(*r.manifest.platform)).bind(seq).step();
    if (auto s = platform.status(m_path.string()); !s) return s;
  }
  return sync_heads(r.module, r.name);
}

Status HistoryDb::sync_heads(std::string_view module, std::string_view name) {
  const std::string named = named_seqs("WHERE module = ?1 AND name = ?2");
  SqlStatement gone(m_db, "DELETE FROM heads WHERE module = ?1 AND name = ?2 AND seq NOT IN (" + named + ")");
  gone.bind(module).bind(name).step();
  if (auto s = gone.status(m_path.string()); !s) return s;
  SqlStatement copied(m_db, std::string("INSERT OR IGNORE INTO heads (") + k_columns + ") SELECT " + k_columns +
                                " FROM records WHERE seq IN (" + named + ")");
  copied.bind(module).bind(name).step();
  return copied.status(m_path.string());
}

Result<bool> HistoryDb::add_other(const Descriptor& d) {
  SqlStatement exists(m_db, "SELECT 1 FROM others WHERE digest = ?");
  exists.bind(d.digest.str());
  if (exists.step()) return false;
  if (auto s = exists.status(m_path.string()); !s) return fail(s.error());
  auto text = canonical_json(to_json(d));
  if (!text) return fail(text.error());
  SqlStatement insert(m_db, "INSERT INTO others (digest, subject, descriptor) VALUES (?, ?, ?)");
  insert.bind(d.digest.str()).bind(d.annotation(annotation::k_subject)).bind(*text).step();
  if (auto s = insert.status(m_path.string()); !s) return fail(s.error());
  return true;
}

Result<bool> HistoryDb::has_record_digest(const Digest& digest) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, "SELECT 1 FROM records WHERE digest = ? LIMIT 1");
  q.bind(digest.str());
  if (q.step()) return true;
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return false;
}

Status HistoryDb::for_each_latest(const RecordVisitor& visit) const {
  std::lock_guard guard(m_mutex);
  // Read in the heads' own order (their key is seq), which needs no sort of the whole latest.
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM " + heads() +
                           " r WHERE r.seq IN (SELECT seq FROM latest) ORDER BY r.seq");
  return each_record(q, m_path.string(), visit);
}

Status HistoryDb::for_each_record(const RecordVisitor& visit) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM records r ORDER BY r.seq");
  return each_record(q, m_path.string(), visit);
}

Result<std::vector<Record>> HistoryDb::history_of(std::string_view module, std::string_view name) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns +
                           " FROM records r WHERE r.module = ? AND r.name = ? ORDER BY r.seq");
  q.bind(module).bind(name);
  return all_records(q, m_path.string());
}

Result<std::optional<Record>> HistoryDb::latest(std::string_view module, std::string_view name) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM latest l JOIN " + heads() +
                           " r ON r.seq = l.seq WHERE l.module = ? AND l.name = ?");
  q.bind(module).bind(name);
  if (q.step()) {
    auto r = record_of(q, m_path.string());
    if (!r) return fail(r.error());
    return std::optional<Record>(std::move(*r));
  }
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return std::optional<Record>();
}

Status HistoryDb::for_each_config_latest(const RecordVisitor& visit) const {
  std::lock_guard guard(m_mutex);
  if (m_format < 4) {
    SqlStatement q(m_db,
                   std::string("SELECT ") + k_record_columns +
                       " FROM records r WHERE r.seq IN (SELECT MAX(seq) FROM records GROUP BY module, name, config) "
                       "ORDER BY r.seq");
    return each_record(q, m_path.string(), visit);
  }
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM " + heads() +
                           " r WHERE r.seq IN (SELECT seq FROM configs) ORDER BY r.seq");
  return each_record(q, m_path.string(), visit);
}

Result<std::vector<Record>> HistoryDb::config_latest_of(std::string_view module, std::string_view name) const {
  std::lock_guard guard(m_mutex);
  if (m_format < 4) {
    SqlStatement q(m_db,
                   std::string("SELECT ") + k_record_columns +
                       " FROM records r WHERE r.seq IN (SELECT MAX(seq) FROM records WHERE module = ?1 AND name = "
                       "?2 GROUP BY config) "
                       "ORDER BY r.config");
    q.bind(module).bind(name);
    return all_records(q, m_path.string());
  }
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM configs c JOIN " + heads() +
                           " r ON r.seq = c.seq WHERE c.module = ? AND c.name = ? ORDER BY c.config");
  q.bind(module).bind(name);
  return all_records(q, m_path.string());
}

Result<std::vector<Record>> HistoryDb::platform_set(std::string_view module, std::string_view name) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM platforms p JOIN " + heads() +
                           " r ON r.seq = p.seq WHERE p.module = ? AND p.name = ? ORDER BY p.platform");
  q.bind(module).bind(name);
  return all_records(q, m_path.string());
}

Result<std::map<std::string, std::vector<Record>>> HistoryDb::platform_sets() const {
  std::lock_guard guard(m_mutex);
  // One query for all: the view and `records` ask for every module/name at once.
  SqlStatement q(m_db, std::string("SELECT ") + k_record_columns + " FROM platforms p JOIN " + heads() +
                           " r ON r.seq = p.seq WHERE (p.module, p.name) IN "
                           "(SELECT module, name FROM platforms GROUP BY module, name HAVING COUNT(*) > 1) "
                           "ORDER BY p.module, p.name, p.platform");
  auto records = all_records(q, m_path.string());
  if (!records) return fail(records.error());
  std::map<std::string, std::vector<Record>> out;
  for (auto& r : *records) out[r.repository()].push_back(std::move(r));
  return out;
}

Result<std::vector<std::string>> HistoryDb::recorded_platforms(std::string_view module, std::string_view name) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db,
                 "SELECT DISTINCT " + platform_of("r") +
                     " FROM records r WHERE r.module = ? AND r.name = ? AND r.architecture IS NOT NULL ORDER BY 1");
  q.bind(module).bind(name);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.text(0));
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return out;
}

Result<std::vector<Descriptor>> HistoryDb::others(std::optional<std::string_view> subject) const {
  return others_where(subject ? "WHERE subject = ?" : "", subject);
}

Result<std::vector<Descriptor>> HistoryDb::others_in_view() const {
  // Pulled images, and referrers of a latest record or of a pulled image: not those of older records.
  return others_where("WHERE subject = '' OR subject IN (SELECT r.digest FROM latest l JOIN " + heads() +
                          " r ON r.seq = l.seq) OR subject IN (SELECT digest FROM others WHERE subject = '')",
                      std::nullopt);
}

Result<std::vector<Descriptor>> HistoryDb::others_where(std::string_view where,
                                                        std::optional<std::string_view> subject) const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, "SELECT descriptor FROM others " + std::string(where) + " ORDER BY seq");
  if (subject) q.bind(*subject);
  std::vector<Descriptor> out;
  while (q.step()) {
    auto d = parse_document<Descriptor>(q.text(0), m_path.string());
    if (!d) return fail(d.error());
    out.push_back(std::move(*d));
  }
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return out;
}

Result<std::int64_t> HistoryDb::generation() const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, "SELECT value FROM meta WHERE key = 'generation'");
  if (q.step()) return q.integer(0);
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return fail_input(m_path.string() + ": no generation");
}

Result<std::int64_t> HistoryDb::view_generation() const {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, "SELECT value FROM meta WHERE key = 'view'");
  if (q.step()) return q.integer(0);
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return std::int64_t{0};
}

Status HistoryDb::set_view_generation(std::int64_t generation) {
  std::lock_guard guard(m_mutex);
  SqlStatement q(m_db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('view', ?)");
  q.bind(generation).step();
  return q.status(m_path.string());
}

Status HistoryDb::bump_generation() {
  SqlStatement q(m_db, "UPDATE meta SET value = value + 1 WHERE key = 'generation'");
  q.step();
  return q.status(m_path.string());
}

Result<std::size_t> HistoryDb::remove(std::string_view module, std::string_view name, std::optional<Digest> digest) {
  SqlStatement q(m_db, digest ? "DELETE FROM records WHERE module = ? AND name = ? AND digest = ?"
                              : "DELETE FROM records WHERE module = ? AND name = ?");
  q.bind(module).bind(name);
  if (digest) q.bind(digest->str());
  q.step();
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  const auto removed = static_cast<std::size_t>(sqlite3_changes(m_db));
  // The latest is the newest entry left, or none.
  SqlStatement latest(
      m_db,
      "INSERT OR REPLACE INTO latest (module, name, seq) "
      "SELECT module, name, MAX(seq) FROM records WHERE module = ?1 AND name = ?2 GROUP BY module, name");
  latest.bind(module).bind(name).step();
  if (auto s = latest.status(m_path.string()); !s) return fail(s.error());
  SqlStatement gone(m_db,
                    "DELETE FROM latest WHERE module = ?1 AND name = ?2 AND NOT EXISTS "
                    "(SELECT 1 FROM records WHERE module = ?1 AND name = ?2)");
  gone.bind(module).bind(name).step();
  if (auto s = gone.status(m_path.string()); !s) return fail(s.error());
  // Each configuration's newest is the newest entry of it left, or it has none.
  SqlStatement configs(m_db, "DELETE FROM configs WHERE module = ?1 AND name = ?2");
  configs.bind(module).bind(name).step();
  if (auto s = configs.status(m_path.string()); !s) return fail(s.error());
  SqlStatement refill(
      m_db,
      "INSERT INTO configs (module, name, config, seq) SELECT module, name, config, MAX(seq) FROM records "
      "WHERE module = ?1 AND name = ?2 GROUP BY config");
  refill.bind(module).bind(name).step();
  if (auto s = refill.status(m_path.string()); !s) return fail(s.error());
  // A platform whose record went is made of the newest record of that platform left, or leaves the set.
  const std::string newest_of_platform =
      "(SELECT MAX(r.seq) FROM records r WHERE r.module = p.module AND r.name = p.name AND " + platform_of("r") +
      " = p.platform)";
  SqlStatement replaced(
      m_db, "INSERT OR REPLACE INTO platforms (module, name, platform, seq) SELECT p.module, p.name, p.platform, " +
                newest_of_platform + " FROM platforms p WHERE p.module = ?1 AND p.name = ?2 AND " +
                "NOT EXISTS (SELECT 1 FROM records WHERE seq = p.seq) AND " + newest_of_platform + " IS NOT NULL");
  replaced.bind(module).bind(name).step();
  if (auto s = replaced.status(m_path.string()); !s) return fail(s.error());
  SqlStatement left(
      m_db,
      "DELETE FROM platforms WHERE module = ?1 AND name = ?2 AND NOT EXISTS (SELECT 1 FROM records r WHERE "
      "r.seq = platforms.seq)");
  left.bind(module).bind(name).step();
  if (auto s = left.status(m_path.string()); !s) return fail(s.error());
  if (auto s = sync_heads(module, name); !s) return fail(s.error());
  return removed;
}

Status HistoryDb::set_platforms(std::string_view module, std::string_view name,
                                const std::vector<std::string>& platforms) {
  SqlStatement clear(m_db, "DELETE FROM platforms WHERE module = ? AND name = ?");
  clear.bind(module).bind(name).step();
  if (auto s = clear.status(m_path.string()); !s) return s;
  for (const auto& platform : platforms) {
    SqlStatement add(m_db, "INSERT INTO platforms (module, name, platform, seq) SELECT module, name, " +
                               platform_of("r") + ", MAX(seq) FROM records r WHERE module = ?1 AND name = ?2 AND " +
                               platform_of("r") + " = ?3 GROUP BY module, name");
    add.bind(module).bind(name).bind(platform).step();
    if (auto s = add.status(m_path.string()); !s) return s;
    if (sqlite3_changes(m_db) == 0) {
      auto recorded = recorded_platforms(module, name);
      if (!recorded) return fail(recorded.error());
      std::string list;
      for (const auto& r : *recorded) list += (list.empty() ? "" : ", ") + r;
      return fail_input(std::string(module) + "/" + std::string(name) + " has no record for " + platform +
                        " (it has records for " + list + ")");
    }
  }
  return sync_heads(module, name);
}

Result<std::size_t> HistoryDb::trim(std::size_t keep) {
  // An entry goes when `keep` newer entries of its module/name and configuration exist, so that one
  // configuration's builds never push another's records out; the latest (the newest) stays, and so do
  // each configuration's newest and the record of each platform its image is made of.
  SqlStatement q(m_db,
                 "DELETE FROM records WHERE seq IN (SELECT seq FROM (SELECT seq, ROW_NUMBER() OVER "
                 "(PARTITION BY module, name, config ORDER BY seq DESC) AS n FROM records) WHERE n > ?) "
                 "AND seq NOT IN (SELECT seq FROM latest) AND seq NOT IN (SELECT seq FROM platforms) "
                 "AND seq NOT IN (SELECT seq FROM configs)");
  q.bind(static_cast<std::int64_t>(keep)).step();
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return static_cast<std::size_t>(sqlite3_changes(m_db));
}

Result<std::size_t> HistoryDb::drop_orphan_referrers() {
  SqlStatement q(m_db,
                 "DELETE FROM others WHERE subject != '' AND subject NOT IN (SELECT digest FROM records) "
                 "AND subject NOT IN (SELECT digest FROM others)");
  q.step();
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  return static_cast<std::size_t>(sqlite3_changes(m_db));
}

Status HistoryDb::heads_problems(std::vector<std::string>& problems) const {
  SqlStatement missing(m_db,
                       "SELECT n.module, n.name, n.seq FROM (SELECT module, name, seq FROM latest UNION SELECT module, "
                       "name, seq FROM configs UNION SELECT module, name, seq FROM platforms) n WHERE NOT EXISTS "
                       "(SELECT 1 FROM heads h WHERE h.seq = n.seq AND h.module = n.module AND h.name = n.name)");
  while (missing.step()) {
    problems.push_back(m_path.string() + ": " + missing.text(0) + "/" + missing.text(1) + " names record " +
                       std::to_string(missing.integer(2)) + " but the heads hold no copy of it");
  }
  if (auto s = missing.status(m_path.string()); !s) return s;
  // Every column compared, NULL to NULL too: a copy that differs from its record is not one.
  std::string differs;
  for (const char* c : {"module", "name", "digest", "size", "media_type", "recorded", "target", "config", "revision",
                        "base", "architecture", "os", "variant", "extra"}) {
    differs += std::string(differs.empty() ? "" : " OR ") + "h." + c + " IS NOT r." + c;
  }
  SqlStatement stray(m_db, "SELECT h.module, h.name, h.seq, r.seq IS NULL, " + differs +
                               " FROM heads h LEFT JOIN records r ON r.seq = h.seq WHERE r.seq IS NULL OR " + differs +
                               " OR h.seq NOT IN (" + named_seqs() + ")");
  while (stray.step()) {
    const std::string what = m_path.string() + ": the heads' copy of record " + std::to_string(stray.integer(2)) +
                             " (" + stray.text(0) + "/" + stray.text(1) + ")";
    if (stray.integer(3) != 0) {
      problems.push_back(what + " is of no record in the history");
    } else if (stray.integer(4) != 0) {
      problems.push_back(what + " differs from the record");
    } else {
      problems.push_back(what + " is of a record no latest, configuration or platform names");
    }
  }
  return stray.status(m_path.string());
}

Result<std::vector<std::string>> HistoryDb::integrity_problems() const {
  std::lock_guard guard(m_mutex);
  std::vector<std::string> problems;
  SqlStatement q(m_db,
                 "SELECT r.module, r.name, MAX(r.seq), l.seq FROM records r LEFT JOIN latest l "
                 "ON l.module = r.module AND l.name = r.name GROUP BY r.module, r.name");
  while (q.step()) {
    const std::string repository = q.text(0) + "/" + q.text(1);
    if (q.is_null(3)) {
      problems.push_back(m_path.string() + ": " + repository + " has records but none is marked latest");
    } else if (q.integer(2) != q.integer(3)) {
      problems.push_back(m_path.string() + ": " + repository + " is marked latest on an older record than its newest");
    }
  }
  if (auto s = q.status(m_path.string()); !s) return fail(s.error());
  SqlStatement gone(
      m_db,
      "SELECT p.module, p.name, p.platform FROM platforms p WHERE NOT EXISTS (SELECT 1 FROM records r WHERE "
      "r.seq = p.seq)");
  while (gone.step()) {
    problems.push_back(m_path.string() + ": the image of " + gone.text(0) + "/" + gone.text(1) +
                       " names a record for " + gone.text(2) + " that is not in the history");
  }
  if (auto s = gone.status(m_path.string()); !s) return fail(s.error());
  SqlStatement configs(
      m_db,
      "SELECT r.module, r.name, r.config FROM records r LEFT JOIN configs c ON c.module = r.module AND c.name = r.name "
      "AND c.config = r.config GROUP BY r.module, r.name, r.config HAVING MAX(r.seq) != MAX(IFNULL(c.seq, -1))");
  while (configs.step()) {
    problems.push_back(m_path.string() + ": " + configs.text(0) + "/" + configs.text(1) +
                       " does not name the newest record of configuration \"" + configs.text(2) +
                       "\" as its latest of that configuration");
  }
  if (auto s = configs.status(m_path.string()); !s) return fail(s.error());
  if (m_format >= 5) {
    if (auto s = heads_problems(problems); !s) return fail(s.error());
  }
  SqlStatement check(m_db, "PRAGMA quick_check");
  while (check.step()) {
    if (auto line = check.text(0); line != "ok") problems.push_back(m_path.string() + ": " + line);
  }
  if (auto s = check.status(m_path.string()); !s) return fail(s.error());
  return problems;
}

}  // namespace arec
