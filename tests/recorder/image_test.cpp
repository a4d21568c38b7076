// record_image and the base images it extends, on real files in a real store.
#include "recorder/image.hpp"

#include <gtest/gtest.h>

#include "support/record_request.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::plain_request;
using test::TempDir;
using test::write_file;

struct Recorded {
  Record record;
  Manifest manifest;
  ImageConfig config;
};

Recorded record(const RecordRequest& request, Store& store) {
  auto outcome = record_image(request, store);
  EXPECT_TRUE(outcome) << outcome.error().message;
  if (!outcome) return {};
  auto manifest = store.read_manifest(outcome->record.manifest);
  EXPECT_TRUE(manifest) << manifest.error().message;
  auto config = store.read_config(*manifest);
  EXPECT_TRUE(config) << config.error().message;
  return {outcome->record, *manifest, *config};
}

TEST(Image, ConfigSaysWhatTheRequestAsked) {
  TempDir tmp;
  write_file(tmp / "src/app", "the program");
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  auto request = plain_request(tmp / "src", "mesh", "app");
  request.entrypoint = {"/srv/app", "--serve"};
  request.env = {"MODE=prod"};
  request.mtime = 1700000000;
  request.platform = Platform{"arm64", "linux", ""};
  request.compression = Compression::zstd;
  const Recorded r = record(request, *store);
  EXPECT_EQ(r.record.repository(), "mesh/app");
  EXPECT_EQ(r.record.revision, request.revision);
  EXPECT_EQ(r.config.created, "2023-11-14T22:13:20Z");
  EXPECT_EQ(r.config.architecture, "arm64");
  EXPECT_EQ(r.config.os, "linux");
  EXPECT_EQ(r.config.config["Entrypoint"], nlohmann::json::array({"/srv/app", "--serve"}));
  EXPECT_EQ(r.config.config["Env"], nlohmann::json::array({"MODE=prod"}));
  ASSERT_EQ(r.config.diff_ids.size(), r.manifest.layers.size());
  ASSERT_EQ(r.manifest.layers.size(), 1u);
  EXPECT_EQ(r.manifest.layers[0].media_type, layer_media_type(Compression::zstd));
  EXPECT_TRUE(store->holds_image(r.record.manifest));
}

TEST(Image, ExtendsABaseRecordOfTheStore) {
  TempDir tmp;
  write_file(tmp / "base/etc/motd", "hello");
  write_file(tmp / "src/app", "the program");
  auto store = Store::open(tmp / "store");
  ASSERT_TRUE(store) << store.error().message;
  auto base_request = plain_request(tmp / "base", "mesh", "base");
  base_request.env = {"MODE=dev", "LANG=C.UTF-8"};
  const Recorded base = record(base_request, *store);

  auto opened = open_record_base(*store, "mesh", "base");
  ASSERT_TRUE(opened) << opened.error().message;
  EXPECT_EQ(opened->manifest.digest, base.record.manifest.digest);
  auto request = plain_request(tmp / "src", "mesh", "app");
  request.base = *opened;
  request.env = {"MODE=prod"};
  const Recorded app = record(request, *store);
  EXPECT_EQ(app.record.base_digest, base.record.manifest.digest.str());
  // The base's layers first, unchanged, then the record's own.
  ASSERT_EQ(app.manifest.layers.size(), base.manifest.layers.size() + 1);
  EXPECT_EQ(app.manifest.layers[0].digest, base.manifest.layers[0].digest);
  EXPECT_EQ(app.config.diff_ids[0], base.config.diff_ids[0]);
  // A variable the record sets replaces the base's; the others stay, in their order.
  EXPECT_EQ(app.config.config["Env"], nlohmann::json::array({"MODE=prod", "LANG=C.UTF-8"}));

  auto missing = open_record_base(*store, "mesh", "nothing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::input);
  EXPECT_NE(missing.error().message.find("mesh/nothing"), std::string::npos) << missing.error().message;
}

TEST(Image, LayoutBaseIsFoundByItsReference) {
  TempDir tmp;
  write_file(tmp / "src/a", "a");
  write_file(tmp / "src2/b", "b");
  auto store = Store::open(tmp / "layout");
  ASSERT_TRUE(store) << store.error().message;
  record(plain_request(tmp / "src", "mesh", "one"), *store);  // a second image in the layout
  const Recorded second = record(plain_request(tmp / "src2", "mesh", "two"), *store);

  const std::string layout = (tmp / "layout").string();
  auto by_ref = open_layout_base(layout, "mesh/two", "base image oci:" + layout + ":mesh/two");
  ASSERT_TRUE(by_ref) << by_ref.error().message;
  EXPECT_EQ(by_ref->manifest.digest, second.record.manifest.digest);
  auto unknown = open_layout_base(layout, "mesh/three", "base image oci:" + layout + ":mesh/three");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, ErrorKind::input);
  EXPECT_NE(unknown.error().message.find("mesh/three"), std::string::npos) << unknown.error().message;
  // Two images and no reference: which one is meant is not guessed.
  auto ambiguous = open_layout_base(layout, "", "base image oci:" + layout);
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().kind, ErrorKind::input);
  auto not_a_layout = open_layout_base((tmp / "src").string(), "", "base image oci:" + (tmp / "src").string());
  ASSERT_FALSE(not_a_layout);
  EXPECT_EQ(not_a_layout.error().kind, ErrorKind::input);
}

}  // namespace
}  // namespace arec
