#include "recorder/service_files.hpp"

#include <gtest/gtest.h>

#include "support/memory_sink.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

TEST(ServiceFiles, WithoutABaseRootAndNonrootAsDistrolessHasThem) {
  EXPECT_EQ(default_passwd(),
            "root:x:0:0:root:/root:/sbin/nologin\n"
            "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n");
  EXPECT_EQ(default_group(), "root:x:0:\nnonroot:x:65532:\n");
  const auto user = [](std::string_view text) {
    auto spec = parse_user(text);
    EXPECT_TRUE(spec) << text;
    auto resolved = resolve_user(*spec, default_passwd(), default_group(), "the image");
    return resolved ? *resolved : "error: " + resolved.error().message;
  };
  EXPECT_EQ(user("nonroot"), "65532:65532");
  EXPECT_EQ(user("root"), "0:0");
  EXPECT_EQ(user("nonroot:root"), "65532:0");
  EXPECT_EQ(user("root:5"), "0:5");
  // A number is taken as it is, whether the image names it or not.
  EXPECT_EQ(user("1234"), "1234");
  EXPECT_EQ(user("1234:nonroot"), "1234:65532");
  EXPECT_EQ(user("4294967294"), "4294967294");
}

TEST(ServiceFiles, ANameTheImageDoesNotHaveIsRefusedNamingIt) {
  const std::string passwd = "root:x:0:0::/:/bin/sh\napp:x:1000:1001::/srv:/bin/false\n";
  const std::string group = "root:x:0:\napp:x:1001:\n";
  EXPECT_EQ(*resolve_user(*parse_user("app"), passwd, group, "the base image sha256:ab"), "1000:1001");
  auto missing = resolve_user(*parse_user("nonroot"), passwd, group, "the base image sha256:ab");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::input);
  EXPECT_EQ(missing.error().message,
            "--user nonroot: the base image sha256:ab names no such user; give a user it names, or a number");
  auto no_group = resolve_user(*parse_user("app:staff"), passwd, group, "the base image sha256:ab");
  ASSERT_FALSE(no_group);
  EXPECT_NE(no_group.error().message.find("--user app:staff: the base image sha256:ab names no such group"),
            std::string::npos);
  auto no_passwd = resolve_user(*parse_user("app"), std::nullopt, std::nullopt, "the image");
  ASSERT_FALSE(no_passwd);
  EXPECT_NE(no_passwd.error().message.find("the image has no /etc/passwd"), std::string::npos);
  EXPECT_EQ(*resolve_user(*parse_user("7:8"), std::nullopt, std::nullopt, "the image"), "7:8");
}

