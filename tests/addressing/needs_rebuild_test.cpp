#include "addressing/needs_rebuild.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

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

// file:line:column kind reference, as the JSON rows say it.
std::string places(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) + " " +
           std::string(kind_name(f.kind)) + " " + f.reference + "\n";
  }
  return out;
}

constexpr std::string_view k_zeros = "0000000000000000000000000000000000000000000000000000000000000000";

// A record of module/name with the manifest digest sha256:<hex>.
Record record_with_digest(const char* module, const char* name, std::string_view hex) {
  Record r;
  r.module = module;
  r.name = name;
  r.manifest.digest = *Digest::parse("sha256:" + std::string(hex));
  return r;
}

TEST(NeedsRebuild, ClassifiesReferencesAtTheRegistry) {
  RebuildQuery q(mesh(), {record_with_digest("mesh", "controlplane", k_zeros)});
  const std::string pinned = "10.20.0.11:5000/mesh/controlplane@sha256:" + std::string(k_zeros);
  for (const std::string ref : {"10.20.0.11:5000/controlplane:genesis",  // single segment at a registry node's address
                                "n3:5001/builder",                       // at its name and registry port
                                "localhost:5000/mesh/builder",           // loopback at a registry port, no record
                                "127.0.0.1:5001/a/b/c",                  // three segments: never a record
                                pinned.c_str(),                          // a record behind a literal address
                                "[::1]:5000/x",                          // IPv6 loopback
                                "10.20.0.11:6852/controlplane",          // the store's port, not the registry's
                                "[fd00::2]:5000/x",                      // a node that never held the registry
                                "registry.example.com/mesh/controlplane",  // another registry
                                "controlplane"}) {                         // no domain: not the mesh's
    ASSERT_TRUE(q.add_reference(ref, "--ref")) << ref;
  }
  EXPECT_EQ(kinds(q.findings(RebuildQuery::External::include)),
            "10.20.0.11:5000/controlplane:genesis genesis-pinned --ref\n"
            "n3:5001/builder genesis-pinned --ref\n"
            "localhost:5000/mesh/builder no-build --ref\n"
            "127.0.0.1:5001/a/b/c no-build --ref\n" +
                pinned +
                " hard-coded-address --ref\n"
                "[::1]:5000/x genesis-pinned --ref\n"
                "10.20.0.11:6852/controlplane external --ref\n"
                "[fd00::2]:5000/x external --ref\n"
                "registry.example.com/mesh/controlplane external --ref\n"
                "controlplane external --ref\n");
  const auto findings = q.findings(RebuildQuery::External::omit);
  ASSERT_EQ(findings.size(), 6u);
  // Actions name what is known: the name of a two-segment repository; for one segment, the store's
  // module/name of that name (mesh/controlplane: the store holds it).
  EXPECT_EQ(findings[0].action,
            "rebuild it through arec (arec_record) as mesh/controlplane, then use arec://image/mesh/controlplane");
  EXPECT_EQ(findings[2].action,
            "rebuild it through arec (arec_record) as mesh/builder, then use arec://image/mesh/builder");
  EXPECT_EQ(findings[3].action,
            "rebuild it through arec (arec_record) as <module>/<name>, then use arec://image/<module>/<name>");
  EXPECT_EQ(findings[4].action, "replace it with arec://image/mesh/controlplane@sha256:" + std::string(k_zeros));
}

TEST(NeedsRebuild, GenesisAdviceNamesTheStoresModule) {
  const auto advice = [](const std::vector<Record>& records, const char* ref) {
    RebuildQuery q(mesh(), records);
    EXPECT_TRUE(q.add_reference(ref, "--ref"));
    const auto findings = q.findings(RebuildQuery::External::omit);
    return findings.empty() ? std::string() : findings[0].action;
  };
  const auto as = [](const std::string& repository) {
    return "rebuild it through arec (arec_record) as " + repository + ", then use arec://image/" + repository;
  };
  // The module of the record of that name, whatever other modules the store holds.
  EXPECT_EQ(advice(recorded({{"team", "api"}, {"other", "web"}}), "10.20.0.11:5000/api"), as("team/api"));
  // No record of that name: the store's one module.
  EXPECT_EQ(advice(recorded({{"team", "api"}, {"team", "web"}}), "10.20.0.11:5000/worker:genesis"), as("team/worker"));
  // Several modules and none of them, or several, with a record of that name: not known.
  EXPECT_EQ(advice(recorded({{"team", "api"}, {"other", "web"}}), "10.20.0.11:5000/worker"), as("<module>/worker"));
  EXPECT_EQ(advice(recorded({{"team", "api"}, {"other", "api"}}), "10.20.0.11:5000/api"), as("<module>/api"));
  EXPECT_EQ(advice({}, "10.20.0.11:5000/api"), as("<module>/api"));
}

