#include "recorder/dependencies.hpp"

#include <gtest/gtest.h>

#include "recorder/cyclonedx.hpp"
#include "recorder/layering.hpp"
#include "recorder/sbom.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

TEST(PackagesInfo, ReadsEveryField) {
  auto declared = parse_packages_info(R"({"packages": [{
      "name": "vendorlib", "version": "4.2.0", "download_location": "https://vendor.example/v-4.2.0.tar.gz",
      "checksum": "SHA256=ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789",
      "license": "LicenseRef-Vendor", "supplier": "Organization: Vendor", "purl": "pkg:generic/vendorlib@4.2.0",
      "paths": ["/opt/vendor//lib/"], "files": ["libvendor.so.4"]}]})",
                                      "vendor.json");
  ASSERT_TRUE(declared) << declared.error().message;
  ASSERT_EQ(declared->size(), 1u);
  const DeclaredPackage& d = declared->front();
  EXPECT_EQ(d.package.name, "vendorlib");
  EXPECT_EQ(d.package.version, "4.2.0");
  EXPECT_EQ(d.package.download_location, "https://vendor.example/v-4.2.0.tar.gz");
  EXPECT_EQ(d.package.checksums, (std::vector<std::pair<std::string, std::string>>{
                                     {"SHA256", "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}}));
  EXPECT_EQ(d.package.licence.expression, "LicenseRef-Vendor");
  EXPECT_EQ(d.package.supplier, "Organization: Vendor");
  EXPECT_EQ(d.package.purl, "pkg:generic/vendorlib@4.2.0");
  EXPECT_EQ(d.paths, std::vector<fs::Path>{"/opt/vendor/lib/"});
  EXPECT_EQ(d.names, std::vector<std::string>{"libvendor.so.4"});
}

TEST(PackagesInfo, RefusesWhatItCannotReadNamingTheFileAndTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"[]", "packages info p.json: expected an object with \"packages\""},
      {R"({"packages": {}})", "packages info p.json: .packages: expected an array"},
      {R"({"packages": [], "other": 1})", "packages info p.json: .other: unknown field"},
      {R"({"packages": [{"version": "1"}]})", "packages info p.json: .packages[0]: no \"name\""},
      {R"({"packages": [{"name": "a", "licence": "MIT"}]})",
       "packages info p.json: .packages[0].licence: unknown field (expected name, version"},
      {R"({"packages": [{"name": "a", "version": 1}]})",
       "packages info p.json: .packages[0].version: expected a string"},
      {R"({"packages": [{"name": "a", "paths": ["lib"]}]})", "\"lib\" is not an absolute path"},
      {R"({"packages": [{"name": "a", "files": ["lib/x.so"]}]})", "\"lib/x.so\" is not a file name"},
      {R"({"packages": [{"name": "a", "checksum": "CRC32=1234"}]})", "is not ALGORITHM=HEX with one of MD5, SHA1"},
      {R"({"packages": [{"name": "a", "checksum": "SHA256=12"}]})", "is not 64 hex digits of SHA256"},
      {R"({"packages": [{"name": "a\u001b[2J"}]})", "holds a control character"},
      {"{", "packages info p.json: malformed JSON"},
  };
  for (const auto& [text, expected] : cases) {
    auto declared = parse_packages_info(text, "p.json");
    ASSERT_FALSE(declared) << text;
    EXPECT_NE(declared.error().message.find(expected), std::string::npos) << declared.error().message;
  }
}

TEST(PackagesInfo, ALaterDeclarationOfTheSameNameAddsToTheEarlierOne) {
  auto found = parse_packages_info(
      R"({"packages": [{"name": "tinyidx", "version": "1.2.3", "download_location": "git+file:///r@v1.2.3",
          "paths": ["/b/_deps/tinyidx-src"]}]})",
      "found");
  auto given = parse_packages_info(R"({"packages": [{"name": "tinyidx", "license": "MIT", "files": ["libt.so.1"]},
                                                     {"name": "other"}]})",
                                   "given");
  ASSERT_TRUE(found && given);
  auto merged = merge_declared(std::move(*found), std::move(*given));
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].package.name, "tinyidx");
  EXPECT_EQ(merged[0].package.version, "1.2.3");
  EXPECT_EQ(merged[0].package.licence.expression, "MIT");
  EXPECT_EQ(merged[0].package.download_location, "git+file:///r@v1.2.3");
  EXPECT_EQ(merged[0].paths.size(), 1u);
  EXPECT_EQ(merged[0].names, std::vector<std::string>{"libt.so.1"});
  EXPECT_EQ(merged[1].package.name, "other");
}

