#include "oci/oci.hpp"
#include "oci/record.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

using nlohmann::json;

Digest d(char c) { return *Digest::parse("sha256:" + std::string(64, c)); }

TEST(Oci, CanonicalJsonSortsKeysWithoutWhitespace) {
  auto a = canonical_json(json::parse(R"({ "b": 1, "a": {"z": [1, 2], "y": "x"} })"));
  auto b = canonical_json(json::parse(R"({"a":{"y":"x","z":[1,2]},"b":1})"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, R"({"a":{"y":"x","z":[1,2]},"b":1})");
  EXPECT_EQ(*a, *b);
}

TEST(Oci, CanonicalJsonRefusesInvalidUtf8) {
  auto out = canonical_json(json{{"k", std::string("\xff\xfe")}});
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("UTF-8"), std::string::npos);
}

TEST(Oci, ManifestRoundTrip) {
  Manifest m;
  m.config = {std::string(media_type::k_config), d('1'), 123, {}, {}, {}, {}};
  m.layers.push_back({std::string(media_type::k_layer_gzip), d('2'), 456, {}, {}, {{"k", "v"}}, {}});
  m.annotations["org.opencontainers.image.base.digest"] = d('3').str();
  const json j = to_json(m);
  EXPECT_EQ(j["schemaVersion"], 2);
  EXPECT_EQ(j["mediaType"], media_type::k_manifest);
  auto back = manifest_from_json(j, "manifest");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*canonical_json(to_json(*back)), *canonical_json(j));
  EXPECT_EQ(back->layers.at(0).annotation("k"), "v");
}

TEST(Oci, IndexRoundTripWithPlatform) {
  Index index;
  Descriptor m{std::string(media_type::k_manifest), d('4'), 10, {}, {}, {}, Platform{"arm64", "linux", "v8"}};
  index.manifests.push_back(m);
  auto back = index_from_json(to_json(index), "index");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back->manifests.at(0).platform);
  EXPECT_EQ(back->manifests.at(0).platform->variant, "v8");
  EXPECT_EQ(to_json(*back), to_json(index));
}

TEST(Oci, ConfigKeepsWhatItDoesNotModel) {
  const json base = json::parse(R"({
    "architecture": "amd64", "os": "linux", "created": "2020-01-01T00:00:00Z",
    "config": {"User": "1000", "ExposedPorts": {"80/tcp": {}}, "Env": ["PATH=/bin"]},
    "rootfs": {"type": "layers", "diff_ids": ["sha256:)" +
                                std::string(64, 'a') + R"("]},
    "history": [{"created_by": "base", "empty_layer": true}],
    "os.features": ["x"]
  })");
  auto c = config_from_json(base, "config");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->diff_ids.size(), 1u);
  EXPECT_TRUE(c->history.at(0).empty_layer);
  const json out = to_json(*c);
  EXPECT_EQ(out["config"]["User"], "1000");
  EXPECT_EQ(out["os.features"], json::array({"x"}));
  EXPECT_EQ(out, base);
}

TEST(Oci, ErrorsNameTheJsonPath) {
  struct Case {
    std::string document;
    std::string message_part;
  };
  const std::string digest = "\"sha256:" + std::string(64, 'a') + "\"";
  for (const auto& c : std::vector<Case>{
           {R"({"schemaVersion":1,"config":{},"layers":[]})", "manifest: .schemaVersion: must be 2"},
           {R"({"schemaVersion":2,"layers":[]})", "manifest: .config: is required"},
           {R"({"schemaVersion":2,"config":{"mediaType":"x","digest":)" + digest + R"(,"size":-1},"layers":[]})",
            ".config.size: must be a non-negative integer"},
           {R"({"schemaVersion":2,"config":{"mediaType":"x","digest":)" + digest +
                R"(,"size":1},"layers":[{"mediaType":"x","digest":"sha256:abc","size":1}]})",
            ".layers[0].digest: digest \"sha256:abc\""},
           {R"({"schemaVersion":2,"config":{"mediaType":"x","digest":)" + digest +
                R"(,"size":1},"layers":[],"annotations":{"a":1}})",
            ".annotations.a: must be a string"},
       }) {
    auto m = manifest_from_json(json::parse(c.document), "manifest");
    ASSERT_FALSE(m) << c.document;
    EXPECT_NE(m.error().message.find(c.message_part), std::string::npos) << m.error().message;
  }
}