TEST(NeedsRebuild, AReferenceNamingTheRegistryNameFollowsIt) {
  auto named = mesh();
  named.registry_name = "localhost:5000";
  RebuildQuery q(named, recorded({{"mesh", "controlplane"}}));
  // At the registry's name: never reported, whatever its path; at its address: as before.
  ASSERT_TRUE(
      q.scan_text("a: localhost:5000/controlplane:genesis\n"
                  "b: LOCALHOST:5000/mesh/nope\n"
                  "c: 10.20.0.11:5000/mesh/controlplane:1\n",
                  "deploy.yaml"));
  EXPECT_EQ(kinds(q.findings(RebuildQuery::External::omit)),
            "10.20.0.11:5000/mesh/controlplane:1 hard-coded-address deploy.yaml:3\n");
  const auto all = q.findings(RebuildQuery::External::include);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].action, "none: it names the registry by registry_name, which follows it");
  RebuildQuery without(mesh(), recorded({{"mesh", "controlplane"}}));
  ASSERT_TRUE(without.scan_text("a: localhost:5000/controlplane:genesis\n", "deploy.yaml"));
  EXPECT_EQ(kinds(without.findings(RebuildQuery::External::omit)),
            "localhost:5000/controlplane:genesis genesis-pinned deploy.yaml:1\n");
}

TEST(NeedsRebuild, EveryFormOfDeclaration) {
  RebuildQuery q(mesh(), recorded({{"mesh", "agent"}}));
  ASSERT_TRUE(
      q.scan_text("FROM 10.20.0.11:5000/controlplane:genesis AS build\n"
                  "FROM docker.io/library/nginx:1.25\n"
                  "COPY --from=build /cp /usr/local/bin/cp\n",
                  "d/Dockerfile"));
  ASSERT_TRUE(
      q.scan_text("spec:\n"
                  "  containers:\n"
                  "    - name: builder\n"
                  "      image: arec://image/mesh/agent\n"
                  "      args: [\"--image=10.20.0.11:5000/builder:genesis\", --pull=never]\n"
                  "      env:\n"
                  "        - name: BUILDER_IMAGE\n"
                  "          value: 10.20.0.11:5000/builder:genesis\n"
                  "        - {name: STORE, value: 'postgres://cp@10.20.0.11:6852/cp'}\n",
                  "d/deploy.yaml"));
  ASSERT_TRUE(
      q.scan_text("image:\n"
                  "  repository: 10.20.0.11:5000/agent\n"
                  "  tag: \"1.2\"\n"
                  "sidecar:\n"
                  "  repository: \"127.0.0.1:5000/demo/nope\"\n"
                  "  tag: 2\n",
                  "d/values.yaml"));
  ASSERT_TRUE(q.scan_text(
      "{\"data\": {\"images\": \"a=10.20.0.11:5000/mesh/agent:v1,b=docker://10.20.0.11:5000/mesh/agent.\"}}\n",
      "d/configmap.json"));
  ASSERT_TRUE(
      q.scan_text("AGENT=arec://endpoint/registry/agent:1\n"
                  "REGISTRY=10.20.0.11:5000\n",
                  "d/.env.in"));
  EXPECT_EQ(places(q.findings(RebuildQuery::External::omit)),
            "d/.env.in:1:7 genesis-pinned arec://endpoint/registry/agent:1\n"
            "d/.env.in:2:10 hard-coded-address 10.20.0.11:5000\n"
            "d/Dockerfile:1:6 genesis-pinned 10.20.0.11:5000/controlplane:genesis\n"
            "d/configmap.json:1:24 hard-coded-address 10.20.0.11:5000/mesh/agent:v1\n"
            "d/configmap.json:1:65 hard-coded-address 10.20.0.11:5000/mesh/agent\n"
            "d/deploy.yaml:5:23 genesis-pinned 10.20.0.11:5000/builder:genesis\n"
            "d/deploy.yaml:8:18 genesis-pinned 10.20.0.11:5000/builder:genesis\n"
            "d/deploy.yaml:9:47 other-service 10.20.0.11:6852\n"
            "d/values.yaml:2:15 genesis-pinned 10.20.0.11:5000/agent:1.2\n"
            "d/values.yaml:5:16 no-build 127.0.0.1:5000/demo/nope:2\n");
  const auto findings = q.findings(RebuildQuery::External::omit);
  // The store holds mesh/agent: the single segment "agent" is rebuilt as it.
  EXPECT_EQ(findings[0].action,
            "rebuild it through arec (arec_record) as mesh/agent, then use arec://image/mesh/agent");
  EXPECT_EQ(findings[1].action, "replace it with arec://endpoint/registry");
  EXPECT_EQ(findings[3].action, "replace it with arec://image/mesh/agent:v1");
  EXPECT_EQ(findings[9].action, "rebuild it through arec (arec_record) as demo/nope, then use arec://image/demo/nope");
  const auto count = count_breaking(findings);
  EXPECT_EQ(count.references, 8u);  // builder:genesis twice; the store's address breaks nothing
  EXPECT_EQ(count.occurrences, 9u);
  // The external image is there with -v, and only then.
  EXPECT_NE(places(q.findings(RebuildQuery::External::include))
                .find("d/Dockerfile:2:6 external docker.io/library/nginx:1.25\n"),
            std::string::npos);
}

