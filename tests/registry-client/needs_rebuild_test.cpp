#include "registry-client/needs_rebuild.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

NodeSettings mesh() {
  auto settings = NodeSettings::parse(R"({
    "self": "n1",
    "nodes": {"n1": {"address": "10.20.0.11", "ports": {"registry": 5000, "store": 6852}},
              "n2": {"address": "fd00::2", "ports": {"bus": 5679}},
              "n3": {"ports": {"registry": 5001}}},
    "services": {"registry": "n1", "store": "n1", "bus": "n2"}})",
                                      "nodes.json");
  EXPECT_TRUE(settings) << settings.error().message;
  return *settings;
}

std::vector<Record> recorded(std::initializer_list<std::pair<const char*, const char*>> names) {
  std::vector<Record> out;
  for (const auto& [module, name] : names) {
    Record r;
    r.module = module;
    r.name = name;
    out.push_back(r);
  }
  return out;
}

std::string kinds(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += f.reference + " " + std::string(kind_name(f.kind)) + " " + f.source + "\n";
  return out;
}

TEST(NeedsRebuild, ClassifiesReferencesOfTheMesh) {
  RebuildQuery q(mesh(), recorded({{"mesh", "controlplane"}}));
  for (const char* ref : {"10.20.0.11:5000/controlplane:genesis",     // single segment at a node's address
                          "n3:5001/builder",                          // at a node's name
                          "localhost:5000/mesh/builder",              // loopback, no record
                          "127.0.0.1:9999/a/b/c",                     // three segments: never a record
                          "10.20.0.11:5000/mesh/controlplane@sha256:" // a record behind a literal address
                          "0000000000000000000000000000000000000000000000000000000000000000",
                          "[fd00::2]:5000/x",                         // IPv6 node address
                          "registry.example.com/mesh/controlplane",   // another registry
                          "controlplane"}) {                          // no domain: not the mesh's
    ASSERT_TRUE(q.add_reference(ref, "--ref")) << ref;
  }
  EXPECT_EQ(kinds(q.findings(true)),
            "10.20.0.11:5000/controlplane:genesis genesis-pinned --ref\n"
            "n3:5001/builder genesis-pinned --ref\n"
            "[fd00::2]:5000/x genesis-pinned --ref\n"
            "localhost:5000/mesh/builder no-build --ref\n"
            "127.0.0.1:9999/a/b/c no-build --ref\n"
            "10.20.0.11:5000/mesh/controlplane@sha256:0000000000000000000000000000000000000000000000000000000000000000 "
            "hard-coded-address --ref\n"
            "registry.example.com/mesh/controlplane external --ref\n"
            "controlplane external --ref\n");
  EXPECT_EQ(q.findings(false).size(), 6u);
  const auto findings = q.findings(false);
  EXPECT_EQ(findings[5].action,
            "replace it with arec://image/mesh/controlplane@sha256:0000000000000000000000000000000000000000000000000000000000000000");
}

TEST(NeedsRebuild, ImageKeysAtAnyDepthInEveryDocumentWithLines) {
  RebuildQuery q(mesh(), {});
  const std::string yaml =
      "a: 1\n"
      "---\n"
      "spec:\n"
      "  template:\n"
      "    containers:\n"
      "      - name: cp\n"
      "        image: 10.20.0.11:5000/controlplane:genesis\n"
      "      - image: docker.io/library/redis:7\n"
      "registry: 10.20.0.11:5000/elsewhere\n";
  ASSERT_TRUE(q.scan_text(yaml, "deploy.yaml"));
  // Not an image key: its value is no image reference, but the registry's address written down.
  EXPECT_EQ(kinds(q.findings(true)),
            "10.20.0.11:5000/controlplane:genesis genesis-pinned deploy.yaml:7\n"
            "10.20.0.11:5000 hard-coded-address deploy.yaml:9\n"
            "docker.io/library/redis:7 external deploy.yaml:8\n");
}

TEST(NeedsRebuild, JsonDeclarationsToo) {
  RebuildQuery q(mesh(), {});
  ASSERT_TRUE(q.scan_text("{\n\t\"spec\": {\n\t\t\"image\": \"127.0.0.1:5000/builder\"\n\t}\n}\n", "b.json"));
  EXPECT_EQ(kinds(q.findings(false)), "127.0.0.1:5000/builder genesis-pinned b.json:3\n");
}

