#include "recorder/cyclonedx.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

SbomFacts facts() {
  SbomFacts f;
  f.module = "demo";
  f.name = "hello";
  f.revision = "abc";
  f.image = *Digest::parse("sha256:" + std::string(64, 'a'));
  f.created = 1700000000;
  f.os = Distribution{"debian", "12", "12.11", "Debian GNU/Linux 12 (bookworm)"};
  const DebianPackage ssl{"libssl3", "3.0", "amd64", "OpenSSL Team <ssl@example.org>"};
  SbomPackage package{"deb:libssl3:amd64", "libssl3", "3.0", debian_purl(ssl, f.os), ssl.maintainer, {}, {}, {}, {}};
  package.licence.expression = "Apache-2.0";
  SbomPackage other{"deb:libodd:amd64", "libodd", "1", "pkg:deb/debian/libodd@1?arch=amd64", "", {}, {}, {}, {}};
  other.licence = {"LicenseRef-Odd", {{"LicenseRef-Odd", "Odd", "The odd text."}}};
  SbomPackage both{"deb:libtwo:amd64", "libtwo", "2", "pkg:deb/debian/libtwo@2?arch=amd64", "", {}, {}, {}, {}};
  both.licence.expression = "MIT AND LicenseRef-Odd";
  f.packages = {std::move(other), std::move(package), std::move(both)};
  f.files = {{"usr/lib/libcrypto.so.3", "", "", {ssl}},
             {"usr/local/bin/hello", std::string(40, '1'), std::string(64, '2'), {}}};
  f.depends_on = {{"record", {"file:usr/local/bin/hello", "os"}}, {"file:usr/local/bin/hello", {"deb:libssl3:amd64"}}};
  return f;
}

TEST(CycloneDx, TheImageItsOsPackagesAndFilesOfNoPackage) {
  const auto doc = cyclonedx_document(facts());
  EXPECT_EQ(doc["bomFormat"], "CycloneDX");
  EXPECT_EQ(doc["specVersion"], "1.6");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["metadata"]["timestamp"], "2023-11-14T22:13:20Z");
  const auto& subject = doc["metadata"]["component"];
  EXPECT_EQ(subject["type"], "container");
  EXPECT_EQ(subject["name"], "demo/hello");
  EXPECT_EQ(subject["version"], "abc");
  EXPECT_EQ(subject["purl"], "pkg:oci/hello@sha256%3A" + std::string(64, 'a'));
  const auto& c = doc["components"];
  ASSERT_EQ(c.size(), 5U);
  EXPECT_EQ(c[0]["type"], "operating-system");
  EXPECT_EQ(c[0]["name"], "debian");
  EXPECT_EQ(c[0]["version"], "12.11");
  EXPECT_EQ(c[2]["name"], "libssl3");
  EXPECT_EQ(c[2]["type"], "library");
  EXPECT_EQ(c[2]["purl"], "pkg:deb/debian/libssl3@3.0?arch=amd64&distro=debian-12.11");
  EXPECT_EQ(c[2]["supplier"]["name"], "OpenSSL Team");
  EXPECT_EQ(c[2]["supplier"]["contact"][0]["email"], "ssl@example.org");
  // One identifier of the SPDX list: a license by id; one the list lacks: its name and text; more: an expression.
  EXPECT_EQ(c[2]["licenses"][0]["license"]["id"], "Apache-2.0");
  EXPECT_EQ(c[1]["licenses"][0]["license"]["name"], "Odd");
  EXPECT_EQ(c[1]["licenses"][0]["license"]["text"]["content"], "The odd text.");
  EXPECT_EQ(c[3]["licenses"][0]["expression"], "MIT AND LicenseRef-Odd");
  // The package's file is the package's; the program is a file with its hashes.
  EXPECT_EQ(c[4]["type"], "file");
  EXPECT_EQ(c[4]["name"], "/usr/local/bin/hello");
  EXPECT_EQ(c[4]["hashes"][1]["alg"], "SHA-256");
  EXPECT_EQ(c[4]["hashes"][1]["content"], std::string(64, '2'));
  const auto& deps = doc["dependencies"];
  ASSERT_EQ(deps.size(), 6U);
  EXPECT_EQ(deps[0]["ref"], "record");
  EXPECT_EQ(deps[0]["dependsOn"], (nlohmann::json{"file:usr/local/bin/hello", "os"}));
  EXPECT_EQ(deps[5]["ref"], "file:usr/local/bin/hello");
  EXPECT_EQ(deps[5]["dependsOn"], (nlohmann::json{"deb:libssl3:amd64"}));
}

TEST(CycloneDx, SerialNumberIsAVersion5UuidOfTheImage) {
  const auto a = cyclonedx_document(facts())["serialNumber"].get<std::string>();
  auto other = facts();
  other.image = *Digest::parse("sha256:" + std::string(64, 'b'));
  const auto b = cyclonedx_document(other)["serialNumber"].get<std::string>();
  EXPECT_NE(a, b);
  for (const auto& s : {a, b}) {
    ASSERT_EQ(s.size(), 45U) << s;
    EXPECT_TRUE(s.starts_with("urn:uuid:")) << s;
    EXPECT_EQ(s[23], '5') << s;
    EXPECT_NE(std::string("89ab").find(s[28]), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace arec