TEST(NeedsRebuild, RequestsThatComposeTheRegistryAddressIntoAnImage) {
  RebuildQuery q(mesh(), recorded({{"mesh", "agent"}}));
  ASSERT_TRUE(
      q.scan_text("a: arec://endpoint/registry/agent\n"
                  "b: arec://address/registry:5000/demo/nope:1.0\n"
                  "c: arec://endpoint/registry/mesh/agent@sha256:" +
                      std::string(k_zeros) +
                      "\n"
                      "d: http://arec://endpoint/registry/v2/\n"
                      "e: arec://endpoint/registry\n"
                      "g: arec://endpoint/registry/v2/\n"
                      "f: arec://endpoint/store/agent\n",
                  "r.yaml"));
  EXPECT_EQ(places(q.findings(RebuildQuery::External::omit)),
            "r.yaml:1:4 genesis-pinned arec://endpoint/registry/agent\n"
            "r.yaml:2:4 no-build arec://address/registry:5000/demo/nope:1.0\n"
            "r.yaml:3:4 hard-coded-address arec://endpoint/registry/mesh/agent@sha256:" +
                std::string(k_zeros) + "\n");
  const auto findings = q.findings(RebuildQuery::External::omit);
  EXPECT_EQ(findings[1].action, "rebuild it through arec (arec_record) as demo/nope, then use arec://image/demo/nope");
  EXPECT_EQ(findings[2].action, "use arec://image/mesh/agent");
}

TEST(NeedsRebuild, ImageRequestsWithoutARecord) {
  RebuildQuery q(mesh(), recorded({{"mesh", "controlplane"}}));
  ASSERT_TRUE(q.scan_text("x: arec://image/mesh/controlplane\ny: arec://image/mesh/builder:v1\n", "d.yaml"));
  EXPECT_EQ(kinds(q.findings(RebuildQuery::External::omit)), "arec://image/mesh/builder:v1 no-build d.yaml:2\n");
}

TEST(NeedsRebuild, AddressesOfServicesThatDoNotMoveAreInformationNeverBreaks) {
  RebuildQuery q(mesh(), {});
  ASSERT_TRUE(
      q.scan_text("STORE=postgres://cp@10.20.0.11:6852/cp\n"
                  "BUS=amqp://[fd00::2]:5679/vhost\n"
                  "LOCAL=127.0.0.1:6852\n"
                  "OTHER=10.20.0.11:1234 110.20.0.11:6852 10.20.0.11:68520\n"
                  "REGISTRY=10.20.0.11:5000\n",
                  "app.env"));
  const auto findings = q.findings(RebuildQuery::External::omit);
  EXPECT_EQ(kinds(findings),
            "10.20.0.11:6852 other-service app.env:1\n"
            "[fd00::2]:5679 other-service app.env:2\n"
            "127.0.0.1:6852 other-service app.env:3\n"
            "10.20.0.11:5000 hard-coded-address app.env:5\n");
  EXPECT_EQ(findings[0].action,
            "none: store does not move with the registry (arec://endpoint/store would follow it if it did)");
  EXPECT_EQ(findings[3].action, "replace it with arec://endpoint/registry");
  // Only the registry's address is counted: it is what a move strands.
  EXPECT_EQ(count_breaking(findings).occurrences, 1u);
}

