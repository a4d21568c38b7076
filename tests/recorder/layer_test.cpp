#include "recorder/layer.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/memory_sink.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::MemorySink;
using test::TempDir;
using test::write_file;

struct TarEntry {
  std::string path;
  unsigned type;
  unsigned mode;
  std::int64_t uid, gid, mtime, size;
  std::string uname, link, content;
  bool has_atime, has_ctime;
};

// Reads a (possibly compressed) tar back with libarchive, as a consumer would.
std::vector<TarEntry> read_tar(const std::string& bytes) {
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  EXPECT_EQ(archive_read_open_memory(a, bytes.data(), bytes.size()), ARCHIVE_OK);
  std::vector<TarEntry> out;
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    TarEntry t{archive_entry_pathname(e),
               archive_entry_filetype(e),
               archive_entry_perm(e),
               archive_entry_uid(e),
               archive_entry_gid(e),
               archive_entry_mtime(e),
               archive_entry_size(e),
               archive_entry_uname(e) ? archive_entry_uname(e) : "",
               archive_entry_symlink(e) ? archive_entry_symlink(e) : "",
               "",
               archive_entry_atime_is_set(e) != 0,
               archive_entry_ctime_is_set(e) != 0};
    std::string content(static_cast<std::size_t>(t.size), '\0');
    if (t.size > 0) archive_read_data(a, content.data(), content.size());
    t.content = content;
    out.push_back(t);
  }
  archive_read_free(a);
  return out;
}

std::vector<LayerInput> inputs(std::initializer_list<std::pair<LayerInput::Kind, std::string>> specs) {
  std::vector<LayerInput> out;
  for (const auto& [kind, spec] : specs) out.push_back(*parse_layer_input(kind, spec));
  return out;
}

Result<std::string> tar_of(const std::vector<LayerInput>& in, std::int64_t mtime = 0) {
  auto entries = collect_entries(in);
  if (!entries) return fail(entries.error());
  MemorySink sink;
  HashingSink hashing(sink);
  TarOptions options;
  options.mtime = mtime;
  if (auto s = write_tar(*entries, options, hashing); !s) return fail(s.error());
  EXPECT_TRUE(sink.finished);
  EXPECT_EQ(hashing.digest(), digest_of(sink.bytes));
  return sink.bytes;
}

TEST(LayerInput, Defaults) {
  auto file = parse_layer_input(LayerInput::Kind::file, "out/bin/app");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->destination, "/usr/local/bin/app");
  auto dir = parse_layer_input(LayerInput::Kind::directory, "share");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->destination, "/");
  // The first '=' splits: a destination may hold '=', a source may not.
  auto explicit_dest = parse_layer_input(LayerInput::Kind::file, "a=/opt/b=c");
  ASSERT_TRUE(explicit_dest);
  EXPECT_EQ(explicit_dest->source, "a");
  EXPECT_EQ(explicit_dest->destination, "/opt/b=c");
}

TEST(LayerInput, DestinationMustBeAbsoluteWithoutDotDot) {
  auto relative = parse_layer_input(LayerInput::Kind::file, "app=usr/bin/app");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().message, "--file app=usr/bin/app: destination \"usr/bin/app\" must be an absolute path");
  auto dotdot = parse_layer_input(LayerInput::Kind::directory, "d=/opt/../etc");
  ASSERT_FALSE(dotdot);
  EXPECT_NE(dotdot.error().message.find("must not contain \"..\""), std::string::npos);
  EXPECT_EQ(*normalise_image_path("/usr//local/./bin/", "x"), "usr/local/bin");
  EXPECT_EQ(*normalise_image_path("/", "x"), "");
}

