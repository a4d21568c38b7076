// The read side of an OCI image layout (Layout in store/store.hpp): an image's documents and
// whether the layout holds all of it.
#include <gtest/gtest.h>

#include <filesystem>

#include "recorder/image.hpp"
#include "store/store.hpp"
#include "support/record_request.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

class LayoutRead : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(m_tmp / "src/app.txt", "the application");
    auto store = Store::open(m_tmp / "store");
    ASSERT_TRUE(store) << store.error().message;
    m_store.emplace(std::move(*store));
    auto outcome = record_image(test::plain_request(m_tmp / "src", "mesh", "app"), *m_store);
    ASSERT_TRUE(outcome) << outcome.error().message;
    m_image = outcome->record.manifest;
  }

  TempDir m_tmp;
  std::optional<Store> m_store;
  Descriptor m_image;
};

TEST_F(LayoutRead, AnIndexGivesTheManifestOfThePlatformAskedFor) {
  Index index;
  for (const auto& [architecture, variant] : {std::pair{"arm", "v7"}, std::pair{"arm64", ""}, std::pair{"amd64", ""}}) {
    Descriptor d = m_image;
    d.platform = Platform{architecture, "linux", variant};
    index.manifests.push_back(d);
  }
  index.manifests[1].size += 1;  // tells the entries apart
  index.manifests[2].size += 2;
  auto blob = m_store->put_blob(canonical_json(to_json(index)).value(), media_type::k_index);
  ASSERT_TRUE(blob) << blob.error().message;
  const auto pick = [&](Platform wanted) { return select_platform_manifest(*m_store, *blob, "image", wanted); };
  EXPECT_EQ(pick({"amd64", "linux", ""})->size, m_image.size + 2);
  // arm64 asked for as v8 (what an arm64 machine is) takes the arm64 manifest that names no variant.
  EXPECT_EQ(pick({"arm64", "linux", "v8"})->size, m_image.size + 1);
  EXPECT_EQ(pick({"arm", "linux", "v7"})->size, m_image.size);
  auto other = pick({"arm", "linux", "v6"});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message, "image: no image for linux/arm/v6");
  // A manifest is its own platform's, whatever is asked.
  EXPECT_EQ(select_platform_manifest(*m_store, m_image, "image", Platform{"s390x", "linux", ""})->digest,
            m_image.digest);
}

TEST_F(LayoutRead, ManifestAndConfigOfARecord) {
  auto manifest = m_store->read_manifest(m_image);
  ASSERT_TRUE(manifest) << manifest.error().message;
  EXPECT_EQ(manifest->layers.size(), 1u);
  auto config = m_store->read_config(*manifest);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->os, "linux");
  ASSERT_EQ(config->diff_ids.size(), 1u);
  EXPECT_EQ(blobs_of(*manifest).size(), 2u);
  EXPECT_EQ(blobs_of(*manifest).front().digest, manifest->config.digest) << "the config first, then the layers";
  EXPECT_TRUE(m_store->holds_image(m_image));
}

TEST_F(LayoutRead, ErrorsNameTheBlobFile) {
  const auto path = m_store->blob_path(m_image.digest);
  std::filesystem::remove(path);
  write_file(path, std::string(static_cast<std::size_t>(m_image.size), '{'));
  auto manifest = m_store->read_manifest(m_image);
  ASSERT_FALSE(manifest);
  EXPECT_EQ(manifest.error().message, path.string() + ": content does not match its digest");

  // A document that is not a manifest at all, under its own digest.
  auto odd = m_store->put_blob(R"({"schemaVersion":2,"layers":[]})", media_type::k_manifest);
  ASSERT_TRUE(odd) << odd.error().message;
  auto parsed = m_store->read_manifest(*odd);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, m_store->blob_path(odd->digest).string() + ": .config: is required");
  EXPECT_FALSE(m_store->holds_image(*odd));
}

TEST_F(LayoutRead, AnImageIsHeldOnlyWithEveryBlobAtFullSize) {
  auto manifest = m_store->read_manifest(m_image);
  ASSERT_TRUE(manifest) << manifest.error().message;
  const auto layer = m_store->blob_path(manifest->layers.front().digest);
  // Cut short, as a power loss may leave it: not held.
  std::filesystem::resize_file(layer, std::filesystem::file_size(layer) - 1);
  EXPECT_FALSE(m_store->holds_image(m_image));
  std::filesystem::remove(layer);
  EXPECT_FALSE(m_store->holds_image(m_image));

  TempDir other;
  auto store = Store::open(other / "store");
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->holds_image(m_image)) << "a layout without the manifest";
}

TEST_F(LayoutRead, AConfigMissingMeansTheImageIsNotHeld) {
  auto manifest = m_store->read_manifest(m_image);
  ASSERT_TRUE(manifest);
  std::filesystem::remove(m_store->blob_path(manifest->config.digest));
  EXPECT_FALSE(m_store->holds_image(m_image));
  auto config = m_store->read_config(*manifest);
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find(m_store->blob_path(manifest->config.digest).string()), std::string::npos)
      << config.error().message;
}

}  // namespace
}  // namespace arec
