#include "store/history.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace arec
