#include "recorder/layering.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

// A target root with one package (libfoo1: two libraries, a plugin loaded by path, a link and its
// documentation), a library no package lists, and a dpkg database saying so.
struct Root {
  TempDir dir;
  std::string root = (dir / "root").string();

  Root() {
    write_file(dir / "root/usr/lib/libfoo.so.1.0", "foo");
    write_file(dir / "root/usr/lib/libfoo-extra.so.1", "extra!");
    write_file(dir / "root/usr/lib/foo/plugins/p.so", "plugin");
    write_file(dir / "root/usr/share/doc/libfoo1/copyright", "text");
    write_file(dir / "root/usr/lib/libloose.so.2", "loose");
    std::filesystem::create_symlink("libfoo.so.1.0", dir / "root/usr/lib/libfoo.so.1");
    // merged /usr: the package lists its link under /lib, which leads to usr/lib
    std::filesystem::create_symlink("usr/lib", dir / "root/lib");
    write_file(dir / "dpkg/info/libfoo1:amd64.list",
               "/.\n" + root + "/lib\n" + root + "/usr/lib/libfoo.so.1.0\n" + root + "/lib/libfoo.so.1\n" + root +
                   "/usr/lib/libfoo-extra.so.1\n" + root + "/usr/lib/foo\n" + root + "/usr/lib/foo/plugins/p.so\n" +
                   root + "/usr/share/doc/libfoo1/copyright\n");
    write_file(dir / "dpkg/status",
               "Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0-1\n\n");
  }

  LayerEntry file(const std::string& image_path, const std::string& host) const {
    return {LayerEntry::Type::file,
            image_path,
            dir / host,
            {},
            0644,
            static_cast<std::int64_t>(std::filesystem::file_size(dir / host)),
            {}};
  }
  DpkgDatabase dpkg() const { return DpkgDatabase(dir / "dpkg"); }
};

// What status.d holds of libfoo1: its stanza as a scanner is given it.
const std::string k_foo_stanza =
    "Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0-1\n";