TEST(Layer, TarIsNormalised) {
  TempDir tmp;
  write_file(tmp / "app", "binary");
  ::chmod((tmp / "app").c_str(), 0700);
  write_file(tmp / "tree/etc/conf", "conf");
  ::chmod((tmp / "tree/etc/conf").c_str(), 0600);
  ::symlink("etc/conf", (tmp / "tree/link").c_str());
  auto tar = tar_of(inputs({{LayerInput::Kind::file, (tmp / "app").string()},
                            {LayerInput::Kind::directory, (tmp / "tree").string() + "=/opt/tree"}}),
                    1700000000);
  ASSERT_TRUE(tar) << tar.error().message;
  const auto entries = read_tar(*tar);
  std::vector<std::string> paths;
  for (const auto& e : entries) {
    paths.push_back(e.path);
    EXPECT_EQ(e.uid, 0);
    EXPECT_EQ(e.gid, 0);
    EXPECT_EQ(e.uname, "");
    EXPECT_EQ(e.mtime, 1700000000);
    EXPECT_FALSE(e.has_atime) << e.path;
    EXPECT_FALSE(e.has_ctime) << e.path;
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"opt/", "opt/tree/", "opt/tree/etc/", "opt/tree/etc/conf", "opt/tree/link",
                                             "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/app"}));
  EXPECT_EQ(entries[3].mode, 0644u);  // 0600 normalised
  EXPECT_EQ(entries[3].content, "conf");
  EXPECT_EQ(entries[4].type, static_cast<unsigned>(AE_IFLNK));
  EXPECT_EQ(entries[4].link, "etc/conf");
  EXPECT_EQ(entries[8].mode, 0755u);  // 0700 normalised: executable
  EXPECT_EQ(entries[0].mode, 0755u);
  // The stream ends right after the two zero blocks of the end-of-archive marker: no padding.
  EXPECT_EQ(tar->size() % 512, 0u);
  EXPECT_EQ(tar->substr(tar->size() - 1024), std::string(1024, '\0'));
  EXPECT_NE(tar->substr(tar->size() - 1536, 512), std::string(512, '\0'));
}

TEST(Layer, SameContentSameBytesWhateverTimesModesAndOrder) {
  TempDir tmp;
  // Two copies made in different orders, with different mtimes and group/other bits.
  for (const std::string copy : {"a", "b"}) {
    const std::vector<std::string> names =
        copy == "a" ? std::vector<std::string>{"x/1", "y/2", "z"} : std::vector<std::string>{"z", "y/2", "x/1"};
    for (const auto& n : names) write_file(tmp / copy / n, "content of " + n);
    if (copy == "b") {
      ::chmod((tmp / copy / "z").c_str(), 0640);
      timespec times[2] = {{12345, 0}, {12345, 0}};
      ::utimensat(AT_FDCWD, (tmp / copy / "x/1").c_str(), times, 0);
    }
  }
  auto a = tar_of(inputs({{LayerInput::Kind::directory, (tmp / "a").string() + "=/srv"}}));
  auto b = tar_of(inputs({{LayerInput::Kind::directory, (tmp / "b").string() + "=/srv"}}));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(digest_of(*a), digest_of(*b));
}

TEST(Layer, NonAsciiNamesAreUtf8PaxRecordsWhateverTheLocale) {
  TempDir tmp;
  write_file(tmp / "d/grüße.txt", "hi");
  auto tar = tar_of(inputs({{LayerInput::Kind::directory, (tmp / "d").string() + "=/x"}}));
  ASSERT_TRUE(tar);
  EXPECT_EQ(tar->find("hdrcharset"), std::string::npos);
  EXPECT_NE(tar->find("path=x/grüße.txt"), std::string::npos);
}