SbomPackage package(std::string name, std::string version, std::string download_location = "") {
  SbomPackage p;
  p.name = std::move(name);
  p.version = std::move(version);
  p.download_location = std::move(download_location);
  return p;
}

TEST(DependencyPurl, FitsWhereTheDependencyCameFrom) {
  SbomPackage p = package("tinyidx", "1.2.3", "git+https://github.com/Example/TinyIdx.git@v1.2.3");
  EXPECT_EQ(dependency_purl(p), "pkg:github/example/tinyidx@v1.2.3");
  p.download_location = "https://github.com/example/tinyidx/archive/refs/tags/v1.2.3.tar.gz";
  EXPECT_EQ(dependency_purl(p), "pkg:github/example/tinyidx@1.2.3");
  p.download_location = "git+file:///tmp/repos/tinyidx.git@v1.2.3";
  EXPECT_EQ(dependency_purl(p),
            "pkg:generic/tinyidx@1.2.3?vcs_url=git%2Bfile%3A%2F%2F%2Ftmp%2Frepos%2Ftinyidx.git%40v1.2.3");
  p.download_location = "file:///tmp/fastcrc-0.9.1.tar.gz";
  p.checksums = {{"SHA256", "00ff"}};
  EXPECT_EQ(dependency_purl(p),
            "pkg:generic/tinyidx@1.2.3?checksum=sha256%3A00ff&download_url=file%3A%2F%2F%2Ftmp%2Ffastcrc-0.9.1.tar.gz");
  SbomPackage bare = package("vendorlib", "");
  EXPECT_EQ(dependency_purl(bare), "pkg:generic/vendorlib");
  bare.purl = "pkg:generic/acme/vendorlib@4";
  EXPECT_EQ(dependency_purl(bare), "pkg:generic/acme/vendorlib@4") << "a purl given is kept";
  EXPECT_EQ(dependency_origin(p), "dep:tinyidx=1.2.3");
  EXPECT_EQ(dependency_origin(bare), "dep:vendorlib");
}

LayerEntry file_entry(const std::string& path, const fs::Path& source) {
  return {LayerEntry::Type::file, path, source, {}, 0644, 1, {}};
}

TEST(DependencyOfFiles, ByPathUnderADirectoryThenByName) {
  TempDir dir;
  write_file(dir / "opt/vendor/lib/libvendor.so.4", "v");
  write_file(dir / "opt/vendor/lib/sub/libdeeper.so", "d");
  write_file(dir / "stage/usr/local/lib/libtinyidx.so.1.2.3", "t");
  write_file(dir / "stage/usr/local/lib/libown.so.2", "o");
  std::vector<DeclaredPackage> declared(3);
  declared[0].package.name = "vendorlib";
  declared[0].paths = {dir / "opt/vendor"};
  declared[1].package.name = "deeper";
  declared[1].paths = {dir / "opt/vendor/lib/sub"};
  declared[2].package.name = "tinyidx";
  declared[2].names = {"libtinyidx.so.1.2.3"};
  const std::vector<LayerEntry> entries{
      file_entry("opt/vendor/lib/libvendor.so.4", dir / "opt/vendor/lib/libvendor.so.4"),
      file_entry("usr/lib/libdeeper.so", dir / "opt/vendor/lib/sub/libdeeper.so"),
      file_entry("usr/local/lib/libtinyidx.so.1.2.3", dir / "stage/usr/local/lib/libtinyidx.so.1.2.3"),
      file_entry("usr/local/lib/libown.so.2", dir / "stage/usr/local/lib/libown.so.2"),
  };
  auto of = dependency_of_files(entries, declared);
  ASSERT_TRUE(of) << of.error().message;
  EXPECT_EQ(*of, (std::map<std::string, std::size_t>{{"opt/vendor/lib/libvendor.so.4", 0},
                                                     {"usr/lib/libdeeper.so", 1},
                                                     {"usr/local/lib/libtinyidx.so.1.2.3", 2}}));
  std::vector<SbomFile> files;
  for (const auto& e : entries) files.push_back({e.path, "", "", {}});
  const auto packages = dependency_sbom_packages(declared, *of, files);
  ASSERT_EQ(packages.size(), 3u);
  EXPECT_EQ(packages[0].key, "dep:deeper");
  EXPECT_EQ(packages[2].key, "dep:vendorlib");
  EXPECT_EQ(packages[2].name, "vendorlib");
  EXPECT_EQ(packages[2].purl, "pkg:generic/vendorlib");
  std::vector<std::string> holders;
  for (const auto& f : files) holders.push_back(f.dependency);
  EXPECT_EQ(holders, (std::vector<std::string>{"dep:vendorlib", "dep:deeper", "dep:tinyidx", ""}));

  // A file a Debian package installed stays that package's: its dependency is named by nothing else.
  std::vector<SbomFile> owned;
  for (const auto& e : entries) owned.push_back({e.path, "", "", {}});
  owned[1].packages = {DebianPackage{"libdeeper1", "1.0-1", "amd64", ""}};
  const auto without = dependency_sbom_packages(declared, *of, owned);
  ASSERT_EQ(without.size(), 2u);
  EXPECT_EQ(without[0].key, "dep:tinyidx");
  EXPECT_EQ(owned[1].dependency, "");
}

