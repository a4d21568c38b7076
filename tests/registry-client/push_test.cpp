#include "registry-client/push.hpp"

#include <gtest/gtest.h>

#include "support/record_request.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

// ---- push planning -------------------------------------------------------------------------------

Descriptor blob(char fill, std::int64_t size) {
  return Descriptor{
      "application/octet-stream", *Digest::parse("sha256:" + std::string(64, fill)), size, {}, {}, {}, {}};
}

// The planned blobs as "digest-letter:repository,repository" in the order they go.
std::vector<std::string> order(const BlobPlan& plan) {
  std::vector<std::string> out;
  for (const auto& b : plan.blobs) {
    std::string line(1, b.blob.digest.hex().front());
    line += ':';
    for (std::size_t i = 0; i < b.repositories.size(); ++i) line += (i ? "," : "") + b.repositories[i];
    out.push_back(line);
  }
  return out;
}

// A push cut off sends the chunk it was in again: by default a 32nd of a large blob, within 8 to 64 MiB.
TEST(ChunkSize, ByDefaultAThirtySecondOfTheBlobFrom8To64MiB) {
  constexpr std::int64_t MiB = std::int64_t{1} << 20;
  EXPECT_EQ(chunk_size_for(3 * MiB, 0), 8 * MiB);
  EXPECT_EQ(chunk_size_for(300 * MiB, 0), 300 * MiB / 32);
  EXPECT_EQ(chunk_size_for(1024 * MiB, 0), 32 * MiB);
  EXPECT_EQ(chunk_size_for(10240 * MiB, 0), 64 * MiB);
  EXPECT_EQ(chunk_size_for(300 * MiB, 256 * 1024), 256 * 1024);  // chosen: as chosen
}

TEST(PushPlan, LargestFirstEachBlobOnce) {
  // A layer listed twice in one manifest is still sent once.
  const auto plan = plan_blobs({{"mesh/app", {blob('c', 300), blob('a', 10), blob('b', 5000), blob('a', 10)}, false}});
  EXPECT_EQ(order(plan), (std::vector<std::string>{"b:mesh/app", "c:mesh/app", "a:mesh/app"}));
  EXPECT_EQ(plan.skipped, 0);
  EXPECT_EQ(plan.blobs.front().blob.size, 5000) << "the whole descriptor travels with the job";
}

TEST(PushPlan, EqualSizesKeepTheImagesOrder) {
  const auto plan =
      plan_blobs({{"mesh/one", {blob('d', 7), blob('a', 7)}, false}, {"mesh/two", {blob('c', 7)}, false}});
  EXPECT_EQ(order(plan), (std::vector<std::string>{"d:mesh/one", "a:mesh/one", "c:mesh/two"}));
}

TEST(PushPlan, ASharedBlobIsOneJobForEveryRepositoryThatNeedsIt) {
  // Two images on the same base layer (e), one of them pushed twice to its repository.
  const auto plan = plan_blobs({{"mesh/app", {blob('1', 100), blob('e', 9000), blob('2', 50)}, false},
                                {"mesh/tool", {blob('3', 100), blob('e', 9000), blob('4', 60)}, false},
                                {"mesh/app", {blob('5', 100), blob('e', 9000), blob('2', 50)}, false}});
  EXPECT_EQ(order(plan), (std::vector<std::string>{"e:mesh/app,mesh/tool", "1:mesh/app", "3:mesh/tool", "5:mesh/app",
                                                   "4:mesh/tool", "2:mesh/app"}));
}

TEST(PushPlan, ImagesTheRegistryHoldsSendNothingAndCountAsSkipped) {
  const auto plan = plan_blobs({{"mesh/app", {blob('1', 100), blob('e', 9000)}, true},
                                {"mesh/tool", {blob('3', 100), blob('e', 9000), blob('4', 60)}, false}});
  // The present image's blobs are skipped unasked, even the one the other image still sends.
  EXPECT_EQ(plan.skipped, 2);
  EXPECT_EQ(order(plan), (std::vector<std::string>{"e:mesh/tool", "3:mesh/tool", "4:mesh/tool"}));
  const auto none =
      plan_blobs({{"mesh/app", {blob('1', 100), blob('e', 9000)}, true}, {"mesh/app", {blob('1', 100)}, true}});
  EXPECT_TRUE(none.blobs.empty());
  EXPECT_EQ(none.skipped, 3);
  EXPECT_TRUE(plan_blobs({}).blobs.empty());
}

Manifest manifest_of(std::vector<Descriptor> blobs) {
  Manifest m;
  m.config = blobs.front();
  m.layers.assign(blobs.begin() + 1, blobs.end());
  return m;
}

