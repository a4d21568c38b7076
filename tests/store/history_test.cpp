#include "store/history.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;

// A record of module/name whose manifest is named by `content` (the history keeps descriptors, not blobs).
Record record_of(const std::string& module, const std::string& name, const std::string& content,
                 const std::string& config = "", const std::string& recorded = "2026-01-01T00:00:00Z") {
  Descriptor manifest{std::string(media_type::k_manifest),
                      digest_of(content),
                      static_cast<std::int64_t>(content.size()),
                      {},
                      {},
                      {},
                      {}};
  return Record{module, name, manifest, recorded, "t-" + name, config, "", ""};
}

Record with_platform(Record r, const std::string& architecture) {
  r.manifest.platform = Platform{architecture, "linux", ""};
  return r;
}

// The rows `sql` selects from the database at `path`, each its columns joined by spaces, through a
// connection of its own (as another process, or an older arec, would see it).
std::vector<std::string> query(const fs::Path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::vector<std::string> rows;
  char* message = nullptr;
  const auto collect = [](void* out, int n, char** values, char**) {
    std::string row;
    for (int i = 0; i < n; ++i) row += std::string(i == 0 ? "" : " ") + (values[i] != nullptr ? values[i] : "NULL");
    static_cast<std::vector<std::string>*>(out)->push_back(row);
    return 0;
  };
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), collect, &rows, &message), SQLITE_OK) << (message ? message : "") << sql;
  sqlite3_free(message);
  sqlite3_close(db);
  return rows;
}

// The seqs of the heads, and those the latest, configurations and platforms name: the same, always.
std::pair<std::vector<std::string>, std::vector<std::string>> heads_and_named(const fs::Path& path) {
  return {
      query(path, "SELECT seq FROM heads ORDER BY seq"),
      query(path, "SELECT seq FROM latest UNION SELECT seq FROM configs UNION SELECT seq FROM platforms ORDER BY seq")};
}

class HistoryTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open() {
    if (!std::filesystem::exists(path())) {
      ASSERT_TRUE(HistoryDb::create(path(), Index{}));
    }
    auto db = HistoryDb::open(path(), DbAccess::write);
    ASSERT_TRUE(db) << db.error().message;
    m_db = std::move(*db);
  }

  fs::Path path() const { return m_dir / "history.db"; }

  // Appends each record in one transaction, as a writer commits them.
  void append(const std::vector<Record>& records) {
    auto s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
      for (const auto& r : records) {
        if (auto a = m_db->append(r); !a) return fail(a.error());
      }
      if (auto b = m_db->bump_generation(); !b) return fail(b.error());
      return HistoryDb::Outcome::commit;
    });
    ASSERT_TRUE(s) << s.error().message;
  }

  std::vector<std::string> all_identities() const {
    std::vector<std::string> out;
    auto s = m_db->for_each_record([&](Record&& r) -> Status {
      out.push_back(r.identity());
      return {};
    });
    EXPECT_TRUE(s);
    return out;
  }

  std::vector<std::string> latest_identities() const {
    std::vector<std::string> out;
    auto s = m_db->for_each_latest([&](Record&& r) -> Status {
      out.push_back(r.identity());
      return {};
    });
    EXPECT_TRUE(s);
    return out;
  }

  // Runs `work` in one committed transaction.
  void change(const std::function<Status()>& work) {
    auto s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
      if (auto w = work(); !w) return fail(w.error());
      return HistoryDb::Outcome::commit;
    });
    ASSERT_TRUE(s) << s.error().message;
  }

  // The heads are copies of exactly the records the latest, configurations and platforms name, and
  // the database says it holds together.
  void expect_heads_in_step(const std::string& after) {
    const auto [heads, named] = heads_and_named(path());
    EXPECT_EQ(heads, named) << "after " << after;
    EXPECT_FALSE(heads.empty()) << "after " << after;
    auto problems = m_db->integrity_problems();
    ASSERT_TRUE(problems) << problems.error().message;
    EXPECT_TRUE(problems->empty()) << "after " << after << ": " << problems->front();
  }

  TempDir m_dir;
  std::shared_ptr<HistoryDb> m_db;
};