// A dependency's files, and the links leading to them, leave the groups of no Debian package for one of
// their own after the OS identity's and the packages'; a directory left empty goes with them, a group left
// empty is dropped.
TEST(SeparateDependencies, ADependencyIsALayerOfItsOwn) {
  const auto group = [](LayerOrigin kind, std::string origin, std::vector<LayerEntry> entries) {
    LayerGroup g;
    g.kind = kind;
    g.origin = origin;
    g.key = origin;
    g.entries = std::move(entries);
    return g;
  };
  const auto dir = [](std::string path) { return LayerEntry{LayerEntry::Type::directory, path, {}, {}, 0755, 0, {}}; };
  const auto link = [](std::string path, std::string target) {
    return LayerEntry{LayerEntry::Type::symlink, path, {}, target, 0777, 0, {}};
  };
  std::vector<LayerGroup> groups;
  groups.push_back(group(LayerOrigin::os, "os:debian=12.11", {file_entry("usr/lib/os-release", "/r")}));
  groups.push_back(group(LayerOrigin::package, "deb:libc6=2.36:amd64", {file_entry("usr/lib/libc.so.6", "/l")}));
  groups.push_back(group(LayerOrigin::no_package, "no-package",
                         {dir("opt"), dir("opt/vendor"), file_entry("opt/vendor/libvendor.so.4", "/v")}));
  groups.push_back(
      group(LayerOrigin::own_libraries, "own-libraries",
            {dir("usr"), dir("usr/local"), dir("usr/local/lib"), file_entry("usr/local/lib/libown.so", "/o"),
             link("usr/local/lib/libtinyidx.so.1", "libtinyidx.so.1.2.3"),
             file_entry("usr/local/lib/libtinyidx.so.1.2.3", "/t")}));
  std::vector<DeclaredPackage> declared(2);
  declared[0].package = package("vendorlib", "4.2.0");
  declared[1].package = package("tinyidx", "1.2.3");
  const std::map<std::string, std::size_t> of{{"opt/vendor/libvendor.so.4", 0},
                                              {"usr/local/lib/libtinyidx.so.1.2.3", 1}};
  auto separated = separate_dependencies(std::move(groups), of, declared);
  ASSERT_TRUE(separated) << separated.error().message;
  std::vector<std::string> origins;
  for (const auto& g : *separated) origins.push_back(g.origin);
  EXPECT_EQ(origins, (std::vector<std::string>{"os:debian=12.11", "deb:libc6=2.36:amd64", "dep:tinyidx=1.2.3",
                                               "dep:vendorlib=4.2.0", "own-libraries"}));
  ASSERT_EQ(separated->size(), 5u);
  std::vector<std::string> tinyidx;
  for (const auto& e : (*separated)[2].entries) tinyidx.push_back(e.path);
  EXPECT_EQ(tinyidx, (std::vector<std::string>{"usr", "usr/local", "usr/local/lib", "usr/local/lib/libtinyidx.so.1",
                                               "usr/local/lib/libtinyidx.so.1.2.3"}));
  std::vector<std::string> own;
  for (const auto& e : (*separated)[4].entries) own.push_back(e.path);
  EXPECT_EQ(own, (std::vector<std::string>{"usr", "usr/local", "usr/local/lib", "usr/local/lib/libown.so"}));
}