TEST(MountSources, AnotherRepositoryThatUsesTheBlobPreferredInOrderAdded) {
  MountSources sources;
  sources.add("mesh/new", manifest_of({blob('1', 1), blob('e', 9)}));
  sources.add("mesh/old", manifest_of({blob('2', 1), blob('e', 9), blob('f', 3)}));
  EXPECT_EQ(sources.candidate(blob('e', 9).digest, "mesh/app"), "mesh/new");
  EXPECT_EQ(sources.candidate(blob('e', 9).digest, "mesh/new"), "mesh/old") << "never the repository being pushed to";
  EXPECT_EQ(sources.candidate(blob('2', 1).digest, "mesh/app"), "mesh/old") << "configs are blobs too";
  EXPECT_EQ(sources.candidate(blob('f', 3).digest, "mesh/old"), std::nullopt);
  EXPECT_EQ(sources.candidate(blob('9', 3).digest, "mesh/app"), std::nullopt);
}

TEST(MountSources, OfAStoreOffersTheNewestRecordFirst) {
  test::TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  test::write_file(tmp / "src/shared.txt", "the same layer in two repositories");
  auto record = [&](const std::string& name) {
    auto outcome = record_image(test::plain_request(tmp / "src", "mesh", name), *store);
    EXPECT_TRUE(outcome) << outcome.error().message;
    return outcome->record;
  };
  const Record older = record("older");
  const Record newer = record("newer");
  auto manifest = store->read_manifest(newer.manifest);
  ASSERT_TRUE(manifest) << manifest.error().message;
  const Digest layer = manifest->layers.back().digest;
  const auto sources = MountSources::of(*store);
  EXPECT_EQ(sources.candidate(layer, "mesh/other"), "mesh/newer");
  EXPECT_EQ(sources.candidate(layer, "mesh/newer"), "mesh/older");
  EXPECT_EQ(sources.candidate(layer, "mesh/older"), "mesh/newer");
  EXPECT_EQ(MountSources::of(*store).candidate(older.manifest.digest, "mesh/x"), std::nullopt)
      << "manifests are not blobs to mount";
}

TEST(MountSources, NotedRepositoriesComeBeforeRecordsAndNeverTheTarget) {
  MountSources sources;
  sources.add("mesh/record", manifest_of({blob('1', 1), blob('e', 9)}));
  sources.add_noted(blob('e', 9).digest, "mesh/pushed");
  sources.add_noted(blob('e', 9).digest, "mesh/record");  // noted and recorded: offered once
  sources.add_noted(blob('e', 9).digest, "mesh/app");
  EXPECT_EQ(sources.candidate(blob('e', 9).digest, "mesh/app"), "mesh/pushed");
  EXPECT_EQ(sources.candidates(blob('e', 9).digest, "mesh/app", 5),
            (std::vector<std::string>{"mesh/pushed", "mesh/record"}));
  EXPECT_EQ(sources.candidates(blob('e', 9).digest, "mesh/pushed", 5),
            (std::vector<std::string>{"mesh/record", "mesh/app"}));
  EXPECT_EQ(sources.candidates(blob('e', 9).digest, "mesh/other", 2),
            (std::vector<std::string>{"mesh/pushed", "mesh/record"}));
  EXPECT_TRUE(sources.candidates(blob('9', 9).digest, "mesh/app", 5).empty());
}

TEST(MountSources, OfAStoreOffersWhereItsBlobsWereNotedAfterTheirRecordIsGone) {
  test::TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  test::write_file(tmp / "src/shared.txt", "a layer pushed under a name since removed");
  auto outcome = record_image(test::plain_request(tmp / "src", "mesh", "gone"), *store);
  ASSERT_TRUE(outcome) << outcome.error().message;
  auto manifest = store->read_manifest(outcome->record.manifest);
  ASSERT_TRUE(manifest) << manifest.error().message;
  const Digest layer = manifest->layers.back().digest;
  store->note_repository(layer, "mesh/gone");
  store->note_repository(layer, "other/pushed");
  ASSERT_TRUE(store->with_writer([](StoreWriter& writer) { return writer.remove("mesh", "gone", std::nullopt); }));
  EXPECT_EQ(store->repositories_holding(layer), (std::vector<std::string>{"other/pushed", "mesh/gone"}))
      << "newest first";
  const auto sources = MountSources::of(*store, {layer});
  EXPECT_EQ(sources.candidates(layer, "mesh/new", 5), (std::vector<std::string>{"other/pushed", "mesh/gone"}));
  EXPECT_EQ(MountSources::of(*store).candidate(layer, "mesh/new"), std::nullopt)
      << "notes are read only for the blobs asked for";
}

TEST(MountSources, AStoreKeepsTheNewestEightRepositoriesOfABlob) {
  test::TempDir tmp;
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  const Digest digest = blob('a', 1).digest;
  for (int i = 0; i < 10; ++i) store->note_repository(digest, "mesh/s" + std::to_string(i));
  store->note_repository(digest, "mesh/s3");  // seen again: first again, not twice
  const auto held = store->repositories_holding(digest);
  EXPECT_EQ(held, (std::vector<std::string>{"mesh/s3", "mesh/s9", "mesh/s8", "mesh/s7", "mesh/s6", "mesh/s5", "mesh/s4",
                                            "mesh/s2"}));
  EXPECT_TRUE(store->repositories_holding(blob('b', 1).digest).empty());
}

}  // namespace
}  // namespace arec
