#include "store/maintenance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "store/uploads.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;

bool names_a_problem(const CheckReport& report, const std::string& part) {
  return std::ranges::any_of(report.problems, [&](const std::string& p) { return p.find(part) != std::string::npos; });
}

class MaintenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::open(dir());
    ASSERT_TRUE(store) << store.error().message;
    m_store.emplace(std::move(*store));
  }

  fs::Path dir() const { return m_tmp / "store"; }

  // An image of one layer holding `content`, committed as the latest of mesh/`name`.
  Record record(const std::string& name, const std::string& content) {
    auto layer = m_store->put_blob(content, media_type::k_layer_tar);
    EXPECT_TRUE(layer);
    ImageConfig config;
    config.architecture = "amd64";
    config.os = "linux";
    config.diff_ids.push_back(layer->digest);
    auto config_blob = m_store->put_blob(canonical_json(to_json(config)).value(), media_type::k_config);
    Manifest manifest;
    manifest.config = *config_blob;
    manifest.layers.push_back(*layer);
    auto manifest_blob = m_store->put_blob(canonical_json(to_json(manifest)).value(), media_type::k_manifest);
    Record r{"mesh", name, *manifest_blob, now_rfc3339(), "", "", "", ""};
    auto committed = m_store->with_writer([&](StoreWriter& writer) { return writer.commit(r); });
    EXPECT_TRUE(committed) << committed.error().message;
    return r;
  }

  // gc as `arec gc` runs it: on a store opened by a reader, recorders kept out.
  Result<GcReport> gc(std::size_t keep, DryRun dry_run) {
    m_store.reset();  // an open store holds writers.lock shared, which gc takes alone
    auto store = Store::open_existing(dir());
    if (!store) return fail(store.error());
    auto report = store->with_writer([&](StoreWriter& writer) { return collect_garbage(writer, keep, dry_run); },
                                     BlobWriters::excluded);
    m_store.emplace(std::move(*store));
    return report;
  }

  CheckReport check() {
    auto report = check_store(*m_store);
    EXPECT_TRUE(report) << report.error().message;
    return report ? *report : CheckReport{};
  }

  TempDir m_tmp;
  std::optional<Store> m_store;
};

TEST_F(MaintenanceTest, GcRemovesWhatNothingNamesAndKeepsWhatARecordNeeds) {
  const auto kept = record("app", "the layer of a record");
  auto manifest = m_store->read_manifest(kept.manifest);
  ASSERT_TRUE(manifest);
  auto stray = m_store->put_blob("a blob no record names", media_type::k_layer_tar);
  ASSERT_TRUE(stray);
  const auto stray_path = m_store->blob_path(stray->digest);

  auto dry = gc(0, DryRun::yes);
  ASSERT_TRUE(dry) << dry.error().message;
  EXPECT_EQ(dry->blobs_removed, 1U);
  EXPECT_TRUE(std::filesystem::exists(stray_path)) << "a dry run removes nothing";

  auto report = gc(0, DryRun::no);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->blobs_removed, 1U);
  EXPECT_EQ(report->bytes_removed, stray->size);
  EXPECT_FALSE(std::filesystem::exists(stray_path));
  for (const auto& blob : blobs_of(*manifest)) EXPECT_TRUE(m_store->has_blob(blob)) << blob.digest.str();
  EXPECT_TRUE(m_store->has_blob(kept.manifest));
  EXPECT_TRUE(check().ok());
}

TEST_F(MaintenanceTest, GcRemovesTheNotesOfUploadsNoPushCanGoOnWith) {
  const auto kept = record("app", "the layer of a record");
  auto manifest = m_store->read_manifest(kept.manifest);
  ASSERT_TRUE(manifest);
  const Digest layer = manifest->layers.front().digest;
  auto stray = m_store->put_blob("a blob no record names", media_type::k_layer_tar);
  ASSERT_TRUE(stray);
  const auto path = [&](std::string_view repository, const Digest& blob) {
    return m_store->uploads_dir() / (blob.hex() + "-" + digest_of(repository).hex().substr(0, 16));
  };
  const auto note = [&](std::string_view repository, const Digest& blob, std::chrono::hours age) {
    auto n = UploadNote::claim(*m_store, repository, blob);
    ASSERT_TRUE(n);
    n->save({"/v2/" + std::string(repository) + "/blobs/uploads/1", 5});
    std::filesystem::last_write_time(path(repository, blob), std::filesystem::file_time_type::clock::now() - age);
  };
  const auto notes = [&] {
    std::set<fs::Path> found;
    for (const auto& e : std::filesystem::directory_iterator(m_store->uploads_dir())) found.insert(e.path());
    return found;
  };
  const std::chrono::hours day{24};
  note("mesh/fresh", layer, 6 * day);                    // kept: a push may go on with it
  note("mesh/stray", stray->digest, 0 * day);            // its blob goes with this gc
  note("mesh/old", layer, 8 * day);                      // untouched for longer than the registry keeps a session
  { UploadNote::claim(*m_store, "mesh/empty", layer); }  // claimed, never written
  note("mesh/held", layer, 8 * day);
  auto held = UploadNote::claim(*m_store, "mesh/held", layer);  // a push uploading it now
  ASSERT_TRUE(held);
  // Planted by someone who can write the store: a fresh note of a kept blob whose path is another
  // repository's manifest, and a valid note in the file of another repository.
  const std::string of = R"({"repository":"mesh/app","blob":")" + layer.str() + R"(",)";
  test::write_file(path("mesh/app", layer), of + R"("path":"/v2/mesh/team/manifests/latest","offset":5})");
  test::write_file(path("mesh/team", layer), of + R"("path":"/v2/mesh/app/blobs/uploads/1","offset":5})");
  const auto before = notes();
  ASSERT_EQ(before.size(), 7U);

  auto dry = gc(0, DryRun::yes);
  ASSERT_TRUE(dry) << dry.error().message;
  EXPECT_EQ(dry->upload_notes_removed, 5U);
  EXPECT_EQ(notes(), before) << "a dry run removes nothing";

  auto report = gc(0, DryRun::no);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->upload_notes_removed, 5U);
  EXPECT_EQ(notes(), (std::set<fs::Path>{path("mesh/fresh", layer), path("mesh/held", layer)}));
  auto fresh = UploadNote::claim(*m_store, "mesh/fresh", layer);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->session()->offset, 5);
}