// The paths a package's metadata adds to its layer: its copyright and its stanza, with their directories.
std::vector<std::string> with_metadata(std::vector<std::string> paths, const std::string& package) {
  for (const std::string& p : std::vector<std::string>{
           "usr/share", "usr/share/doc", "usr/share/doc/" + package, "usr/share/doc/" + package + "/copyright", "var",
           "var/lib", "var/lib/dpkg", "var/lib/dpkg/status.d", "var/lib/dpkg/status.d/" + package}) {
    if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<std::string> paths_of(const LayerGroup& group) {
  std::vector<std::string> out;
  for (const auto& e : group.entries)
    out.push_back(e.path + (e.type == LayerEntry::Type::symlink ? " -> " + e.link_target : ""));
  return out;
}

TEST(Layering, GroupsByOriginInLayerOrder) {
  Root r;
  write_file(r.dir / "build/app", "program");
  write_file(r.dir / "build/libmine.so.1", "mine");
  const std::vector<LayerEntry> recorded{{LayerEntry::Type::directory, "usr", {}, {}, 0755, 0, {}},
                                         {LayerEntry::Type::directory, "usr/local", {}, {}, 0755, 0, {}},
                                         {LayerEntry::Type::directory, "usr/local/bin", {}, {}, 0755, 0, {}},
                                         r.file("usr/local/bin/app", "build/app")};
  RuntimeClosure closure;
  closure.root = r.root;
  closure.entries = {{LayerEntry::Type::symlink, "lib", {}, "usr/lib", 0777, 0, {}},
                     {LayerEntry::Type::symlink, "usr/lib/libfoo.so.1", {}, "libfoo.so.1.0", 0777, 0, {}},
                     r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0"),
                     r.file("usr/lib/libloose.so.2", "root/usr/lib/libloose.so.2"),
                     r.file("usr/local/lib/libmine.so.1", "build/libmine.so.1")};
  auto groups = group_entries(recorded, closure, r.dpkg(), {});
  ASSERT_TRUE(groups) << groups.error().message;
  ASSERT_EQ(groups->size(), 4U);
  EXPECT_EQ((*groups)[0].origin, "deb:libfoo1=1.0-1:amd64");
  EXPECT_EQ((*groups)[0].kind, LayerOrigin::package);
  // All of the package's files under the library directories, with the link leading there; not its docs
  // but its copyright, and its stanza where scanners read it.
  EXPECT_EQ(paths_of((*groups)[0]),
            with_metadata(
                {"lib -> usr/lib", "usr", "usr/lib", "usr/lib/foo", "usr/lib/foo/plugins", "usr/lib/foo/plugins/p.so",
                 "usr/lib/libfoo-extra.so.1", "usr/lib/libfoo.so.1 -> libfoo.so.1.0", "usr/lib/libfoo.so.1.0"},
                "libfoo1"));
  EXPECT_EQ((*groups)[0].size, static_cast<std::int64_t>(3 + 6 + 6 + 4 + k_foo_stanza.size()));
  for (const auto& e : (*groups)[0].entries) {
    if (e.path == "var/lib/dpkg/status.d/libfoo1") {
      EXPECT_EQ(e.content, k_foo_stanza);
    }
  }
  EXPECT_EQ((*groups)[1].origin, "no-package");
  EXPECT_EQ(paths_of((*groups)[1]), (std::vector<std::string>{"usr", "usr/lib", "usr/lib/libloose.so.2"}));
  EXPECT_EQ((*groups)[2].origin, "own-libraries");
  EXPECT_EQ(paths_of((*groups)[2]),
            (std::vector<std::string>{"usr", "usr/local", "usr/local/lib", "usr/local/lib/libmine.so.1"}));
  EXPECT_EQ((*groups)[3].origin, "files");
  EXPECT_EQ(paths_of((*groups)[3]),
            (std::vector<std::string>{"usr", "usr/local", "usr/local/bin", "usr/local/bin/app"}));
}

TEST(Layering, APackageIsTheSameLayerWhicheverOfItsLibrariesIsNeeded) {
  Root r;
  write_file(r.dir / "build/app", "program");
  const std::vector<LayerEntry> recorded{r.file("app", "build/app")};
  RuntimeClosure one{{{LayerEntry::Type::symlink, "lib", {}, "usr/lib", 0777, 0, {}},
                      {LayerEntry::Type::symlink, "usr/lib/libfoo.so.1", {}, "libfoo.so.1.0", 0777, 0, {}},
                      r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0")},
                     r.root,
                     {}};
  RuntimeClosure other{{r.file("usr/lib/libfoo-extra.so.1", "root/usr/lib/libfoo-extra.so.1")}, r.root, {}};
  auto a = group_entries(recorded, one, r.dpkg(), {});
  auto b = group_entries(recorded, other, r.dpkg(), {});
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->size(), 2U);
  ASSERT_EQ(b->size(), 2U);
  EXPECT_EQ(paths_of(a->front()), paths_of(b->front()));
  // What the base holds stays the base's.
  auto on_base = group_entries(recorded, other, r.dpkg(),
                               [](const std::string& path) { return path == "usr/lib/foo/plugins/p.so"; });
  ASSERT_TRUE(on_base);
  EXPECT_EQ(on_base->front().size, static_cast<std::int64_t>(3 + 6 + 4 + k_foo_stanza.size()));
}

TEST(Layering, AnAddedPackageIsALayerOfItsOwnAndTheClosuresFilesOfItJoinIt) {
  Root r;
  write_file(r.dir / "build/app", "program");
  write_file(r.dir / "root/usr/share/zoneinfo/UTC", "TZif");
  const std::vector<LayerEntry> recorded{r.file("usr/local/bin/app", "build/app"),
                                         generated_file("etc/passwd", "root:x:0:0::/:/x\n")};
  const DebianPackage tz{"tzdata", "2025b-0", "all", ""};
  const DebianPackage foo{"libfoo1", "1.0-1", "amd64", ""};
  // libfoo1 asked for by name (its file the recorded inputs also name stays theirs), and tzdata.
  const std::vector<PackageFiles> added{{tz, {r.file("usr/share/zoneinfo/UTC", "root/usr/share/zoneinfo/UTC")}, {}},
                                        {foo,
                                         {r.file("usr/lib/libfoo-extra.so.1", "root/usr/lib/libfoo-extra.so.1"),
                                          r.file("usr/local/bin/app", "build/app")},
                                         {}}};
  RuntimeClosure closure{{r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0")}, r.root, {}};
  auto groups = group_entries(recorded, closure, r.dpkg(), {}, {}, added);
  ASSERT_TRUE(groups) << groups.error().message;
  ASSERT_EQ(groups->size(), 3U);
  EXPECT_EQ((*groups)[0].origin, "deb:libfoo1=1.0-1:amd64");
  // What was taken of the package, and the closure's file of it; its list is not read again.
  EXPECT_EQ(paths_of((*groups)[0]),
            with_metadata({"usr", "usr/lib", "usr/lib/libfoo-extra.so.1", "usr/lib/libfoo.so.1.0"}, "libfoo1"));
  EXPECT_EQ((*groups)[1].origin, "deb:tzdata=2025b-0:all");
  EXPECT_EQ((*groups)[1].kind, LayerOrigin::package);
  EXPECT_EQ(paths_of((*groups)[1]),
            (std::vector<std::string>{"usr", "usr/share", "usr/share/zoneinfo", "usr/share/zoneinfo/UTC"}));
  EXPECT_EQ((*groups)[2].origin, "files");
  EXPECT_EQ(paths_of((*groups)[2]),
            (std::vector<std::string>{"etc", "etc/passwd", "usr", "usr/local", "usr/local/bin", "usr/local/bin/app"}));
}

TEST(Layering, Md5sumsNameTheFilesTheLayerHoldsAsTheImageHoldsThem) {
  Root r;
  const std::string rel = r.root.substr(1);  // md5sums name paths from the root, without the slash
  write_file(r.dir / "dpkg/info/libfoo1:amd64.md5sums",
             "11111111111111111111111111111111  " + rel +
                 "/usr/lib/libfoo.so.1.0\n"
                 "22222222222222222222222222222222  " +
                 rel +
                 "/lib/libfoo.so.1\n"  // a link: dpkg sums none, but
                 "33333333333333333333333333333333  " +
                 rel +
                 "/usr/share/doc/libfoo1/copyright\n"
                 "44444444444444444444444444444444  " +
                 rel + "/usr/lib/libfoo-extra.so.1\n");
  const std::vector<LayerEntry> held{r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0"),
                                     r.file("usr/lib/libfoo-extra.so.1", "root/usr/lib/libfoo-extra.so.1")};
  auto metadata = package_metadata(r.dpkg(), {"libfoo1", "1.0-1", "amd64", ""}, "STANZA\n", held, r.root);
  ASSERT_TRUE(metadata) << metadata.error().message;
  ASSERT_EQ(metadata->size(), 3U);
  EXPECT_EQ((*metadata)[0].path, "var/lib/dpkg/status.d/libfoo1");
  EXPECT_EQ((*metadata)[0].content, "STANZA\n");
  EXPECT_EQ((*metadata)[1].path, "var/lib/dpkg/status.d/libfoo1.md5sums");
  // The files held, under the root named as the image names them; the docs the layer leaves out are not.
  EXPECT_EQ((*metadata)[1].content,
            "11111111111111111111111111111111  usr/lib/libfoo.so.1.0\n"
            "22222222222222222222222222222222  lib/libfoo.so.1\n"
            "44444444444444444444444444444444  usr/lib/libfoo-extra.so.1\n");
  EXPECT_EQ((*metadata)[2].path, "usr/share/doc/libfoo1/copyright");
  EXPECT_EQ((*metadata)[2].source, std::filesystem::canonical(r.dir / "root/usr/share/doc/libfoo1/copyright"));
}

TEST(Layering, TheCommonLicencesACopyrightFileNames) {
  EXPECT_EQ(common_licences_named(
                "On Debian systems, see /usr/share/common-licenses/GPL-2.\n"
                "The LGPL is in `/usr/share/common-licenses/LGPL-2.1'; also /usr/share/common-licenses/GPL\n"
                "and /usr/share/common-licenses/GPL-2 again, /usr/share/common-licenses/ and "
                "/usr/share/common-licenses/GFDL-1.2+."),
            (std::vector<std::string>{"GFDL-1.2+", "GPL", "GPL-2", "LGPL-2.1"}));
  EXPECT_TRUE(common_licences_named("License: Zlib\n").empty());
}

OsIdentity debian_identity() {
  return {{"debian", "12", "12.11", "Debian GNU/Linux 12 (bookworm)"},
          {generated_file("etc/debian_version", "12.11\n"),
           generated_file("usr/lib/os-release", "ID=debian\n"),
           {LayerEntry::Type::symlink, "etc/os-release", {}, "../usr/lib/os-release", 0777, 0, {}}},
          {}};
}

TEST(Layering, TheOsIdentityComesFirstWithAPackageUnlessTheBaseHasOne) {
  Root r;
  write_file(r.dir / "build/app", "program");
  const std::vector<LayerEntry> recorded{r.file("usr/local/bin/app", "build/app")};
  const RuntimeClosure closure{{r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0")}, r.root, {}};
  const auto identity = debian_identity();
  auto groups = group_entries(recorded, closure, r.dpkg(), {}, {}, {}, &identity);
  ASSERT_TRUE(groups) << groups.error().message;
  ASSERT_EQ(groups->size(), 3U);
  EXPECT_EQ((*groups)[0].origin, "os:debian=12.11");
  EXPECT_EQ((*groups)[0].kind, LayerOrigin::os);
  EXPECT_EQ(paths_of((*groups)[0]),
            (std::vector<std::string>{"etc", "etc/debian_version", "etc/os-release -> ../usr/lib/os-release", "usr",
                                      "usr/lib", "usr/lib/os-release"}));
  EXPECT_EQ((*groups)[1].origin, "deb:libfoo1=1.0-1:amd64");
  // A base that says what it is keeps saying it; an image of no package has no OS to name.
  auto on_base = group_entries(
      recorded, closure, r.dpkg(), [](const std::string& p) { return p == "etc/os-release"; }, {}, {}, &identity);
  ASSERT_TRUE(on_base);
  EXPECT_EQ(on_base->front().origin, "deb:libfoo1=1.0-1:amd64");
  auto alone = group_entries(recorded, {{}, {}, {}}, r.dpkg(), {}, {}, {}, &identity);
  ASSERT_TRUE(alone);
  ASSERT_EQ(alone->size(), 1U);
  EXPECT_EQ(alone->front().origin, "files");
}

TEST(Layering, NeededTakesOnlyTheClosuresFilesOfAPackageAndItsMetadata) {
  Root r;
  write_file(r.dir / "build/app", "program");
  const std::vector<LayerEntry> recorded{r.file("usr/local/bin/app", "build/app")};
  const RuntimeClosure closure{{r.file("usr/lib/libfoo.so.1.0", "root/usr/lib/libfoo.so.1.0")}, r.root, {}};
  auto groups = group_entries(recorded, closure, r.dpkg(), {}, {}, {}, nullptr, PackageFilesTaken::needed);
  ASSERT_TRUE(groups) << groups.error().message;
  EXPECT_EQ(paths_of((*groups)[0]), with_metadata({"usr", "usr/lib", "usr/lib/libfoo.so.1.0"}, "libfoo1"));
}

TEST(Layering, LibraryDirectories) {
  EXPECT_TRUE(in_library_directory("lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(in_library_directory("usr/lib64/ld-linux-x86-64.so.2"));
  EXPECT_TRUE(in_library_directory("usr/lib/x86_64-linux-gnu/ossl-modules/legacy.so"));
  EXPECT_FALSE(in_library_directory("usr/libexec/tool"));
  EXPECT_FALSE(in_library_directory("usr/share/doc/libc6/copyright"));
  EXPECT_FALSE(in_library_directory("etc/ld.so.conf"));
}

LayerGroup group(LayerOrigin kind, std::string key, std::int64_t size) {
  LayerGroup g;
  g.kind = kind;
  g.key = key;
  g.origin = kind == LayerOrigin::package ? "deb:" + key : key;
  g.size = size;
  g.entries = {{LayerEntry::Type::file, key, "/dev/null", {}, 0644, size, {}}};
  return g;
}

std::vector<std::string> origins(const std::vector<LayerGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.origin);
  return out;
}

std::vector<LayerGroup> sample() {
  return {group(LayerOrigin::package, "libc6", 12),  group(LayerOrigin::package, "libgcc-s1", 1),
          group(LayerOrigin::package, "libssl3", 7), group(LayerOrigin::package, "libstdc++6", 2),
          group(LayerOrigin::package, "zlib1g", 1),  group(LayerOrigin::own_libraries, "own-libraries", 3),
          group(LayerOrigin::files, "files", 1)};
}

TEST(Layering, WithinTheBudgetNothingIsMerged) {
  EXPECT_EQ(origins(fit_budget(sample(), 16)), origins(sample()));
  EXPECT_EQ(origins(fit_budget(sample(), 7)), origins(sample()));
}

TEST(Layering, TheSmallestPackagesAreMergedByASizeThenNameRule) {
  auto fitted = fit_budget(sample(), 5);
  // 5 = 2 packages kept (the largest), the merged one, own-libraries, files.
  EXPECT_EQ(origins(fitted),
            (std::vector<std::string>{"deb:libc6", "deb:libssl3", "deb:merged", "own-libraries", "files"}));
  EXPECT_EQ(fitted[2].kind, LayerOrigin::merged_packages);
  EXPECT_EQ(fitted[2].size, 1 + 2 + 1);
  EXPECT_EQ(paths_of(fitted[2]), (std::vector<std::string>{"libgcc-s1", "libstdc++6", "zlib1g"}));
  // Equal sizes: the name decides (libgcc-s1 before zlib1g), whatever order the groups came in.
  auto shuffled = sample();
  std::reverse(shuffled.begin(), shuffled.begin() + 5);
  std::sort(shuffled.begin(), shuffled.begin() + 5,
            [](const LayerGroup& a, const LayerGroup& b) { return a.key < b.key; });
  EXPECT_EQ(origins(fit_budget(shuffled, 6)), (std::vector<std::string>{"deb:libc6", "deb:libssl3", "deb:libstdc++6",
                                                                        "deb:merged", "own-libraries", "files"}));
  EXPECT_EQ(paths_of(fit_budget(shuffled, 6)[3]), (std::vector<std::string>{"libgcc-s1", "zlib1g"}));
}

TEST(Layering, TheOsIdentityIsMergedLikeASmallPackage) {
  auto groups = sample();
  LayerGroup os = group(LayerOrigin::os, "os", 1);
  os.origin = "os:debian=12.11";
  groups.insert(groups.begin(), os);
  EXPECT_EQ(origins(fit_budget(groups, 8)).front(), "os:debian=12.11");
  auto fitted = fit_budget(groups, 5);
  EXPECT_EQ(origins(fitted),
            (std::vector<std::string>{"deb:libc6", "deb:libssl3", "deb:merged", "own-libraries", "files"}));
  EXPECT_EQ(paths_of(fitted[2]), (std::vector<std::string>{"libgcc-s1", "libstdc++6", "os", "zlib1g"}));
}

TEST(Layering, ABudgetBelowTheKindsMergesTheFirstLayers) {
  auto three = fit_budget(sample(), 3);
  EXPECT_EQ(origins(three), (std::vector<std::string>{"deb:merged", "own-libraries", "files"}));
  auto two = fit_budget(sample(), 2);
  EXPECT_EQ(origins(two), (std::vector<std::string>{"deb:merged,own-libraries", "files"}));
  EXPECT_EQ(two[0].kind, LayerOrigin::mixed);
  EXPECT_EQ(two[0].size, 23 + 3);
  auto one = fit_budget(sample(), 1);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(one[0].entries.size(), 7U);
}

TEST(Layering, AnImageOfMoreThan127LayersWithItsBasesIsRefused) {
  // The budget fits the record's layers; with a base of 120 layers, 7 more are the most an image takes.
  const auto fitted = fit_budget(sample(), 16);
  ASSERT_EQ(fitted.size(), 7U);
  EXPECT_TRUE(check_layer_count(120, fitted.size()));
  auto refused = check_layer_count(121, fitted.size());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::input);
  EXPECT_EQ(refused.error().message,
            "the image would have 128 layers (121 of the base, 7 of this record), more than the 127 container runtimes "
            "accept; "
            "give a smaller --layers");
  // A smaller --layers is what the message asks for, and it fits.
  EXPECT_TRUE(check_layer_count(121, fit_budget(sample(), 6).size()));
}

}  // namespace
}  // namespace arec

namespace arec {
namespace {

TEST(Layering, APackageOriginReadsBackWithAnEpochInItsVersion) {
  const DebianPackage p{"libfoo1", "1:2.3-4", "amd64", {}};
  const auto back = package_of_origin(package_origin(p));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ("libfoo1", back->name);
  EXPECT_EQ("1:2.3-4", back->version);
  EXPECT_EQ("amd64", back->architecture);
  EXPECT_FALSE(package_of_origin("files").has_value());
  EXPECT_FALSE(package_of_origin("deb:merged").has_value());
}

}  // namespace
}  // namespace arec