TEST(Layer, SymlinkInsideTreeIsStoredNotFollowed) {
  TempDir tmp;
  write_file(tmp / "outside", "secret");
  write_file(tmp / "tree/lib/libx.so.1", "lib");
  ::symlink("libx.so.1", (tmp / "tree/lib/libx.so").c_str());
  ::symlink("/etc/alternatives/awk", (tmp / "tree/awk").c_str());  // names a path in the image
  auto tar = tar_of(inputs({{LayerInput::Kind::directory, (tmp / "tree").string() + "=/usr"}}));
  ASSERT_TRUE(tar) << tar.error().message;
  EXPECT_EQ(tar->find("secret"), std::string::npos);
  bool found = false;
  for (const auto& e : read_tar(*tar)) {
    if (e.path == "usr/lib/libx.so") {
      found = true;
      EXPECT_EQ(e.link, "libx.so.1");
      EXPECT_EQ(e.size, 0);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Layer, SymlinkOutOfTreeIsStoredNotFollowed) {
  TempDir tmp;
  write_file(tmp / "secret", "secret");
  write_file(tmp / "tree/sub/f", "f");
  ::symlink("../../secret", (tmp / "tree/sub/escape").c_str());
  auto tar = tar_of(inputs({{LayerInput::Kind::directory, (tmp / "tree").string() + "=/usr/bin"}}));
  ASSERT_TRUE(tar) << tar.error().message;
  bool found = false;
  for (const auto& e : read_tar(*tar)) {
    if (e.path == "usr/bin/sub/escape") {
      found = true;
      EXPECT_EQ(e.link, "../../secret");
      EXPECT_EQ(e.size, 0);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Layer, EntryThroughARecordedSymlinkIsRefused) {
  TempDir tmp;
  write_file(tmp / "a/f", "f");
  ::symlink("/etc", (tmp / "a/link").c_str());
  write_file(tmp / "b/g", "g");
  const std::string a = (tmp / "a").string(), b = (tmp / "b").string();
  auto through = collect_entries(
      inputs({{LayerInput::Kind::directory, a + "=/x"}, {LayerInput::Kind::directory, b + "=/x/link/sub"}}));
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().message,
            "/x/link/sub (--dir " + b + ") passes through the symlink /x/link -> /etc (--dir " + a + ")");
  auto file =
      collect_entries(inputs({{LayerInput::Kind::directory, a + "=/x"}, {LayerInput::Kind::file, b + "/g=/x/link/"}}));
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message,
            "/x/link/g (--file " + b + "/g) passes through the symlink /x/link -> /etc (--dir " + a + ")");
}

TEST(LayerInput, FileIntoADirectory) {
  auto into = parse_layer_input(LayerInput::Kind::file, "out/app=/usr/local/bin/");
  ASSERT_TRUE(into);
  EXPECT_EQ(into->destination, "/usr/local/bin/app");
  auto root = parse_layer_input(LayerInput::Kind::file, "out/app=/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->destination, "/app");
  auto bare_root = parse_layer_input(LayerInput::Kind::file, "out/app=/.");
  ASSERT_FALSE(bare_root);
  EXPECT_NE(bare_root.error().message.find("destination is the image root"), std::string::npos);
}

TEST(Layer, SymlinkedFileArgumentIsItsTarget) {
  TempDir tmp;
  write_file(tmp / "libfoo.so.1.2", "real library");
  ::symlink("libfoo.so.1.2", (tmp / "libfoo.so").c_str());
  auto tar = tar_of(inputs({{LayerInput::Kind::file, (tmp / "libfoo.so").string() + "=/usr/lib/libfoo.so"}}));
  ASSERT_TRUE(tar);
  EXPECT_EQ(read_tar(*tar).back().content, "real library");
}

TEST(Layer, BadInputsAreNamed) {
  TempDir tmp;
  write_file(tmp / "a", "a");
  write_file(tmp / "b", "b");
  ::mkfifo((tmp / "fifo").c_str(), 0644);
  auto missing = collect_entries(inputs({{LayerInput::Kind::file, (tmp / "nope").string()}}));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope\": No such file or directory"), std::string::npos);
  auto twice = collect_entries(inputs({{LayerInput::Kind::file, (tmp / "a").string() + "=/x"},
                                       {LayerInput::Kind::file, (tmp / "b").string() + "=/x"}}));
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("/x is given twice"), std::string::npos);
  auto dir_as_file = collect_entries(inputs({{LayerInput::Kind::file, tmp.path().string()}}));
  ASSERT_FALSE(dir_as_file);
  EXPECT_NE(dir_as_file.error().message.find("is a directory (use --dir)"), std::string::npos);
  auto fifo = collect_entries(inputs({{LayerInput::Kind::directory, tmp.path().string()}}));
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file, directory or symlink"), std::string::npos);
  EXPECT_FALSE(collect_entries({}));
}

}  // namespace
}  // namespace arec