TEST(NeedsRebuild, FindsReferencesInShellAndComposeDefaults) {
  RebuildQuery q(mesh(), {});
  ASSERT_TRUE(
      q.scan_text("WEB=${REGISTRY:-10.20.0.11:5000}/demo/web:1\n"
                  "API=${R-10.20.0.11:5000}/demo/api:2 X=${Y:=127.0.0.1:5001/demo/x} Z=${Y=localhost:5000/demo/z}\n"
                  "NESTED=${A:-${B:-10.20.0.11:5000}/demo/n}\n"
                  "PLAIN=${HOME}/x OPEN=${UNCLOSED:-\n",
                  "compose.env"));
  EXPECT_EQ(places(q.findings(RebuildQuery::External::omit)),
            "compose.env:1:17 no-build 10.20.0.11:5000/demo/web:1\n"
            "compose.env:2:9 no-build 10.20.0.11:5000/demo/api:2\n"
            "compose.env:2:44 no-build 127.0.0.1:5001/demo/x\n"
            "compose.env:2:73 no-build localhost:5000/demo/z\n"
            "compose.env:3:18 no-build 10.20.0.11:5000/demo/n\n");
}

TEST(NeedsRebuild, ADigestNoRecordHasIsToBeRebuiltNeverRequested) {
  const std::string ones(64, '1');
  RebuildQuery q(mesh(), {record_with_digest("tools", "sha256", ones)});
  ASSERT_TRUE(q.add_reference("127.0.0.1:5000/tools/sha256@sha256:" + std::string(k_zeros), "--ref"));
  ASSERT_TRUE(q.add_reference("127.0.0.1:5000/tools/sha256@sha256:" + ones, "--ref"));
  ASSERT_TRUE(q.scan_text("a: arec://image/tools/sha256@sha256:" + std::string(k_zeros) +
                              "\nb: arec://image/tools/sha256@sha256:" + ones + "\n",
                          "t.yaml"));
  const auto findings = q.findings(RebuildQuery::External::omit);
  EXPECT_EQ(kinds(findings), "arec://image/tools/sha256@sha256:" + std::string(k_zeros) + " no-build t.yaml:1\n" +
                                 "127.0.0.1:5000/tools/sha256@sha256:" + std::string(k_zeros) + " no-build --ref\n" +
                                 "127.0.0.1:5000/tools/sha256@sha256:" + ones + " hard-coded-address --ref\n");
  EXPECT_EQ(findings[0].action, "no record of tools/sha256 has sha256:" + std::string(k_zeros) +
                                    ": rebuild it through arec (arec_record), then use arec://image/tools/sha256");
  EXPECT_EQ(findings[1].action,
            "no record of tools/sha256 has sha256:" + std::string(k_zeros) +
                ": rebuild it through arec (arec_record) as tools/sha256, then use arec://image/tools/sha256");
  EXPECT_EQ(findings[2].action, "replace it with arec://image/tools/sha256@sha256:" + ones);
}

TEST(NeedsRebuild, ArecsOwnReferrerTagsAreNoReferences) {
  RebuildQuery q(mesh(), recorded({{"demo", "hello"}}));
  q.add_catalog_entry("10.20.0.11:5000", "demo/hello", "sha256-" + std::string(k_zeros));
  q.add_catalog_entry("10.20.0.11:5000", "demo/nope", "sha256-" + std::string(k_zeros));
  q.add_catalog_entry("10.20.0.11:5000", "demo/nope", "sha256-123");  // not arec's: too short
  EXPECT_EQ(kinds(q.findings(RebuildQuery::External::omit)), "10.20.0.11:5000/demo/nope:sha256-123 no-build catalog\n");
}

TEST(NeedsRebuild, TheThreeKeyHelmFormIsOneReference) {
  RebuildQuery q(mesh(), {});
  ASSERT_TRUE(
      q.scan_text("web:\n"
                  "  image:\n"
                  "    registry: 10.20.0.11:5000\n"
                  "    repository: demo/web\n"
                  "    tag: \"1.0\"\n"
                  "api:\n"
                  "  image: {registry: \"127.0.0.1:5001\", repository: demo/api}\n"
                  "ext:\n"
                  "  image: {registry: docker.io, repository: library/nginx, tag: \"1.25\"}\n",
                  "values.yaml"));
  EXPECT_EQ(places(q.findings(RebuildQuery::External::omit)),
            "values.yaml:3:15 no-build 10.20.0.11:5000/demo/web:1.0\n"
            "values.yaml:7:22 no-build 127.0.0.1:5001/demo/api\n");
}

