#include "recorder/sbom.hpp"

#include <gtest/gtest.h>

#include "recorder/cyclonedx.hpp"
#include "recorder/image.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

// A dpkg admin directory as dpkg writes it: info/<package>[:<arch>].list and status paragraphs.
void write_dpkg_database(const TempDir& dir, const std::filesystem::path& owned, const std::filesystem::path& other) {
  write_file(dir / "dpkg/info/libfoo1:amd64.list", "/.\n/usr\n" + owned.string() + "\n");
  write_file(dir / "dpkg/info/tool.list", other.string() + "\n");
  write_file(dir / "dpkg/info/gone.list", owned.string() + "\n");
  write_file(dir / "dpkg/status",
             "Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nMulti-Arch: same\n"
             "Maintainer: Foo Team <foo@example.org>\nVersion: 1:2.0+dfsg-1~deb12u1\nDescription: foo\n a library\n\n"
             "Package: libfoo1\nStatus: install ok installed\nArchitecture: i386\nVersion: 1:2.0+dfsg-1~deb12u1\n\n"
             "Package: tool\nStatus: install ok installed\nArchitecture: all\nVersion: 3\n"
             "Maintainer: Someone <s@example.org>\n\n"
             "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 9\n");
}

TEST(Sbom, DpkgOwnersComeFromListFilesAndInstalledStatusOnly) {
  TempDir dir;
  const auto owned = dir / "root/lib/libfoo.so.1";
  const auto other = dir / "root/bin/tool";
  const auto nobody = dir / "root/bin/mine";
  for (const auto& p : {owned, other, nobody}) write_file(p, "x");
  write_dpkg_database(dir, owned, other);
  auto owners = DpkgDatabase(dir / "dpkg").owners({owned.string(), other.string(), nobody.string()});
  ASSERT_TRUE(owners) << owners.error().message;
  ASSERT_EQ(owners->size(), 2U);
  // libfoo1:amd64 lists it; libfoo1:i386 does not, and "gone" is not installed any more.
  const auto& foo = owners->at(owned.string());
  ASSERT_EQ(foo.size(), 1U);
  EXPECT_EQ(foo[0].name, "libfoo1");
  EXPECT_EQ(foo[0].architecture, "amd64");
  EXPECT_EQ(foo[0].version, "1:2.0+dfsg-1~deb12u1");
  EXPECT_EQ(foo[0].maintainer, "Foo Team <foo@example.org>");
  EXPECT_EQ(owners->at(other.string()).at(0).name, "tool");
  EXPECT_FALSE(owners->contains(nobody.string()));

  // Many paths are matched line by line rather than searched for one by one: the same answer.
  std::vector<std::string> many{owned.string(), other.string(), nobody.string()};
  for (int i = 0; i < 40; ++i) many.push_back((dir / ("root/none" + std::to_string(i))).string());
  auto by_lines = DpkgDatabase(dir / "dpkg").owners(many);
  ASSERT_TRUE(by_lines);
  EXPECT_EQ(*by_lines, *owners);
}

TEST(Sbom, MissingDpkgDatabaseOwnsNothing) {
  TempDir dir;
  auto owners = DpkgDatabase(dir / "nowhere").owners({"/usr/bin/env"});
  ASSERT_TRUE(owners);
  EXPECT_TRUE(owners->empty());
}

TEST(Sbom, HostLibraryUnderMergedUsrIsFoundUnderEitherSpelling) {
  const std::string lib = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3";
  if (!std::filesystem::exists(lib) || !std::filesystem::exists("/var/lib/dpkg/status")) {
    GTEST_SKIP() << lib << " or the dpkg database is not on this machine";
  }
  auto owners = DpkgDatabase().owners({lib, "/lib/x86_64-linux-gnu/libcrypto.so.3"});
  ASSERT_TRUE(owners) << owners.error().message;
  ASSERT_EQ(owners->size(), 2U);
  for (const auto& [path, packages] : *owners) {
    ASSERT_EQ(packages.size(), 1U) << path;
    EXPECT_EQ(packages[0].name, "libssl3") << path;
  }
}