TEST_F(HistoryTest, RecordsComeBackInTheOrderTheyWereMade) {
  const auto a1 = record_of("mesh", "a", "a v1");
  const auto b1 = record_of("mesh", "b", "b v1");
  const auto a2 = record_of("mesh", "a", "a v2");
  append({a1});
  append({b1, a2});
  EXPECT_EQ(all_identities(), (std::vector<std::string>{a1.identity(), b1.identity(), a2.identity()}));
  // The latest of each module/name, in the order each became latest: b, then a (again).
  EXPECT_EQ(latest_identities(), (std::vector<std::string>{b1.identity(), a2.identity()}));
  auto history = m_db->history_of("mesh", "a");
  ASSERT_TRUE(history) << history.error().message;
  ASSERT_EQ(history->size(), 2U);
  EXPECT_EQ((*history)[0].manifest.digest, a1.manifest.digest);
  EXPECT_EQ((*history)[1].manifest.digest, a2.manifest.digest);
  auto latest = m_db->latest("mesh", "a");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->manifest.digest, a2.manifest.digest);
  auto none = m_db->latest("mesh", "nothing");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  auto generation = m_db->generation();
  ASSERT_TRUE(generation);
  EXPECT_EQ(*generation, 2) << "one bump per committed transaction";
}

TEST_F(HistoryTest, EachConfigurationKeepsItsOwnNewest) {
  const auto release1 = record_of("mesh", "app", "release v1", "Release");
  const auto debug1 = record_of("mesh", "app", "debug v1", "Debug");
  const auto release2 = record_of("mesh", "app", "release v2", "Release");
  append({release1, debug1, release2});
  auto lines = m_db->config_latest_of("mesh", "app");
  ASSERT_TRUE(lines) << lines.error().message;
  ASSERT_EQ(lines->size(), 2U);
  std::map<std::string, Digest> by_config;
  for (const auto& r : *lines) by_config.emplace(r.config, r.manifest.digest);
  EXPECT_EQ(by_config.at("Release"), release2.manifest.digest);
  EXPECT_EQ(by_config.at("Debug"), debug1.manifest.digest) << "a newer Release build leaves Debug's newest as it was";
  auto latest = m_db->latest("mesh", "app");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->manifest.digest, release2.manifest.digest) << "the latest is the newest of any configuration";
}

TEST_F(HistoryTest, RemovingTheNewestMakesTheNewestLeftTheLatest) {
  const auto v1 = record_of("mesh", "app", "v1");
  const auto v2 = record_of("mesh", "app", "v2");
  const auto other = record_of("mesh", "other", "other v1");
  append({v1, v2, other});
  std::size_t removed = 0;
  auto s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto n = m_db->remove("mesh", "app", v2.manifest.digest);
    if (!n) return fail(n.error());
    removed = *n;
    return HistoryDb::Outcome::commit;
  });
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(removed, 1U);
  auto latest = m_db->latest("mesh", "app");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->manifest.digest, v1.manifest.digest);
  EXPECT_EQ(all_identities(), (std::vector<std::string>{v1.identity(), other.identity()}));

  // Removing all of module/name leaves it without a latest; the others are untouched.
  s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto n = m_db->remove("mesh", "app", std::nullopt);
    if (!n) return fail(n.error());
    removed = *n;
    return HistoryDb::Outcome::commit;
  });
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(removed, 1U);
  auto gone = m_db->latest("mesh", "app");
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
  EXPECT_EQ(latest_identities(), (std::vector<std::string>{other.identity()}));
}

TEST_F(HistoryTest, ARolledBackTransactionLeavesNothing) {
  const auto v1 = record_of("mesh", "app", "v1");
  append({v1});
  auto s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
    if (auto a = m_db->append(record_of("mesh", "app", "v2")); !a) return fail(a.error());
    return HistoryDb::Outcome::roll_back;
  });
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(all_identities(), (std::vector<std::string>{v1.identity()}));
}