TEST(NeedsRebuild, ImageRequestsWithoutARecord) {
  RebuildQuery q(mesh(), recorded({{"mesh", "controlplane"}}));
  ASSERT_TRUE(q.scan_text("x: arec://image/mesh/controlplane\ny: arec://image/mesh/builder:v1\n", "d.yaml"));
  EXPECT_EQ(kinds(q.findings(false)), "arec://image/mesh/builder:v1 no-build d.yaml:2\n");
}

TEST(NeedsRebuild, LiteralEndpointsOfServices) {
  RebuildQuery q(mesh(), {});
  ASSERT_TRUE(q.scan_text("STORE=postgres://cp@10.20.0.11:6852/cp\n"
                          "BUS=amqp://[fd00::2]:5679/vhost\n"
                          "LOCAL=127.0.0.1:6852\n"
                          "OTHER=10.20.0.11:1234 110.20.0.11:6852 10.20.0.11:68520\n",
                          "app.env"));
  const auto findings = q.findings(false);
  EXPECT_EQ(kinds(findings),
            "10.20.0.11:6852 hard-coded-address app.env:1\n"
            "127.0.0.1:6852 hard-coded-address app.env:3\n"
            "[fd00::2]:5679 hard-coded-address app.env:2\n");
  EXPECT_EQ(findings[0].action, "replace it with arec://endpoint/store");
  EXPECT_EQ(findings[2].action, "replace it with arec://endpoint/bus");
}

TEST(NeedsRebuild, EachReferenceOnceWithItsStrongestKind) {
  RebuildQuery q(mesh(), recorded({{"mesh", "cp"}}));
  ASSERT_TRUE(q.add_reference("10.20.0.11:5000/mesh/cp", "--ref"));
  ASSERT_TRUE(q.scan_text("image: 10.20.0.11:5000/mesh/cp\n", "a.yaml"));
  q.add_catalog_entry("10.20.0.11:5000", "mesh/cp", "");
  EXPECT_EQ(kinds(q.findings(false)), "10.20.0.11:5000/mesh/cp hard-coded-address --ref\n");
  q.add_catalog_entry("10.20.0.11:5000", "builder", "genesis");
  q.add_catalog_entry("10.20.0.11:5000", "mesh/cp", "v1");  // pushed by arec: fine
  EXPECT_EQ(kinds(q.findings(false)),
            "10.20.0.11:5000/builder:genesis genesis-pinned catalog\n"
            "10.20.0.11:5000/mesh/cp hard-coded-address --ref\n");
}

TEST(NeedsRebuild, BadInput) {
  RebuildQuery q(mesh(), {});
  auto bad_ref = q.add_reference("Not A Ref", "--ref");
  ASSERT_FALSE(bad_ref);
  EXPECT_NE(bad_ref.error().message.find("--ref: reference \"Not A Ref\""), std::string::npos);
  auto yaml_error = [&](std::string_view text) {
    auto s = q.scan_text(text, "broken.yaml");
    return s ? std::string("accepted") : s.error().message;
  };
  // yaml-cpp's marks are 0-based; an error found at the end of the input is on the last line with content.
  EXPECT_EQ(yaml_error("a: 1\nb: [1,\n"), "broken.yaml:2: malformed YAML: end of sequence flow not found");
  EXPECT_EQ(yaml_error("a: 1\nb: [1,"), "broken.yaml:2: malformed YAML: end of sequence flow not found");
  EXPECT_EQ(yaml_error("a: 1\nb: {x\n\n\n"), "broken.yaml:2: malformed YAML: end of map flow not found");
  EXPECT_EQ(yaml_error("a: b\n c: d\ne: f\n"), "broken.yaml:2: malformed YAML: illegal map value");
  EXPECT_EQ(yaml_error("a: 1\n\tb: 2\n"), "broken.yaml:2: malformed YAML: illegal tab when looking for indentation");
  auto missing = q.scan_path("/nonexistent/declarations");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "/nonexistent/declarations: no such file or directory");
}

}  // namespace
}  // namespace arec