// The facts of an image of a program and the library of a dependency it needs, as image_sbom gathers them.
SbomFacts gateway_facts(std::vector<DeclaredPackage> declared, const std::map<std::string, std::size_t>& of_file) {
  SbomFacts facts;
  facts.module = "shop";
  facts.name = "gateway";
  facts.image = *Digest::parse("sha256:" + std::string(64, 'a'));
  facts.files = {{"usr/local/bin/gateway", "11", "22", {}}, {"usr/local/lib/libtinyidx.so.1.2.3", "33", "44", {}}};
  facts.packages = dependency_sbom_packages(declared, of_file, facts.files);
  const std::vector<LayerEntry> entries{
      file_entry("usr/local/bin/gateway", "/g"),
      file_entry("usr/local/lib/libtinyidx.so.1.2.3", "/t"),
      {LayerEntry::Type::symlink, "usr/local/lib/libtinyidx.so.1", {}, "libtinyidx.so.1.2.3", 0777, 0, {}}};
  facts.depends_on =
      dependency_graph({{"usr/local/bin/gateway", "usr/local/lib/libtinyidx.so.1"}}, entries, facts.files, false);
  return facts;
}

DeclaredPackage tinyidx_declared() {
  DeclaredPackage d;
  d.package = package("tinyidx", "1.2.3", "git+file:///r.git@v1.2.3");
  d.package.checksums = {{"SHA256", "ab"}};
  d.package.licence.expression = "MIT";
  d.package.supplier = "Organization: Tiny Org (dev@tiny.example)";
  return d;
}

TEST(SpdxDependencies, APackageOfNoDebianPackageIsNamedWithItsFiles) {
  const auto doc = spdx_document(gateway_facts({tinyidx_declared()}, {{"usr/local/lib/libtinyidx.so.1.2.3", 0}}));
  const auto& packages = doc["packages"];
  ASSERT_EQ(packages.size(), 2u);
  const auto& dep = packages[1];
  EXPECT_EQ(dep["SPDXID"], "SPDXRef-Package-dep-tinyidx");
  EXPECT_EQ(dep["name"], "tinyidx");
  EXPECT_EQ(dep["versionInfo"], "1.2.3");
  EXPECT_EQ(dep["downloadLocation"], "git+file:///r.git@v1.2.3");
  EXPECT_EQ(dep["licenseDeclared"], "MIT");
  EXPECT_EQ(dep["supplier"], "Organization: Tiny Org (dev@tiny.example)");
  EXPECT_EQ(dep["checksums"][0]["algorithm"], "SHA256");
  EXPECT_EQ(dep["externalRefs"][0]["referenceLocator"],
            "pkg:generic/tinyidx@1.2.3?checksum=sha256%3Aab&vcs_url=git%2Bfile%3A%2F%2F%2Fr.git%40v1.2.3");
  std::vector<std::string> relationships;
  for (const auto& r : doc["relationships"]) {
    relationships.push_back(r["spdxElementId"].get<std::string>() + " " + r["relationshipType"].get<std::string>() +
                            " " + r["relatedSpdxElement"].get<std::string>());
  }
  EXPECT_EQ(relationships, (std::vector<std::string>{"SPDXRef-DOCUMENT DESCRIBES SPDXRef-Package-record",
                                                     "SPDXRef-Package-record CONTAINS SPDXRef-Package-dep-tinyidx",
                                                     "SPDXRef-Package-record CONTAINS SPDXRef-File-1",
                                                     "SPDXRef-Package-dep-tinyidx CONTAINS SPDXRef-File-2"}));
  // Only what is known: no version, licence or checksum is asserted of a package declared with none.
  DeclaredPackage bare;
  bare.package.name = "tinyidx";
  const auto unknown = spdx_document(gateway_facts({bare}, {{"usr/local/lib/libtinyidx.so.1.2.3", 0}}));
  for (const char* field : {"versionInfo", "licenseDeclared", "licenseConcluded", "checksums"}) {
    EXPECT_FALSE(unknown["packages"][1].contains(field)) << field;
  }
  EXPECT_EQ(unknown["packages"][1]["supplier"], "NOASSERTION");
}

