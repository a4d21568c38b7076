// What the two halves of the history (history_schema.cpp: the schema, opening and migrating;
// history.cpp: the queries and changes) share: one prepared statement, the row of a record. Private to
// store/.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/history.hpp"

namespace arec::history_sql {

inline constexpr const char* k_columns =
    "seq, module, name, digest, size, media_type, recorded, target, config, revision, base, architecture, os, "
    "variant, extra";

inline constexpr const char* k_record_columns =
    "r.module, r.name, r.digest, r.size, r.media_type, r.recorded, r.target, r.config, r.revision, r.base, r.extra, "
    "r.architecture, r.os, r.variant";

inline constexpr const char* k_insert_record =
    "INSERT INTO records (module, name, digest, size, media_type, recorded, target, config, revision, base, "
    "architecture, os, variant, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

// The seqs the latest, configurations and platforms name (`where` narrows each to one module/name).
std::string named_seqs(std::string_view where = "");

// SQL for the platform of the records row `r` as platform_text spells it: os/architecture[/variant].
std::string platform_of(std::string_view r);

// One prepared statement; finalized when it goes out of scope.
class SqlStatement {
 public:
  SqlStatement(sqlite3* db, std::string_view sql) : m_db(db) {
    m_rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &m_stmt, nullptr);
  }
  ~SqlStatement() { sqlite3_finalize(m_stmt); }
  SqlStatement(const SqlStatement&) = delete;
  SqlStatement& operator=(const SqlStatement&) = delete;

  SqlStatement& bind(std::string_view text) {
    if (m_rc == SQLITE_OK)
      m_rc = sqlite3_bind_text(m_stmt, ++m_bound, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqlStatement& bind(std::int64_t value) {
    if (m_rc == SQLITE_OK) m_rc = sqlite3_bind_int64(m_stmt, ++m_bound, value);
    return *this;
  }
  // Ready to run again with new bindings.
  void reset() {
    if (m_stmt == nullptr) return;
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    m_rc = SQLITE_OK;
    m_bound = 0;
  }
  SqlStatement& bind_null() {
    if (m_rc == SQLITE_OK) m_rc = sqlite3_bind_null(m_stmt, ++m_bound);
    return *this;
  }
  // True while there is a row; errors end the iteration and show in status().
  bool step() {
    if (m_rc != SQLITE_OK && m_rc != SQLITE_ROW) return false;
    m_rc = sqlite3_step(m_stmt);
    if (m_rc == SQLITE_ROW) return true;
    if (m_rc == SQLITE_DONE) m_rc = SQLITE_OK;
    return false;
  }
  Status status(std::string_view what) const {
    if (m_rc == SQLITE_OK || m_rc == SQLITE_ROW) return {};
    return fail_input(std::string(what) + ": " + sqlite3_errmsg(m_db));
  }
  std::string text(int column) const {
    const auto* p = sqlite3_column_text(m_stmt, column);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p),
                                      static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
  bool is_null(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }

 private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc;
  int m_bound = 0;
};

// The record of a row selected with k_record_columns.
Result<Record> record_of(const SqlStatement& row, const std::string& where);

// Each record a statement selecting k_record_columns gives, in its order.
Status each_record(SqlStatement& q, const std::string& where, const HistoryDb::RecordVisitor& visit);

// Every record a statement selecting k_record_columns gives, in its order.
Result<std::vector<Record>> all_records(SqlStatement& q, const std::string& where);

// Binds `r` to a k_insert_record statement.
Status bind_record(SqlStatement& insert, const Record& r);

}  // namespace arec::history_sql
