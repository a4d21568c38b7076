#include "recorder/dpkg.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

TEST(Dpkg, AStanzaIsThePackagesOwnWithoutThisMachinesState) {
  const std::string stanza =
      "Package: libfoo1\nStatus: hold ok installed\nPriority: optional\nArchitecture: amd64\n"
      "Version: 1.0-1\nConffiles:\n /etc/foo.conf 0123456789abcdef0123456789abcdef\n"
      " /etc/old.conf 0123456789abcdef0123456789abcdef obsolete\nDescription: foo\n a library\n .\n more\n"
      "Config-Version: 0.9-1\nTriggers-Pending: ldconfig\nHomepage: https://foo.example\n";
  EXPECT_EQ(scanner_stanza(stanza),
            "Package: libfoo1\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
            "Version: 1.0-1\nDescription: foo\n a library\n .\n more\nHomepage: https://foo.example\n");
}

TEST(Dpkg, StanzasAreReadForThePackagesAskedOnly) {
  TempDir dir;
  write_file(dir / "dpkg/status",
             "Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1\n\n"
             "Package: libfoo1\nStatus: install ok installed\nArchitecture: i386\nVersion: 1\n\n"
             "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 9\n\n"
             "Package: tool\nStatus: install ok installed\nArchitecture: all\nVersion: 3\n");
  const DpkgDatabase dpkg(dir / "dpkg");
  auto stanzas = dpkg.stanzas({{"libfoo1", "1", "i386", ""}, {"tool", "3", "all", ""}, {"gone", "9", "amd64", ""}});
  ASSERT_TRUE(stanzas) << stanzas.error().message;
  ASSERT_EQ(stanzas->size(), 2U);
  EXPECT_EQ(stanzas->at("libfoo1:i386"),
            "Package: libfoo1\nStatus: install ok installed\nArchitecture: i386\nVersion: 1\n");
  EXPECT_EQ(stanzas->at("tool:all"), "Package: tool\nStatus: install ok installed\nArchitecture: all\nVersion: 3\n");
  EXPECT_TRUE(DpkgDatabase(dir / "nowhere").stanzas({{"tool", "3", "all", ""}})->empty());
}

TEST(Dpkg, Md5sumsAndTheCopyrightFileThroughADocumentationLink) {
  TempDir dir;
  write_file(dir / "dpkg/info/libfoo1:amd64.md5sums", "d41d8cd98f00b204e9800998ecf8427e  usr/lib/libfoo.so.1\n");
  write_file(dir / "root/usr/share/doc/foo-base/copyright", "Copyright: foo\n");
  std::filesystem::create_symlink("foo-base", dir / "root/usr/share/doc/libfoo1");
  write_file(dir / "dpkg/info/libfoo1:amd64.list", (dir / "root").string() + "/usr/share/doc/libfoo1\n");
  const DpkgDatabase dpkg(dir / "dpkg");
  const DebianPackage foo{"libfoo1", "1", "amd64", ""};
  EXPECT_EQ(*dpkg.md5sums(foo), "d41d8cd98f00b204e9800998ecf8427e  usr/lib/libfoo.so.1\n");
  EXPECT_EQ(*dpkg.md5sums({"tool", "3", "all", ""}), "");
  auto copyright = dpkg.copyright_file(foo);
  ASSERT_TRUE(copyright && *copyright);
  EXPECT_EQ(**copyright, std::filesystem::canonical(dir / "root/usr/share/doc/foo-base/copyright"));
  // No list, or a list naming no copyright file that is there: none.
  EXPECT_FALSE(*dpkg.copyright_file({"tool", "3", "all", ""}));
  write_file(dir / "dpkg/info/bare.list", "/usr/share/doc/bare-nowhere-to-be-found\n");
  EXPECT_FALSE(*dpkg.copyright_file({"bare", "1", "all", ""}));
}

TEST(Dpkg, TheDistributionIsOsReleasesAndDebiansPointRelease) {
  TempDir dir;
  write_file(dir / "root/usr/lib/os-release",
             "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n"
             "# a comment\nID=debian\n");
  std::filesystem::create_directories(dir / "root/etc");
  std::filesystem::create_symlink("../usr/lib/os-release", dir / "root/etc/os-release");
  write_file(dir / "root/etc/debian_version", "12.11\n");
  auto debian = read_distribution(dir / "root");
  ASSERT_TRUE(debian && *debian);
  EXPECT_EQ((*debian)->id, "debian");
  EXPECT_EQ((*debian)->version_id, "12");
  EXPECT_EQ((*debian)->version, "12.11");
  EXPECT_EQ((*debian)->pretty_name, "Debian GNU/Linux 12 (bookworm)");
  // Elsewhere the release is VERSION_ID, whatever debian_version says (Ubuntu's: "trixie/sid").
  write_file(dir / "ubuntu/etc/os-release", "ID=ubuntu\nVERSION_ID='24.04'\nPRETTY_NAME=\"Ubuntu 24.04.2 LTS\"\n");
  write_file(dir / "ubuntu/etc/debian_version", "trixie/sid\n");
  auto ubuntu = read_distribution(dir / "ubuntu");
  ASSERT_TRUE(ubuntu && *ubuntu);
  EXPECT_EQ((*ubuntu)->id, "ubuntu");
  EXPECT_EQ((*ubuntu)->version, "24.04");
  EXPECT_FALSE(*read_distribution(dir / "nothing"));
}

}  // namespace
}  // namespace arec