TEST(ServiceFiles, UserSpellingsOutsideNamesAndNumbersAreRefused) {
  for (std::string_view bad :
       {"", "Root", "a:b:c", "4294967295", "99999999999", "-x", "app:", ":5", "a b", "x\x1b[2J"}) {
    auto spec = parse_user(bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_EQ(spec.error().kind, ErrorKind::input);
    EXPECT_TRUE(spec.error().message.starts_with("--user \"")) << spec.error().message;
    EXPECT_FALSE(has_control_characters(spec.error().message)) << spec.error().message;
  }
}

TEST(ServiceFiles, TmpIsWritableByEveryoneAndStickyInTheTar) {
  const LayerEntry tmp = tmp_directory();
  EXPECT_EQ(tmp.path, "tmp");
  EXPECT_EQ(tmp.type, LayerEntry::Type::directory);
  EXPECT_EQ(tmp.mode, 01777U);
  test::MemorySink sink;
  ASSERT_TRUE(write_tar({tmp, generated_file("etc/passwd", default_passwd())}, TarOptions{}, sink));
  // ustar's mode field: 8 bytes of octal at offset 100 of each header.
  EXPECT_EQ(sink.bytes.substr(0, 4), "tmp/");
  EXPECT_EQ(sink.bytes.substr(100, 6), "001777");
  EXPECT_NE(sink.bytes.find("nonroot:x:65532:65532"), std::string::npos);
}

// A root with merged /usr (bin -> usr/bin, lib -> usr/lib), one package of a program, data, and its
// documentation, man page and locale, and a dpkg database listing it as dpkg does (under /bin).
struct PackageRoot {
  TempDir dir;
  std::string root = (dir / "root").string();

  PackageRoot() {
    write_file(dir / "root/usr/bin/tool", "#!/bin/sh\n");
    std::filesystem::permissions(dir / "root/usr/bin/tool", std::filesystem::perms::owner_all);
    write_file(dir / "root/usr/share/tool/data", "data");
    write_file(dir / "root/usr/share/doc/tool/copyright", "text");
    write_file(dir / "root/usr/share/man/man1/tool.1.gz", "man");
    write_file(dir / "root/usr/share/locale/de/LC_MESSAGES/tool.mo", "mo");
    std::filesystem::create_symlink("usr/bin", dir / "root/bin");
    std::filesystem::create_symlink("data", dir / "root/usr/share/tool/current");
    write_file(dir / "dpkg/info/tool.list",
               "/.\n" + root + "/bin\n" + root + "/bin/tool\n" + root + "/usr/share/tool\n" + root +
                   "/usr/share/tool/data\n" + root + "/usr/share/tool/current\n" + root + "/usr/share/tool/gone\n" +
                   root + "/usr/share/doc/tool/copyright\n" + root + "/usr/share/man/man1/tool.1.gz\n" + root +
                   "/usr/share/locale/de/LC_MESSAGES/tool.mo\n");
    write_file(dir / "dpkg/info/libarm:arm64.list", "/.\n");
    write_file(dir / "dpkg/status",
               "Package: tool\nStatus: install ok installed\nArchitecture: all\nVersion: 2.0-1\n\n"
               "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1\n\n"
               "Package: libarm\nStatus: install ok installed\nArchitecture: arm64\nVersion: 1\n\n");
  }
  DpkgDatabase dpkg() const { return DpkgDatabase(dir / "dpkg"); }
};

std::vector<std::string> described(const std::vector<LayerEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    out.push_back(e.path + (e.type == LayerEntry::Type::symlink ? " -> " + e.link_target
                            : e.type == LayerEntry::Type::file  ? " " + std::to_string(e.mode)
                                                                : "/"));
  }
  return out;
}

TEST(ServiceFiles, APackagesFilesFollowMergedUsrAndLeaveOutDocumentation) {
  PackageRoot r;
  auto files = package_files(r.dpkg(), *parse_package("tool"), "amd64", r.root);
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->package.name, "tool");
  EXPECT_EQ(files->package.version, "2.0-1");
  EXPECT_EQ(files->package.architecture, "all");
  // /bin/tool is at usr/bin/tool, reached through the link bin -> usr/bin, which comes too; the path that
  // is gone is left out, and so are directories (their files bring them).
  EXPECT_EQ(
      described(files->entries),
      (std::vector<std::string>{"bin -> usr/bin", "usr/bin/tool " + std::to_string(0755),
                                "usr/share/tool/current -> data", "usr/share/tool/data " + std::to_string(0644)}));
  EXPECT_EQ(files->entries[1].source, r.dir / "root/usr/bin/tool");
}

TEST(ServiceFiles, APackageNotInstalledOrOfAnotherArchitectureIsRefused) {
  PackageRoot r;
  auto missing = package_files(r.dpkg(), *parse_package("tzdata"), "amd64", r.root);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::input);
  EXPECT_EQ(missing.error().message,
            "--package tzdata: not installed for amd64 on this machine; install it with apt-get install tzdata:amd64");
  // Only config files left: not installed.
  EXPECT_FALSE(package_files(r.dpkg(), *parse_package("gone"), "amd64", r.root));
  auto host = package_files(r.dpkg(), *parse_package("libarm"), "amd64", r.root);
  ASSERT_FALSE(host);
  EXPECT_NE(host.error().message.find("(only for arm64)"), std::string::npos) << host.error().message;
  // A cross build takes the target's packages and refuses the host's.
  EXPECT_TRUE(package_files(r.dpkg(), *parse_package("libarm:arm64"), "arm64", r.root));
  EXPECT_TRUE(package_files(r.dpkg(), *parse_package("libarm"), "arm64", r.root));
  auto other = package_files(r.dpkg(), *parse_package("tool:amd64"), "arm64", r.root);
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message,
            "--package tool:amd64: the image is for arm64; give tool:arm64, the package of its architecture");
  for (std::string_view bad : {"", "T", "a", "tool:", "to ol", "tool:AMD64", "x\x1b[0m"}) {
    auto spec = parse_package(bad);
    ASSERT_FALSE(spec) << bad;
    EXPECT_FALSE(has_control_characters(spec.error().message));
  }
}