TEST(CycloneDxDependencies, APackageOfNoDebianPackageHoldsItsFilesAndIsNeeded) {
  auto declared = tinyidx_declared();
  declared.package.checksums = {{"SHA256", "ab"}, {"SHA224", "cd"}};  // CycloneDX has no SHA-224
  const auto doc = cyclonedx_document(gateway_facts({declared}, {{"usr/local/lib/libtinyidx.so.1.2.3", 0}}));
  const auto& components = doc["components"];
  ASSERT_EQ(components.size(), 2u);
  const auto& dep = components[0];
  EXPECT_EQ(dep["bom-ref"], "dep:tinyidx");
  EXPECT_EQ(dep["type"], "library");
  EXPECT_EQ(dep["version"], "1.2.3");
  EXPECT_EQ(dep["purl"], "pkg:generic/tinyidx@1.2.3?checksum=sha256%3Aab&vcs_url=git%2Bfile%3A%2F%2F%2Fr.git%40v1.2.3");
  EXPECT_EQ(dep["licenses"], nlohmann::json::parse(R"([{"license": {"id": "MIT"}}])"));
  EXPECT_EQ(dep["supplier"],
            nlohmann::json::parse(R"({"name": "Tiny Org", "contact": [{"email": "dev@tiny.example"}]})"));
  EXPECT_EQ(dep["hashes"], nlohmann::json::parse(R"([{"alg": "SHA-256", "content": "ab"}])"));
  EXPECT_EQ(dep["externalReferences"][0]["type"], "vcs");
  // Its file is its component, not one of the document's own.
  ASSERT_EQ(dep["components"].size(), 1u);
  EXPECT_EQ(dep["components"][0]["name"], "/usr/local/lib/libtinyidx.so.1.2.3");
  EXPECT_EQ(components[1]["name"], "/usr/local/bin/gateway");
  // The program needs the dependency: the graph names the package, not its file.
  std::map<std::string, nlohmann::json> depends_on;
  for (const auto& d : doc["dependencies"]) depends_on[d["ref"].get<std::string>()] = d["dependsOn"];
  EXPECT_EQ(depends_on["file:usr/local/bin/gateway"], nlohmann::json::array({"dep:tinyidx"}));
  EXPECT_EQ(depends_on["record"], nlohmann::json::array({"file:usr/local/bin/gateway"}));
  EXPECT_EQ(depends_on["dep:tinyidx"], nlohmann::json::array());
}

TEST(SpdxDependencies, NamesThatGiveOneIdentifierStayApart) {
  std::vector<DeclaredPackage> declared(2);
  declared[0].package = package("json_lite", "1");
  declared[1].package = package("json-lite", "2");
  SbomFacts facts;
  facts.module = "shop";
  facts.name = "gateway";
  facts.image = *Digest::parse("sha256:" + std::string(64, 'b'));
  facts.files = {{"usr/lib/libjson_lite.so", "1", "2", {}}, {"usr/lib/libjson-lite.so", "3", "4", {}}};
  facts.packages =
      dependency_sbom_packages(declared, {{"usr/lib/libjson_lite.so", 0}, {"usr/lib/libjson-lite.so", 1}}, facts.files);
  const auto doc = spdx_document(facts);
  ASSERT_EQ(doc["packages"].size(), 3u);
  // In the order of their keys: "dep:json-lite" before "dep:json_lite".
  EXPECT_EQ(doc["packages"][1]["name"], "json-lite");
  EXPECT_EQ(doc["packages"][1]["SPDXID"], "SPDXRef-Package-dep-json-lite");
  EXPECT_EQ(doc["packages"][2]["name"], "json_lite");
  EXPECT_EQ(doc["packages"][2]["SPDXID"], "SPDXRef-Package-dep-json-lite-2");
}

}  // namespace
}  // namespace arec
