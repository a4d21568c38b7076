#include "recorder/record.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

Record sample() {
  Record r;
  r.module = "mesh";
  r.name = "controlplane";
  r.manifest.media_type = std::string(media_type::k_manifest);
  r.manifest.digest = digest_of("manifest");
  r.manifest.size = 512;
  r.manifest.platform = Platform{"amd64", "linux", ""};
  r.recorded = "2026-12-03T10:00:00Z";
  r.target = "controlplane";
  r.config = "Release";
  r.revision = "0123456789abcdef0123456789abcdef01234567";
  r.base_digest = digest_of("base").str();
  return r;
}

// The OCI distribution grammar for one path component.
TEST(PathComponent, FollowsTheDistributionGrammar) {
  for (const char* ok : {"a", "mesh", "control-plane", "a--b", "a__b", "a_b", "a.b", "v1", "0"}) {
    EXPECT_TRUE(is_path_component(ok)) << ok;
  }
  for (const char* bad : {"", "Mesh", "-a", "a-", "a___b", "a..b", "a._b", "a/b", "a b", "a:b", "é"}) {
    EXPECT_FALSE(is_path_component(bad)) << bad;
  }
}

TEST(RecordPart, ARefusalNamesWhatAndTheValue) {
  EXPECT_TRUE(validate_record_part("controlplane", "name"));
  auto s = validate_record_part("Control", "module");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::input);
  EXPECT_NE(s.error().message.find("module \"Control\""), std::string::npos) << s.error().message;
}

TEST(RecordDescriptor, RoundTripsEveryField) {
  const Record r = sample();
  const Descriptor d = to_descriptor(r, Latest::no);
  auto back = record_from_descriptor(d);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->identity(), r.identity());
  EXPECT_EQ(back->recorded, r.recorded);
  EXPECT_EQ(back->target, r.target);
  EXPECT_EQ(back->config, r.config);
  EXPECT_EQ(back->revision, r.revision);
  EXPECT_EQ(back->base_digest, r.base_digest);
  EXPECT_TRUE(back->manifest.annotations.empty());
}

TEST(RecordDescriptor, OnlyTheLatestCarriesTheRefNameToolsLookUp) {
  const Record r = sample();
  EXPECT_EQ(to_descriptor(r, Latest::yes).annotation(annotation::k_ref_name), "mesh/controlplane");
  EXPECT_EQ(to_descriptor(r, Latest::no).annotation(annotation::k_ref_name), "");
}

TEST(RecordDescriptor, ADescriptorArecDidNotWriteIsNoRecord) {
  Descriptor pulled;
  pulled.digest = digest_of("pulled");
  EXPECT_FALSE(record_from_descriptor(pulled));
  pulled.annotations.emplace(std::string(annotation::k_module), "Not/Valid");
  pulled.annotations.emplace(std::string(annotation::k_name), "x");
  EXPECT_FALSE(record_from_descriptor(pulled));
}

// Rule 1: what a record says holds no address; empty facts are left out rather than written empty.
TEST(RecordJson, HoldsTheFactsAndNoAddress) {
  Record r = sample();
  const auto json = to_json(r);
  EXPECT_EQ(json["module"], "mesh");
  EXPECT_EQ(json["digest"], r.manifest.digest.str());
  EXPECT_EQ(json["platform"], "linux/amd64");
  EXPECT_EQ(json["config"], "Release");
  for (const char* key : {"host", "port", "registry", "address", "reference"}) EXPECT_FALSE(json.contains(key)) << key;
  r.target.clear();
  r.base_digest.clear();
  const auto bare = to_json(r);
  EXPECT_FALSE(bare.contains("target"));
  EXPECT_FALSE(bare.contains("base"));
}

TEST(Rfc3339, IsUtcToTheSecond) {
  EXPECT_EQ(rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339(1764756000), "2025-12-03T10:00:00Z");
  EXPECT_EQ(now_rfc3339().size(), 20u);
}

}  // namespace
}  // namespace arec