TEST(ServiceFiles, TheCaBundleIsThePackagesCertificatesThenTheImagesOwn) {
  PackageRoot r;
  write_file(r.dir / "root/usr/share/ca-certificates/mozilla/B.crt", "B\n");
  write_file(r.dir / "root/usr/share/ca-certificates/mozilla/A.crt", "A");  // no newline: one is added
  write_file(r.dir / "own.crt", "OWN\n");
  write_file(r.dir / "dpkg/info/ca-certificates.list", r.root + "/usr/share/ca-certificates/mozilla/B.crt\n" + r.root +
                                                           "/usr/share/ca-certificates/mozilla/A.crt\n" + r.root +
                                                           "/usr/sbin/update-ca-certificates\n");
  write_file(r.dir / "dpkg/status",
             "Package: ca-certificates\nStatus: install ok installed\nArchitecture: all\nVersion: 20230311\n\n");
  const std::vector<LayerEntry> recorded{
      {LayerEntry::Type::file, "usr/local/share/ca-certificates/own.crt", r.dir / "own.crt", {}, 0644, 4, {}},
      {LayerEntry::Type::file, "usr/local/share/ca-certificates/notes.txt", r.dir / "own.crt", {}, 0644, 4, {}}};
  auto ca = ca_certificate_files(r.dpkg(), recorded, "/usr/lib/libssl.so.3", r.root);
  ASSERT_TRUE(ca) << ca.error().message;
  EXPECT_EQ(ca->package.name, "ca-certificates");
  EXPECT_EQ(described(ca->entries),
            (std::vector<std::string>{"etc/ssl/certs/ca-certificates.crt " + std::to_string(0644),
                                      "usr/lib/ssl/cert.pem -> /etc/ssl/certs/ca-certificates.crt",
                                      "usr/lib/ssl/certs -> /etc/ssl/certs"}));
  EXPECT_EQ(ca->entries[0].content, "A\nB\nOWN\n");
  EXPECT_EQ(ca->entries[0].size, 8);
  // What the bundle was made of, for a build's depfile: the package's certificates.
  EXPECT_EQ(ca->made_from, (std::vector<fs::Path>{r.root + "/usr/share/ca-certificates/mozilla/A.crt",
                                                  r.root + "/usr/share/ca-certificates/mozilla/B.crt"}));
  write_file(r.dir / "dpkg/status", "");
  auto none = ca_certificate_files(r.dpkg(), recorded, "/usr/lib/libssl.so.3", r.root);
  ASSERT_FALSE(none);
  EXPECT_EQ(
      none.error().message,
      "the image holds /usr/lib/libssl.so.3, which needs CA certificates, and ca-certificates is not installed on this "
      "machine; install it with apt-get install ca-certificates, or record with --no-ca-certificates");
}

TEST(ServiceFiles, TlsLibrariesAreKnownByName) {
  for (std::string_view yes : {"usr/lib/x86_64-linux-gnu/libssl.so.3", "lib/libcrypto.so.3", "usr/lib/libgnutls.so.30",
                               "usr/lib/x86_64-linux-gnu/libcurl.so.4", "usr/lib/libcurl-gnutls.so.4"}) {
    EXPECT_TRUE(is_tls_library(yes)) << yes;
  }
  for (std::string_view no : {"usr/lib/libc.so.6", "usr/lib/libsslx.so", "usr/share/doc/libssl3/copyright"}) {
    EXPECT_FALSE(is_tls_library(no)) << no;
  }
  EXPECT_EQ(debian_architecture({"amd64", "linux", ""}), "amd64");
  EXPECT_EQ(debian_architecture({"arm", "linux", "v7"}), "armhf");
  EXPECT_EQ(debian_architecture({"ppc64le", "linux", ""}), "ppc64el");
}

}  // namespace
}  // namespace arec