// The search-first scan (External::omit) parses only files holding ":PORT" of a node or arec://; it
// finds what parsing every file finds.
TEST(NeedsRebuild, TheSearchFirstScanFindsWhatParsingEveryFileFinds) {
  const auto dir = std::filesystem::temp_directory_path() / ("arec-nr-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  const auto write = [&](const char* name, std::string_view text) {
    std::ofstream(dir / name, std::ios::binary) << text;
  };
  write("a.env", "X=${R:-10.20.0.11:5000}/demo/a:1\n");
  write("b.txt", "nothing here: 12:00, std::vector, http://example.com:80/\n");
  write("sub/c.conf", "url = postgres://u@10.20.0.11:6852/db\nimg = arec://image/demo/c\n");
  write("sub/d.md", "see [::1]:5000/x and n3:5001/builder\n");
  write("e.bin", std::string("10.20.0.11:5000/demo/bin\0", 26));
  RebuildQuery fast(mesh(), {}, RebuildQuery::External::omit);
  RebuildQuery full(mesh(), {}, RebuildQuery::External::include);
  ASSERT_TRUE(fast.scan_path(dir));
  ASSERT_TRUE(full.scan_path(dir));
  EXPECT_EQ(places(fast.findings(RebuildQuery::External::omit)), places(full.findings(RebuildQuery::External::omit)));
  EXPECT_EQ(fast.findings(RebuildQuery::External::omit).size(), 5u);
  EXPECT_EQ(fast.files_read(), 4u);  // e.bin holds a NUL byte: not a declaration
  std::filesystem::remove_all(dir);
}

TEST(NeedsRebuild, ALongRunOfRequestsOrAddressesIsReadInLinearTime) {
  RebuildQuery q(mesh(), {});
  for (const std::string unit :
       {"arec://", "arec://image/", "arec://endpoint/registry/", "arec://address/registry:5000/", "10.20.0.11:5000/",
        "${A:-", "::::", "[[[[", "10.20.0.11:6852 "}) {
    std::string text;
    while (text.size() < (1u << 20)) text += unit;
    const auto start = std::chrono::steady_clock::now();
    (void)q.scan_text(text, "long.txt");
    const auto took = std::chrono::steady_clock::now() - start;
    // 1 MiB: linear takes about a second; read once for each request in it, it took minutes.
    EXPECT_LT(took, std::chrono::seconds(8)) << unit;
  }
}

TEST(NeedsRebuild, OneRowPerOccurrenceSortedByFileAndLine) {
  RebuildQuery q(mesh(), recorded({{"mesh", "cp"}}));
  ASSERT_TRUE(q.add_reference("10.20.0.11:5000/mesh/cp", "--ref"));
  ASSERT_TRUE(q.scan_text(
      "b: 10.20.0.11:5000/builder:genesis\nc: x\nd: 10.20.0.11:5000/builder:genesis 10.20.0.11:5000/builder:genesis\n",
      "z.yaml"));
  ASSERT_TRUE(q.scan_text("image: 10.20.0.11:5000/mesh/cp\n", "a.yaml"));
  q.add_catalog_entry("10.20.0.11:5000", "mesh/cp", "v1");  // pushed by arec: fine
  q.add_catalog_entry("10.20.0.11:5000", "builder", "genesis");
  const auto findings = q.findings(RebuildQuery::External::omit);
  EXPECT_EQ(kinds(findings),
            "10.20.0.11:5000/mesh/cp hard-coded-address a.yaml:1\n"
            "10.20.0.11:5000/builder:genesis genesis-pinned z.yaml:1\n"
            "10.20.0.11:5000/builder:genesis genesis-pinned z.yaml:3\n"
            "10.20.0.11:5000/builder:genesis genesis-pinned z.yaml:3\n"
            "10.20.0.11:5000/mesh/cp hard-coded-address --ref\n"
            "10.20.0.11:5000/builder:genesis genesis-pinned catalog\n");
  EXPECT_EQ(findings[2].column, 4u);
  EXPECT_EQ(findings[3].column, 36u);
  const auto count = count_breaking(findings);
  EXPECT_EQ(count.references, 2u);
  EXPECT_EQ(count.occurrences, 6u);
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
  // Where no node can start, yaml-cpp 0.7's LoadAll would loop forever, growing; it is an error instead.
  EXPECT_EQ(yaml_error("a: 1\n---\n,\n"), "broken.yaml:3: malformed YAML: no node can start at \",\"");
  EXPECT_EQ(yaml_error(","), "broken.yaml:1: malformed YAML: no node can start at \",\"");
  EXPECT_EQ(yaml_error(std::string(",i20\0"
                                   "0020",
                                   9)),
            "broken.yaml:1: malformed YAML: no node can start at \",\"");
  EXPECT_EQ(yaml_error("a: 1\n---\nb: 2\n---\n---\n"), "accepted");
  auto missing = q.scan_path("/nonexistent/declarations");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "/nonexistent/declarations: no such file or directory");
}

}  // namespace
}  // namespace arec
