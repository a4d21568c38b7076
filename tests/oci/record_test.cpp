#include "oci/record.hpp"

#include <gtest/gtest.h>

#include <functional>

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

TEST(RecordDocument, RoundTripsEveryField) {
  const Record r = sample();
  auto document = record_document(r);
  ASSERT_TRUE(document);
  auto back = parse_record_document(*document, "doc");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), to_json(r));
  // The same record, the same bytes: a second push of it writes nothing.
  EXPECT_EQ(*record_document(*back), *document);
  Record bare = sample();
  bare.target = bare.config = bare.revision = bare.base_digest = "";
  bare.manifest.platform.reset();
  auto minimal = parse_record_document(*record_document(bare), "doc");
  ASSERT_TRUE(minimal) << minimal.error().message;
  EXPECT_EQ(to_json(*minimal), to_json(bare));
}

TEST(RecordDocument, HoldsNoAddress) {
  const auto json = nlohmann::json::parse(*record_document(sample()));
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"base", "config", "digest", "mediaType", "module", "name", "platform",
                                            "recorded", "revision", "size", "target"}));
}

TEST(RecordDocument, RefusesWhatArecDoesNotWriteNamingTheDocument) {
  const auto json = nlohmann::json::parse(*record_document(sample()));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& change, std::string_view why) {
    nlohmann::json changed = json;
    change(changed);
    auto r = parse_record_document(changed.dump(), "the document");
    ASSERT_FALSE(r) << why;
    EXPECT_EQ(r.error().kind, ErrorKind::input) << why;
    EXPECT_TRUE(r.error().message.starts_with("the document")) << r.error().message;
  };
  refused([](auto& j) { j["registry"] = "10.20.0.11:5000"; }, "an unknown field, such as an address");
  refused([](auto& j) { j.erase("digest"); }, "no digest");
  refused([](auto& j) { j["digest"] = "sha256:abc"; }, "not a digest");
  refused([](auto& j) { j["size"] = -1; }, "a negative size");
  refused([](auto& j) { j["size"] = "512"; }, "a size that is a string");
  refused([](auto& j) { j["module"] = "Mesh"; }, "a module that is no path component");
  refused([](auto& j) { j["recorded"] = "yesterday"; }, "no RFC 3339 time");
  refused([](auto& j) { j["mediaType"] = std::string(media_type::k_index); }, "an index is no record");
  refused([](auto& j) { j["platform"] = "linux"; }, "no OS/ARCH");
  refused([](auto& j) { j["target"] = "a\nb"; }, "a control character");
  refused([](auto& j) { j["revision"] = ""; }, "an empty field record_document leaves out");
  refused([](auto& j) { j["base"] = "main"; }, "a base that is no digest");
  EXPECT_FALSE(parse_record_document("[]", "the document"));
  EXPECT_FALSE(parse_record_document("{", "the document"));
  EXPECT_FALSE(parse_record_document(std::string(k_max_record_document + 1, ' '), "the document"));
}

TEST(RecordArtifact, IsAReferrerOfTheRecordsImage) {
  const Record r = sample();
  auto artifact = record_artifact(r);
  ASSERT_TRUE(artifact);
  EXPECT_EQ(artifact->descriptor.digest, digest_of(artifact->manifest));
  EXPECT_EQ(artifact->descriptor.artifact_type, media_type::k_arec_record);
  EXPECT_EQ(artifact->layer.digest, digest_of(artifact->document));
  auto manifest = manifest_from_json(nlohmann::json::parse(artifact->manifest), "artifact");
  ASSERT_TRUE(manifest);
  ASSERT_TRUE(manifest->subject);
  EXPECT_EQ(manifest->subject->digest, r.manifest.digest);
  EXPECT_EQ(manifest->artifact_type, media_type::k_arec_record);
  ASSERT_EQ(manifest->layers.size(), 1u);
  EXPECT_EQ(manifest->layers.front().digest, artifact->layer.digest);
  EXPECT_EQ(manifest->config.media_type, media_type::k_empty);
  // Made again from the same record, the same bytes; from another record, another artifact.
  EXPECT_EQ(record_artifact(r)->manifest, artifact->manifest);
  Record later = r;
  later.recorded = "2026-12-03T11:00:00Z";
  EXPECT_NE(record_artifact(later)->descriptor.digest, artifact->descriptor.digest);
}

TEST(Rfc3339, IsUtcToTheSecond) {
  EXPECT_EQ(rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(rfc3339(1764756000), "2025-12-03T10:00:00Z");
  EXPECT_EQ(now_rfc3339().size(), 20u);
}

}  // namespace
}  // namespace arec