TEST_F(HistoryTest, AReopenedDatabaseHoldsWhatWasCommitted) {
  const auto a1 = record_of("mesh", "a", "a v1", "Release");
  const auto b1 = record_of("mesh", "b", "b v1");
  const auto a2 = record_of("mesh", "a", "a v2", "Debug");
  append({a1, b1});
  append({a2});
  Descriptor sbom{
      "application/vnd.oci.image.manifest.v1+json", digest_of("sbom"), 4, "application/spdx+json", {}, {}, {}};
  sbom.annotations.emplace(annotation::k_subject, a2.manifest.digest.str());
  auto s = m_db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto added = m_db->add_other(sbom);
    if (!added) return fail(added.error());
    return HistoryDb::Outcome::commit;
  });
  ASSERT_TRUE(s);
  m_db.reset();

  auto reader = HistoryDb::open(path(), DbAccess::read);
  ASSERT_TRUE(reader) << reader.error().message;
  m_db = std::move(*reader);
  EXPECT_EQ(all_identities(), (std::vector<std::string>{a1.identity(), b1.identity(), a2.identity()}));
  EXPECT_EQ(latest_identities(), (std::vector<std::string>{b1.identity(), a2.identity()}));
  auto lines = m_db->config_latest_of("mesh", "a");
  ASSERT_TRUE(lines);
  EXPECT_EQ(lines->size(), 2U);
  auto referrers = m_db->others(a2.manifest.digest.str());
  ASSERT_TRUE(referrers);
  ASSERT_EQ(referrers->size(), 1U);
  EXPECT_EQ(referrers->front().digest, sbom.digest);
  auto generation = m_db->generation();
  ASSERT_TRUE(generation);
  EXPECT_EQ(*generation, 2);
}

// Each older format is brought to the current one on opening, with every record and the latest of each.
TEST_F(HistoryTest, UpgradingAnOlderFormatKeepsEveryRecordAndTheLatestOfEach) {
  append({record_of("mesh", "a", "a v1", "Release"), with_platform(record_of("mesh", "b", "b amd64"), "amd64"),
          record_of("mesh", "a", "a v2", "Debug")});
  append({with_platform(record_of("mesh", "b", "b arm64"), "arm64"), record_of("mesh", "c", "c v1")});
  change([&] { return m_db->set_platforms("mesh", "b", {"linux/amd64", "linux/arm64"}); });
  append({record_of("mesh", "a", "a v3", "Release")});
  const auto all = all_identities();
  const auto latest = latest_identities();
  const auto configs = m_db->config_latest_of("mesh", "a");
  ASSERT_TRUE(configs);
  ASSERT_EQ(configs->size(), 2U);
  const auto platforms = m_db->platform_set("mesh", "b");
  ASSERT_TRUE(platforms);
  ASSERT_EQ(platforms->size(), 2U);
  const auto [heads, named] = heads_and_named(path());
  m_db.reset();

  for (const int format : {4, 3, 2}) {
    // What an arec of that format left: no heads, and before 4 no configs, before 3 no platforms.
    std::string older = "DROP TABLE heads; PRAGMA user_version = " + std::to_string(format) + ";";
    if (format <= 3) older += "DROP TABLE configs;";
    if (format <= 2) older += "DROP TABLE platforms;";
    query(path(), older);
    ASSERT_EQ(query(path(), "PRAGMA user_version"), std::vector<std::string>{std::to_string(format)});

    open();
    EXPECT_EQ(query(path(), "PRAGMA user_version"), std::vector<std::string>{std::to_string(k_store_format)});
    EXPECT_EQ(all_identities(), all) << "format " << format;
    EXPECT_EQ(latest_identities(), latest) << "format " << format;
    auto lines = m_db->config_latest_of("mesh", "a");
    ASSERT_TRUE(lines);
    EXPECT_EQ(lines->size(), configs->size()) << "format " << format;
    auto set = m_db->platform_set("mesh", "b");
    ASSERT_TRUE(set);
    // Format 2 had one image per module/name, its latest record.
    EXPECT_EQ(set->size(), format == 2 ? 1U : 2U) << "format " << format;
    if (format > 2) {
      EXPECT_EQ(heads_and_named(path()).first, heads) << "format " << format;
    }
    expect_heads_in_step("the upgrade from format " + std::to_string(format));
    m_db.reset();
  }
}

