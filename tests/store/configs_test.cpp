// Which record "the latest of module/name" means when its records are of several build configurations:
// choose_config on its own, and the store reading each configuration's latest (ARCHITECTURE.md,
// "Configurations").
#include <gtest/gtest.h>

#include "recorder/image.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

TEST(ChooseConfig, OneConfigurationMeansAnyRecordAsBefore) {
  auto chosen = choose_config("mesh/app", {"Debug"}, ConfigChoice{});
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_FALSE(chosen->config);
  EXPECT_TRUE(chosen->note.empty());
  auto none = choose_config("mesh/app", {""}, ConfigChoice{});
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->config);
}

TEST(ChooseConfig, SeveralUseTheDefaultAndSaySo) {
  auto chosen = choose_config("mesh/app", {"Debug", "Release"}, ConfigChoice{});
  ASSERT_TRUE(chosen) << chosen.error().message;
  EXPECT_EQ(chosen->config, "Release");
  EXPECT_EQ(chosen->note,
            "mesh/app has records of Debug, Release: using the default configuration, Release (choose another with "
            "--config)");
  auto other = choose_config("mesh/app", {"Debug", "Release"}, ConfigChoice{std::nullopt, "Debug"});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->config, "Debug");
}

TEST(ChooseConfig, SeveralWithoutTheDefaultIsAnError) {
  auto chosen = choose_config("mesh/app", {"Debug", "MinSizeRel"}, ConfigChoice{});
  ASSERT_FALSE(chosen);
  EXPECT_EQ(chosen.error().message,
            "mesh/app has records of Debug, MinSizeRel and none of the default configuration Release: choose one with "
            "--config NAME "
            "(or set AREC_DEFAULT_CONFIG)");
}

TEST(ChooseConfig, AskedForIsThatOneOrAnErrorNamingThoseRecorded) {
  auto debug = choose_config("mesh/app", {"Debug", "Release"}, ConfigChoice{"Debug"});
  ASSERT_TRUE(debug);
  EXPECT_EQ(debug->config, "Debug");
  EXPECT_TRUE(debug->note.empty());
  auto missing = choose_config("mesh/app", {"Debug", "Release"}, ConfigChoice{"RelWithDebInfo"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            "mesh/app: no record of configuration RelWithDebInfo (its records are of Debug, Release)");
  // Records naming no configuration serve every one.
  auto unnamed = choose_config("mesh/app", {""}, ConfigChoice{"Release"});
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->config, "");
}

TEST(ChooseConfig, LatestTagsAndNames) {
  EXPECT_EQ(latest_tag("Debug", {"Debug"}, "Release"), "latest");
  EXPECT_EQ(latest_tag("Release", {"Debug", "Release"}, "Release"), "latest");
  EXPECT_EQ(latest_tag("RelWithDebInfo", {"RelWithDebInfo", "Release"}, "Release"), "latest-relwithdebinfo");
  EXPECT_EQ(latest_tag("", {"", "Release"}, "Release"), "latest-none");
  EXPECT_TRUE(is_config_name("Release"));
  EXPECT_TRUE(is_config_name("my_Config2"));
  EXPECT_FALSE(is_config_name(""));
  EXPECT_FALSE(is_config_name("Re lease"));
  EXPECT_FALSE(is_config_name("a-b"));
  EXPECT_FALSE(is_config_name(std::string(65, 'a')));
}

RecordRequest request(const std::filesystem::path& source, std::string config) {
  RecordRequest r;
  r.module = "mesh";
  r.name = "app";
  r.entries = *collect_entries({*parse_layer_input(LayerInput::Kind::directory, source.string() + "=/srv")});
  r.config = std::move(config);
  r.revision = "0123456789abcdef0123456789abcdef01234567";
  return r;
}

Digest record(Store& store, const TempDir& tmp, const std::string& content, const std::string& config) {
  write_file(tmp / "src/app", content);
  auto outcome = record_image(request(tmp / "src", config), store);
  EXPECT_TRUE(outcome) << outcome.error().message;
  return outcome->record.manifest.digest;
}

TEST(StoreConfigs, ADebugBuildLeavesTheReleaseLatestAsItWas) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  const auto release = record(*store, tmp, "release v1", "Release");
  const auto debug = record(*store, tmp, "debug v1", "Debug");
  auto chosen = store->latest("mesh", "app", ConfigChoice{});
  ASSERT_TRUE(chosen) << chosen.error().message;
  ASSERT_TRUE(chosen->record);
  EXPECT_EQ(chosen->record->manifest.digest, release);
  EXPECT_NE(chosen->note, "");
  auto asked = store->latest("mesh", "app", ConfigChoice{"Debug"});
  ASSERT_TRUE(asked && asked->record);
  EXPECT_EQ(asked->record->manifest.digest, debug);
  std::vector<std::string> notes;
  auto listed = store->latest_records(ConfigChoice{}, notes);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1U);
  EXPECT_EQ(listed->front().manifest.digest, release);
  EXPECT_EQ(notes.size(), 1U);
  auto every = store->config_latest_records(ConfigChoice{});
  ASSERT_TRUE(every);
  EXPECT_EQ(every->size(), 2U);
}

TEST(StoreConfigs, TheSameBytesInAnotherConfigurationAreRecordedForIt) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  const auto debug = record(*store, tmp, "same", "Debug");
  const auto release = record(*store, tmp, "same", "Release");
  EXPECT_EQ(debug, release);
  auto asked = store->latest("mesh", "app", ConfigChoice{"Release"});
  ASSERT_TRUE(asked) << asked.error().message;
  ASSERT_TRUE(asked->record);
  EXPECT_EQ(asked->record->config, "Release");
}

TEST(StoreConfigs, GcKeepsNOfEachConfiguration) {
  TempDir tmp;
  std::optional<Store> store;
  store.emplace(*Store::open(tmp / "store"));
  ASSERT_TRUE(store);
  const auto release = record(*store, tmp, "release v1", "Release");
  record(*store, tmp, "debug v1", "Debug");
  const auto debug = record(*store, tmp, "debug v2", "Debug");
  store.reset();  // a writer holds the writers' lock, which gc takes alone
  auto reader = Store::open_existing(tmp / "store");
  ASSERT_TRUE(reader);
  auto report = reader->with_writer([](StoreWriter& writer) { return collect_garbage(writer, 1, DryRun::no); },
                                    BlobWriters::excluded);
  ASSERT_TRUE(report) << report.error().message;
  auto history = reader->history_of("mesh", "app");
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 2U);
  EXPECT_EQ((*history)[0].manifest.digest, release);
  EXPECT_EQ((*history)[1].manifest.digest, debug);
}

TEST(StoreConfigs, RemovingAConfigurationsNewestGivesItsPreviousBack) {
  TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store);
  const auto v1 = record(*store, tmp, "release v1", "Release");
  const auto v2 = record(*store, tmp, "release v2", "Release");
  record(*store, tmp, "debug v1", "Debug");
  ASSERT_TRUE(store->with_writer([&](StoreWriter& writer) { return writer.remove("mesh", "app", v2); }));
  auto asked = store->latest("mesh", "app", ConfigChoice{"Release"});
  ASSERT_TRUE(asked && asked->record);
  EXPECT_EQ(asked->record->manifest.digest, v1);
}

}  // namespace
}  // namespace arec