TEST(Sbom, PurlNamesTheDistributionAndTakesTheEpochAsAQualifier) {
  const Distribution debian{"debian", "12", "12.11", "Debian GNU/Linux 12 (bookworm)"};
  const Distribution ubuntu{"ubuntu", "24.04", "24.04", "Ubuntu 24.04.2 LTS"};
  // As Trivy names them: the epoch a qualifier, not part of the version; qualifiers sorted by key.
  EXPECT_EQ(debian_purl({"libstdc++6", "1:12.2.0-14+deb12u1", "amd64", ""}, debian),
            "pkg:deb/debian/libstdc%2B%2B6@12.2.0-14+deb12u1?arch=amd64&distro=debian-12.11&epoch=1");
  EXPECT_EQ(debian_purl({"libssl3", "3.0.19-1~deb12u2", "amd64", ""}, debian),
            "pkg:deb/debian/libssl3@3.0.19-1~deb12u2?arch=amd64&distro=debian-12.11");
  EXPECT_EQ(debian_purl({"libssl3t64", "3.0.13-0ubuntu3.5", "arm64", ""}, ubuntu),
            "pkg:deb/ubuntu/libssl3t64@3.0.13-0ubuntu3.5?arch=arm64&distro=ubuntu-24.04");
  // A colon that is no epoch stays in the version; without a distribution, Debian's namespace alone.
  EXPECT_EQ(debian_purl({"odd", "a:1", "all", ""}, std::nullopt), "pkg:deb/debian/odd@a%3A1?arch=all");
}

TEST(Sbom, FormatsAreOneOrBothOrNone) {
  EXPECT_EQ(*parse_sbom_formats("spdx"), std::vector<SbomFormat>{SbomFormat::spdx});
  EXPECT_EQ(*parse_sbom_formats("cyclonedx"), std::vector<SbomFormat>{SbomFormat::cyclonedx});
  EXPECT_EQ(*parse_sbom_formats("spdx,cyclonedx"), (std::vector<SbomFormat>{SbomFormat::spdx, SbomFormat::cyclonedx}));
  EXPECT_TRUE(parse_sbom_formats("none")->empty());
  for (const char* bad : {"", "spdx,", "spdx,spdx", "SPDX", "none,spdx", "cdx"}) {
    auto refused = parse_sbom_formats(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("--sbom \"" + std::string(bad) + "\""), std::string::npos)
        << refused.error().message;
  }
}

// A record of a program on libssl3, whose copyright file is DEP-5, on Debian 12.11.
SbomFacts sample_facts() {
  static const TempDir dir;
  write_file(dir / "doc/copyright",
             "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
             "Files: *\nCopyright: OpenSSL\nLicense: Apache-2.0\n\nFiles: crypto/x\nCopyright: A\nLicense: Odd\n"
             " The odd licence's text.\n");
  write_file(dir / "dpkg/info/libssl3:amd64.list", (dir / "doc").string() + "/usr/share/doc/libssl3\n");
  std::filesystem::create_directories(dir / "doc/usr/share/doc");
  if (!std::filesystem::exists(dir / "doc/usr/share/doc/libssl3"))
    std::filesystem::create_symlink(dir / "doc", dir / "doc/usr/share/doc/libssl3");
  SbomFacts facts;
  facts.module = "demo";
  facts.name = "hello";
  facts.revision = "abc";
  facts.image = *Digest::parse("sha256:" + std::string(64, 'a'));
  facts.created = 1700000000;
  facts.os = Distribution{"debian", "12", "12.11", "Debian GNU/Linux 12 (bookworm)"};
  const DebianPackage ssl{"libssl3", "3.0", "amd64", "OpenSSL Team <ssl@example.org>"};
  facts.files = {{"usr/lib/libcrypto.so.3", "", "", {ssl}},
                 {"usr/local/bin/hello", std::string(40, '2'), std::string(64, '2'), {}}};
  facts.packages = *debian_sbom_packages(facts.files, DpkgDatabase(dir / "dpkg"), facts.os);
  facts.depends_on = dependency_graph({{"usr/local/bin/hello", "usr/lib/libcrypto.so.3"}}, {}, facts.files, true);
  return facts;
}