TEST_F(MaintenanceTest, GcKeepingOneDropsTheOlderRecordsAndTheirBlobs) {
  const auto old = record("app", "old layer");
  const auto now = record("app", "new layer");
  auto old_manifest = m_store->read_manifest(old.manifest);
  ASSERT_TRUE(old_manifest);
  auto report = gc(1, DryRun::no);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->records_dropped, 1U);
  EXPECT_FALSE(m_store->has_blob(old.manifest));
  EXPECT_FALSE(m_store->has_blob(old_manifest->layers.front()));
  EXPECT_TRUE(m_store->holds_image(now.manifest));
  auto history = m_store->history_of("mesh", "app");
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 1U);
  EXPECT_EQ(history->front().manifest.digest, now.manifest.digest);
  EXPECT_TRUE(check().ok()) << "index.json was rewritten with the history";
}

TEST_F(MaintenanceTest, GcRefusesAWriterThatLetsRecordersAddBlobs) {
  record("app", "a layer");
  auto report = m_store->with_writer([](StoreWriter& writer) { return collect_garbage(writer, 0, DryRun::no); });
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("a recorder may be adding blobs"), std::string::npos) << report.error().message;
}

TEST_F(MaintenanceTest, CheckNamesAMissingBlob) {
  const auto r = record("app", "a layer that goes missing");
  EXPECT_TRUE(check().ok());
  auto manifest = m_store->read_manifest(r.manifest);
  ASSERT_TRUE(manifest);
  const auto layer = m_store->blob_path(manifest->layers.front().digest);
  std::filesystem::remove(layer);
  const auto report = check();
  EXPECT_FALSE(report.ok());
  EXPECT_TRUE(names_a_problem(report, layer.string() + ": missing")) << ::testing::PrintToString(report.problems);
}

TEST_F(MaintenanceTest, CheckNamesAnEditedViewAndRepairRewritesIt) {
  record("app", "a layer");
  const auto index = dir() / "index.json";
  const auto written = read_file(index);
  // Of the same generation (else it reads as left behind), its record gone.
  auto edited = nlohmann::json::parse(written);
  edited["manifests"] = nlohmann::json::array();
  write_file(index, edited.dump());
  auto report = check();
  EXPECT_TRUE(names_a_problem(report, index.string() + ": does not match the history"))
      << ::testing::PrintToString(report.problems);

  auto repaired = m_store->with_writer([](StoreWriter& writer) { return repair_store(writer); });
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_TRUE(repaired->index_rewritten);
  EXPECT_EQ(read_file(index), written);
  EXPECT_TRUE(check().ok());
}

TEST_F(MaintenanceTest, AViewLeftBehindIsNoProblemAndRepairBringsItUpToDate) {
  record("app", "v1");
  const auto index = dir() / "index.json";
  const auto behind = read_file(index);
  record("app", "v2");
  const auto current = read_file(index);
  ASSERT_NE(behind, current);
  // As a writer killed between its commit and rewriting the view leaves it.
  write_file(index, behind);
  auto report = check();
  EXPECT_TRUE(report.ok()) << ::testing::PrintToString(report.problems);
  EXPECT_TRUE(report.index_behind);

  auto repaired = m_store->with_writer([](StoreWriter& writer) { return repair_store(writer); });
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_TRUE(repaired->index_rewritten);
  EXPECT_EQ(read_file(index), current);
  EXPECT_FALSE(check().index_behind);
}

TEST_F(MaintenanceTest, CheckNamesAMissingViewAndRepairWritesIt) {
  record("app", "a layer");
  const auto index = dir() / "index.json";
  const auto written = read_file(index);
  std::filesystem::remove(index);
  auto report = check();
  EXPECT_TRUE(names_a_problem(report, index.string() + ": missing")) << ::testing::PrintToString(report.problems);
  auto repaired = m_store->with_writer([](StoreWriter& writer) { return repair_store(writer); });
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_EQ(read_file(index), written);
}

}  // namespace
}  // namespace arec