TEST_F(HistoryTest, TheHeadsStayInStepWithEveryChange) {
  append({record_of("mesh", "a", "a v1", "Release"), record_of("mesh", "a", "a v2", "Debug")});
  expect_heads_in_step("two appends in one transaction");
  // As a pull commits what it fetched: several records and a referrer in one transaction.
  Descriptor sbom{
      "application/vnd.oci.image.manifest.v1+json", digest_of("sbom"), 4, "application/spdx+json", {}, {}, {}};
  change([&]() -> Status {
    for (const auto& r :
         {with_platform(record_of("mesh", "b", "b amd64"), "amd64"),
          with_platform(record_of("mesh", "b", "b arm64"), "arm64"), record_of("mesh", "a", "a v3", "Release")}) {
      if (auto a = m_db->append(r); !a) return a;
    }
    auto added = m_db->add_other(sbom);
    if (!added) return fail(added.error());
    return {};
  });
  expect_heads_in_step("a pull's commit");
  change([&] { return m_db->set_platforms("mesh", "b", {"linux/amd64", "linux/arm64"}); });
  expect_heads_in_step("set_platforms over two");
  auto latest = m_db->latest("mesh", "b");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->manifest.digest, digest_of("b arm64"));
  change([&] { return m_db->set_platforms("mesh", "b", {"linux/amd64"}); });
  expect_heads_in_step("set_platforms back to one");

  append({record_of("mesh", "a", "a v4", "Release"), record_of("mesh", "a", "a v5", "Release")});
  change([&]() -> Status {
    auto n = m_db->trim(1);
    if (!n) return fail(n.error());
    EXPECT_GT(*n, 0U);
    return {};
  });
  expect_heads_in_step("trim");
  change([&]() -> Status {
    auto n = m_db->remove("mesh", "a", digest_of("a v5"));
    if (!n) return fail(n.error());
    return {};
  });
  expect_heads_in_step("removing the latest");
  latest = m_db->latest("mesh", "a");
  ASSERT_TRUE(latest && *latest);
  EXPECT_EQ((*latest)->manifest.digest, digest_of("a v2")) << "the newest left, of any configuration";
  change([&]() -> Status {
    auto n = m_db->remove("mesh", "b", digest_of("b amd64"));
    if (!n) return fail(n.error());
    return {};
  });
  expect_heads_in_step("removing a platform's record");
  change([&]() -> Status {
    auto n = m_db->remove("mesh", "a", std::nullopt);
    if (!n) return fail(n.error());
    return {};
  });
  expect_heads_in_step("removing all of a module/name");
  EXPECT_TRUE(query(path(), "SELECT seq FROM heads WHERE module = 'mesh' AND name = 'a'").empty());
  EXPECT_EQ(latest_identities().size(), 1U);
}

TEST_F(HistoryTest, IntegrityProblemsFlagABrokenHeadsRow) {
  append({record_of("mesh", "a", "a v1"), record_of("mesh", "a", "a v2"), record_of("mesh", "b", "b v1")});
  auto problems = m_db->integrity_problems();
  ASSERT_TRUE(problems);
  ASSERT_TRUE(problems->empty()) << problems->front();
  const auto expect_flagged = [&](const std::string& breakage, const std::string& said) {
    auto found = m_db->integrity_problems();
    ASSERT_TRUE(found) << found.error().message;
    ASSERT_EQ(found->size(), 1U) << breakage;
    EXPECT_NE(found->front().find(said), std::string::npos) << breakage << ": " << found->front();
  };
  const std::string a2 = "(SELECT seq FROM latest WHERE module = 'mesh' AND name = 'a')";
  query(path(), "UPDATE heads SET digest = 'sha256:" + std::string(64, '0') + "' WHERE seq = " + a2);
  expect_flagged("a copy that differs", "differs from the record");
  query(path(), "DELETE FROM heads WHERE seq = " + a2);
  expect_flagged("a missing copy", "the heads hold no copy of it");
  query(path(), "INSERT INTO heads SELECT * FROM records WHERE seq = " + a2);
  auto fixed = m_db->integrity_problems();
  ASSERT_TRUE(fixed);
  EXPECT_TRUE(fixed->empty());
  query(path(), "INSERT INTO heads SELECT * FROM records WHERE module = 'mesh' AND name = 'a' AND seq < " + a2);
  expect_flagged("a copy of an older record", "no latest, configuration or platform names");
}

}  // namespace
}  // namespace arec