TEST(Sbom, PackagesAreDescribedOnceWithTheirLicence) {
  const auto facts = sample_facts();
  ASSERT_EQ(facts.packages.size(), 1U);
  const auto& ssl = facts.packages[0];
  EXPECT_EQ(ssl.key, "deb:libssl3:amd64");
  EXPECT_EQ(ssl.purl, "pkg:deb/debian/libssl3@3.0?arch=amd64&distro=debian-12.11");
  EXPECT_EQ(ssl.supplier, "OpenSSL Team <ssl@example.org>");
  // Read through the documentation link Debian allows; the licence the SPDX list lacks is a reference.
  EXPECT_EQ(ssl.licence.expression, "Apache-2.0 AND LicenseRef-Odd");
  ASSERT_EQ(ssl.licence.others.size(), 1U);
  EXPECT_EQ(ssl.licence.others[0].text, "The odd licence's text.");
  // The program needs libssl3; the record depends on what nothing else needs, and on the OS.
  EXPECT_EQ(facts.depends_on.at("file:usr/local/bin/hello"), std::set<std::string>{"deb:libssl3:amd64"});
  EXPECT_EQ(facts.depends_on.at("record"), (std::set<std::string>{"file:usr/local/bin/hello", "os"}));
}

TEST(Sbom, DocumentDescribesTheRecordAndItsPackages) {
  const auto doc = spdx_document(sample_facts());
  EXPECT_EQ(doc["spdxVersion"], "SPDX-2.3");
  EXPECT_EQ(doc["dataLicense"], "CC0-1.0");
  EXPECT_EQ(doc["creationInfo"]["created"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(doc["documentNamespace"], "https://arec.dev/spdx/demo/hello/" + std::string(64, 'a'));
  ASSERT_EQ(doc["packages"].size(), 3U);
  EXPECT_EQ(doc["packages"][0]["name"], "demo/hello");
  EXPECT_EQ(doc["packages"][0]["versionInfo"], "abc");
  EXPECT_EQ(doc["packages"][1]["primaryPackagePurpose"], "OPERATING_SYSTEM");
  EXPECT_EQ(doc["packages"][1]["versionInfo"], "12.11");
  const auto& ssl = doc["packages"][2];
  EXPECT_EQ(ssl["name"], "libssl3");
  EXPECT_EQ(ssl["supplier"], "Organization: OpenSSL Team (ssl@example.org)");
  EXPECT_EQ(ssl["externalRefs"][0]["referenceLocator"], "pkg:deb/debian/libssl3@3.0?arch=amd64&distro=debian-12.11");
  EXPECT_EQ(ssl["sourceInfo"], "installed by dpkg as libssl3:amd64 3.0");
  EXPECT_EQ(ssl["licenseDeclared"], "Apache-2.0 AND LicenseRef-Odd");
  ASSERT_EQ(doc["hasExtractedLicensingInfos"].size(), 1U);
  EXPECT_EQ(doc["hasExtractedLicensingInfos"][0]["licenseId"], "LicenseRef-Odd");
  // libcrypto is libssl3's: the package names it; only the file of no package is listed.
  ASSERT_EQ(doc["files"].size(), 1U);
  EXPECT_EQ(doc["files"][0]["fileName"], "./usr/local/bin/hello");
  EXPECT_EQ(doc["files"][0]["checksums"][1]["checksumValue"], std::string(64, '2'));
  const auto& rel = doc["relationships"];
  ASSERT_EQ(rel.size(), 4U);
  EXPECT_EQ(rel[0]["relationshipType"], "DESCRIBES");
  EXPECT_EQ(rel[1]["relatedSpdxElement"], "SPDXRef-OperatingSystem");
  EXPECT_EQ(rel[2]["relatedSpdxElement"], ssl["SPDXID"]);        // the record contains libssl3
  EXPECT_EQ(rel[3]["spdxElementId"], "SPDXRef-Package-record");  // the record contains hello
  EXPECT_EQ(rel[3]["relatedSpdxElement"], doc["files"][0]["SPDXID"]);
  // What is not known is not asserted: no licence field for a package whose licence was not found.
  EXPECT_FALSE(doc["packages"][1].contains("licenseDeclared"));
}

TEST(Sbom, DependencyGraphFollowsTheImagesLinksToTheirFiles) {
  const DebianPackage libc{"libc6", "2.36", "amd64", ""};
  const std::vector<SbomFile> files{{"usr/lib/x86_64-linux-gnu/libc.so.6", "", "", {libc}},
                                    {"usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "", "", {libc}},
                                    {"usr/local/lib/libmine.so.1.2", "1", "1", {}},
                                    {"usr/local/bin/app", "2", "2", {}},
                                    {"srv/data", "3", "3", {}}};
  const std::vector<LayerEntry> entries{
      {LayerEntry::Type::symlink, "lib64", {}, "usr/lib64", 0777, 0, {}},
      {LayerEntry::Type::symlink,
       "usr/lib64/ld-linux-x86-64.so.2",
       {},
       "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
       0777,
       0,
       {}},
      {LayerEntry::Type::symlink, "lib", {}, "usr/lib", 0777, 0, {}},
      {LayerEntry::Type::symlink, "usr/local/lib/libmine.so.1", {}, "libmine.so.1.2", 0777, 0, {}}};
  const auto graph = dependency_graph({{"usr/local/bin/app", "lib64/ld-linux-x86-64.so.2"},
                                       {"usr/local/bin/app", "usr/local/lib/libmine.so.1"},
                                       {"usr/local/lib/libmine.so.1.2", "lib/x86_64-linux-gnu/libc.so.6"},
                                       {"usr/local/bin/app", "lib/x86_64-linux-gnu/libc.so.6"},
                                       // the base's: nothing of this image
                                       {"usr/local/bin/app", "usr/lib/libbase.so.1"}},
                                      entries, files, false);
  EXPECT_EQ(graph.at("file:usr/local/bin/app"),
            (std::set<std::string>{"deb:libc6:amd64", "file:usr/local/lib/libmine.so.1.2"}));
  EXPECT_EQ(graph.at("file:usr/local/lib/libmine.so.1.2"), std::set<std::string>{"deb:libc6:amd64"});
  EXPECT_EQ(graph.at("record"), (std::set<std::string>{"file:srv/data", "file:usr/local/bin/app"}));
  EXPECT_FALSE(graph.contains("deb:libc6:amd64"));  // needs nothing of the image (its own files only)
}

TEST(Sbom, SameFactsSameBytes) {
  EXPECT_EQ(*canonical_json(spdx_document(sample_facts())), *canonical_json(spdx_document(sample_facts())));
  EXPECT_EQ(*canonical_json(cyclonedx_document(sample_facts())), *canonical_json(cyclonedx_document(sample_facts())));
  auto later = sample_facts();
  later.created = 0;
  EXPECT_NE(*canonical_json(spdx_document(sample_facts())), *canonical_json(spdx_document(later)));
}

TEST(Sbom, FilesAreHashedAndSortedAndOnlyRegularFilesCount) {
  TempDir dir;
  write_file(dir / "in/b", "hello\n");
  write_file(dir / "in/a", "");
  std::filesystem::create_symlink("b", dir / "in/link");
  auto entries = collect_entries({*parse_layer_input(LayerInput::Kind::directory, (dir / "in").string() + "=/srv")});
  ASSERT_TRUE(entries);
  auto files = sbom_files(*entries, DpkgDatabase(dir / "no-dpkg"));
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2U);
  EXPECT_EQ((*files)[0].path, "srv/a");
  EXPECT_EQ((*files)[0].sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ((*files)[0].sha1, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ((*files)[1].sha256, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  EXPECT_TRUE((*files)[1].packages.empty());
}

TEST(Sbom, AFileOfAKnownPackageIsNeitherReadNorLookedUp) {
  TempDir dir;
  write_file(dir / "in/app", "app");
  std::vector<LayerEntry> entries{
      {LayerEntry::Type::file, "srv/app", dir / "in/app", {}, 0644, 3, {}},
      // Its source is gone: reading it would fail the SBOM.
      {LayerEntry::Type::file, "usr/lib/libfoo.so.1", dir / "gone/libfoo.so.1", {}, 0644, 10, {}},
  };
  const DebianPackage foo{"libfoo1", "1.0", "amd64", ""};
  auto files = sbom_files(entries, DpkgDatabase(dir / "no-dpkg"), {{"usr/lib/libfoo.so.1", foo}});
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 2U);
  EXPECT_EQ((*files)[0].path, "srv/app");
  EXPECT_EQ((*files)[0].sha256, "a172cedcae47474b615c54d510a5d84a8dea3032e958587430b413538be3f333");
  EXPECT_TRUE((*files)[0].packages.empty());
  EXPECT_EQ((*files)[1].packages, std::vector<DebianPackage>{foo});
  EXPECT_TRUE((*files)[1].sha256.empty());
}

TEST(Sbom, ChecksumsTheLayerMadeAreTakenAndOnlyTheOthersRead) {
  TempDir dir;
  write_file(dir / "in/app", "app");
  std::vector<LayerEntry> entries{
      {LayerEntry::Type::file, "srv/app", dir / "in/app", {}, 0644, 3, {}},
      // Its source is gone: the SBOM must take its checksums from the packing's read, not read it again.
      {LayerEntry::Type::file, "srv/packed", dir / "gone/packed", {}, 0644, 6, {}},
  };
  auto files = sbom_packages(entries, DpkgDatabase(dir / "no-dpkg"));
  ASSERT_TRUE(files) << files.error().message;
  ChecksumTable table;
  table.put("srv/packed", checksums_of("hello\n"));
  ASSERT_TRUE(add_checksums(*files, entries, &table));
  ASSERT_EQ(files->size(), 2U);
  EXPECT_EQ((*files)[0].sha256, "a172cedcae47474b615c54d510a5d84a8dea3032e958587430b413538be3f333");  // read here
  EXPECT_EQ((*files)[1].sha256, "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  EXPECT_EQ((*files)[1].sha1, "f572d396fae9206628714fb2ce00f72e94f2258f");
  // Without the table the gone file is an error naming it.
  auto again = sbom_packages(entries, DpkgDatabase(dir / "no-dpkg"));
  const auto s = add_checksums(*again, entries, nullptr);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("gone/packed"), std::string::npos) << s.error().message;
}

TEST(Sbom, StoreListsTheSbomAsAReferrerAndTheRecordKeepsItsDigest) {
  TempDir dir;
  write_file(dir / "in/app", "app");
  auto store = Store::open(dir / "store");
  ASSERT_TRUE(store);
  RecordRequest request;
  request.module = "mesh";
  request.name = "app";
  request.revision = "0123456789abcdef0123456789abcdef01234567";
  request.entries =
      *collect_entries({*parse_layer_input(LayerInput::Kind::directory, (dir / "in").string() + "=/srv")});
  request.sboms.clear();
  auto without = record_image(request, *store);
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_TRUE(store->referrers(without->record.manifest.digest)->empty());
  request.sboms = {SbomFormat::spdx};
  auto with = record_image(request, *store);
  ASSERT_TRUE(with) << with.error().message;
  EXPECT_EQ(with->record.manifest.digest, without->record.manifest.digest);
  EXPECT_FALSE(with->changed);
  auto referrers = store->referrers(with->record.manifest.digest);
  ASSERT_EQ(referrers->size(), 1U);
  EXPECT_EQ((*referrers)[0].artifact_type, media_type::k_spdx_json);
  EXPECT_EQ(store->records(History::all)->size(), 1U);
  auto document = read_sbom(*store, with->record.manifest.digest);
  ASSERT_TRUE(document && *document);
  EXPECT_NE((*document)->find("\"fileName\":\"./srv/app\""), std::string::npos);
}

}  // namespace
}  // namespace arec
