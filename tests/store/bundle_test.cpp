#include "store/bundle.hpp"

#include <gtest/gtest.h>

#include "support/tar.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::Gzip;
using test::make_tar;
using test::TarItem;
using test::TempDir;

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::open(m_dir / "store");
    ASSERT_TRUE(store.has_value()) << store.error().message;
    m_store.emplace(std::move(*store));
  }

  // Records module/name as an image of one gzip layer holding `items`, at time `recorded`.
  Record record(const std::string& name, const std::vector<TarItem>& items, const std::string& recorded) {
    auto layer = m_store->put_blob(make_tar(items, Gzip::yes, 0640), media_type::k_layer_gzip);
    EXPECT_TRUE(layer.has_value());
    ImageConfig config;
    config.architecture = "amd64";
    config.os = "linux";
    config.config = {{"Entrypoint", {"/bin/" + name}}, {"Env", {"A=b"}}};
    config.diff_ids.push_back(layer->digest);  // not the real DiffID: nothing here reads it
    auto config_blob = m_store->put_blob(canonical_json(to_json(config)).value(), media_type::k_config);
    Manifest manifest;
    manifest.config = *config_blob;
    manifest.layers.push_back(*layer);
    auto manifest_blob = m_store->put_blob(canonical_json(to_json(manifest)).value(), media_type::k_manifest);
    Record r{"demo", name, *manifest_blob, recorded, "t-" + name, "Release", "", ""};
    auto committed = m_store->with_writer([&](StoreWriter& writer) { return writer.commit(r); });
    EXPECT_TRUE(committed.has_value());
    return r;
  }

  TempDir m_dir;
  std::optional<Store> m_store;
};

TEST_F(BundleTest, ListsALayersEntriesAsTarDoes) {
  const auto plain = m_store->put_blob(make_tar({{"./usr/", TarItem::dir, ""},
                                                 {"usr/bin/app", TarItem::file, "12345"},
                                                 {"usr/bin/alias", TarItem::hardlink, "usr/bin/app"},
                                                 {"lib", TarItem::symlink, "usr/lib"}},
                                                Gzip::no, 0640),
                                       media_type::k_layer_tar);
  ASSERT_TRUE(plain.has_value());
  auto files = list_layer_files(*m_store, *plain);
  ASSERT_TRUE(files.has_value()) << files.error().message;
  ASSERT_EQ(files->size(), 4u);
  EXPECT_EQ((*files)[0].path, "/usr");
  EXPECT_EQ(mode_string((*files)[0]), "drwxr-xr-x");
  EXPECT_EQ((*files)[1].path, "/usr/bin/app");
  EXPECT_EQ((*files)[1].size, 5);
  EXPECT_EQ(mode_string((*files)[1]), "-rw-r-----");
  EXPECT_EQ((*files)[2].type, LayerFile::Type::hardlink);
  EXPECT_EQ((*files)[2].link_target, "/usr/bin/app");
  EXPECT_EQ((*files)[3].type, LayerFile::Type::symlink);
  EXPECT_EQ((*files)[3].link_target, "usr/lib");
  EXPECT_EQ(to_json((*files)[3]).dump(),
            R"({"linkTarget":"usr/lib","mode":"lrwxr-xr-x","path":"/lib","type":"symlink"})");

  const auto not_tar = m_store->put_blob("not a tar at all", media_type::k_layer_tar);
  auto refused = list_layer_files(*m_store, *not_tar);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("layer " + not_tar->digest.str()), std::string::npos)
      << refused.error().message;
}

TEST_F(BundleTest, DescribesAnImage) {
  const Record r = record("app", {{"bin/app", TarItem::file, "x"}}, "2026-01-01T00:00:00Z");
  auto d = describe_image(*m_store, r.manifest, LayerListing::yes);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->platform(), "linux/amd64");
  const auto json = to_json(*d);
  EXPECT_EQ(json["config"]["entrypoint"].dump(), R"(["/bin/app"])");
  EXPECT_EQ(json["config"]["env"].dump(), R"(["A=b"])");
  EXPECT_EQ(json["layers"][0]["files"][0]["path"], "/bin/app");
}

TEST_F(BundleTest, ExportThenImportKeepsTheHistoryAndTheBytes) {
  const Record first = record("app", {{"bin/app", TarItem::file, "one"}}, "2026-01-01T00:00:00Z");
  const Record second = record("app", {{"bin/app", TarItem::file, "two"}}, "2026-01-02T00:00:00Z");
  auto history = m_store->records(History::all);
  ASSERT_TRUE(history.has_value());
  ASSERT_EQ(history->size(), 2u);

  const auto one = m_dir / "one.tar";
  const auto two = m_dir / "two.tar";
  auto summary = export_bundle(*m_store, *history, one, BundleFormat::oci, 0);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->records, 2);
  EXPECT_EQ(summary->blobs, 6);  // two manifests, two configs, two layers
  ASSERT_TRUE(export_bundle(*m_store, *history, two, BundleFormat::oci, 0).has_value());
  EXPECT_EQ(test::read_file(one), test::read_file(two));

  auto imported = import_bundle(one, m_dir / "other");
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_EQ(imported->records_added, 2);
  EXPECT_EQ(imported->blobs_written, 6);
  auto other = Store::open_existing(m_dir / "other");
  ASSERT_TRUE(other.has_value());
  auto other_history = other->records(History::all);
  ASSERT_TRUE(other_history.has_value());
  ASSERT_EQ(other_history->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(to_json((*other_history)[i]), to_json((*history)[i]));
  auto latest = other->latest("demo", "app");
  ASSERT_TRUE(latest.has_value() && latest->has_value());
  EXPECT_EQ((*latest)->manifest.digest, second.manifest.digest);
  EXPECT_EQ(test::read_file(other->blob_path(first.manifest.digest)),
            test::read_file(m_store->blob_path(first.manifest.digest)));

  auto again = import_bundle(one, m_dir / "other");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->records_added, 0);
  EXPECT_EQ(again->records_present, 2);
}

TEST(ModeString, SpecialBitsAndKindsAsTarShowsThem) {
  LayerFile f;
  f.mode = 04755;
  EXPECT_EQ(mode_string(f), "-rwsr-xr-x");
  f.mode = 02644;
  EXPECT_EQ(mode_string(f), "-rw-r-Sr--");
  f.type = LayerFile::Type::directory;
  f.mode = 01777;
  EXPECT_EQ(mode_string(f), "drwxrwxrwt");
  f.type = LayerFile::Type::other;
  f.other_kind = 'c';
  f.mode = 0666;
  EXPECT_EQ(mode_string(f), "crw-rw-rw-");
  f.major = 1;
  f.minor = 3;
  const auto json = to_json(f);
  EXPECT_EQ(json["major"], 1);
  EXPECT_EQ(json["minor"], 3);
}

}  // namespace
}  // namespace arec