TEST(Oci, ConfigWithARootfsTypeOfAnotherJsonTypeIsAnError) {
  // A rootfs "type" that is not a string is refused like any other wrong type, never thrown on.
  for (const char* type : {R"(["layers"])", "1", "null", R"({"a":"layers"})"}) {
    const json config = json::parse(std::string(R"({"architecture":"amd64","os":"linux","rootfs":{"type":)") + type +
                                    R"(,"diff_ids":[]}})");
    auto c = config_from_json(config, "config");
    ASSERT_FALSE(c) << type;
    EXPECT_EQ(c.error().message, "config: .rootfs.type: must be \"layers\"") << type;
  }
}

TEST(Oci, ParseJsonNamesTheByte) {
  auto j = parse_json("{\"a\": }", "index.json");
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find("index.json: malformed JSON at byte"), std::string::npos) << j.error().message;
}

TEST(Oci, ParseJsonRefusesNumbersBeyondADouble) {
  auto j = parse_json(R"({"schemaVersion": 2, "manifests": [], "size": -1e999})", "index.json");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().message, "index.json: a number is too large");
}

TEST(Oci, ParseJsonRefusesDocumentsNestedTooDeep) {
  const auto nested = [](std::size_t depth) {
    return R"({"config":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
  };
  EXPECT_TRUE(parse_json(nested(100), "config.json"));
  // Deep enough that writing it would exhaust the stack under AddressSanitizer.
  auto j = parse_json(nested(100'000), "config.json");
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().message, "config.json: nested deeper than 512 levels");
}

}  // namespace
}  // namespace arec

namespace arec {
namespace {

TEST(Printable, ControlCharactersAreWrittenAsText) {
  EXPECT_EQ(printable("plain /usr/bin/app é"), "plain /usr/bin/app é");
  EXPECT_EQ(printable("\x1b]0;t\x07\x1b[31m\nx\ty\r\x7f"), "\\x1b]0;t\\x07\\x1b[31m\\nx\\ty\\r\\x7f");
  EXPECT_EQ(printable("a\xc2\x9b"
                      "b"),
            "a\\u009bb");  // U+009B, the one-byte CSI
  EXPECT_TRUE(has_control_characters("TOKEN\r\nX-Injected: yes"));
  EXPECT_FALSE(has_control_characters("eyJhbGciOi.x-y_z"));
}

TEST(Rfc3339, OnlyTimesWithEveryFieldInRange) {
  for (const char* good :
       {"2026-12-02T11:39:53Z", "2024-02-29T00:00:00Z", "2026-12-02T11:39:53.123+01:00", "2016-12-31T23:59:60Z"}) {
    EXPECT_TRUE(is_rfc3339(good)) << good;
  }
  for (const char* bad : {"9999-99-99T99:99:99Z", "2023-02-29T00:00:00Z", "2026-12-02 11:39:53Z", "2026-12-02T11:39:53",
                          "2026-12-02T11:39:53Zjunk", "2026-12-02T11:39:53.Z", "", "2026-12-02T24:00:00Z"}) {
    EXPECT_FALSE(is_rfc3339(bad)) << bad;
  }
}

}  // namespace
}  // namespace arec

namespace arec {
namespace {

TEST(ParseDocumentTest, ReadsTheTypeAskedForAndNamesTheBlobInErrors) {
  auto index = parse_document<Index>(R"({"schemaVersion":2,"manifests":[]})", "index.json");
  ASSERT_TRUE(index.has_value()) << index.error().message;
  EXPECT_TRUE(index->manifests.empty());
  auto malformed = parse_document<Manifest>("{\"schemaVersion\":", "manifest sha256:ab");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_EQ(malformed.error().kind, ErrorKind::input);
  EXPECT_TRUE(malformed.error().message.starts_with("manifest sha256:ab: malformed JSON")) << malformed.error().message;
  auto wrong = parse_document<Descriptor>(R"({"mediaType":"x"})", "the config's descriptor");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_TRUE(wrong.error().message.starts_with("the config's descriptor")) << wrong.error().message;
}

TEST(Json, ADuplicateKeyIsFoundWithItsPath) {
  EXPECT_EQ(duplicate_json_key(R"({"a": 1, "a": 2})"), ".a");
  EXPECT_EQ(duplicate_json_key(R"({"a": {"b": [1, {"c": 1, "c": 2}]}})"), ".a.b[1].c");
  EXPECT_EQ(duplicate_json_key(R"([{"x": 1}, {"y": 2, "y": 3}])"), "[1].y");
  EXPECT_EQ(duplicate_json_key(R"({"a": {"k": 1}, "b": {"k": 1}, "k": [{"k": 1}]})"), std::nullopt);
  EXPECT_EQ(duplicate_json_key("not json"), std::nullopt);
}

}  // namespace
}  // namespace arec
