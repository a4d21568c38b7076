#include "util/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.hpp"

namespace arec {
namespace {

using test::read_file;
using test::TempDir;
using test::write_file;

std::size_t entries_in(const fs::Path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// Makes a file look older than the 2 s within which a temporary is never called abandoned.
void age(const fs::Path& path) {
  const struct timeval old[2] = {{1, 0}, {1, 0}};
  ASSERT_EQ(::utimes(path.c_str(), old), 0);
}

TEST(AtomicFile, TheTargetAppearsOnlyOnCommitWithEverythingWritten) {
  TempDir dir;
  write_file(dir / "target", "old");
  auto file = fs::AtomicFile::create(dir.path(), dir / "target");
  ASSERT_TRUE(file) << file.error().message;
  ASSERT_TRUE(file->write("new "));
  ASSERT_TRUE(file->write("content"));
  EXPECT_EQ(read_file(dir / "target"), "old");  // a reader meanwhile sees the old file whole
  ASSERT_TRUE(file->commit());
  EXPECT_EQ(read_file(dir / "target"), "new content");
  EXPECT_EQ(entries_in(dir.path()), 1u);  // no temporary left behind
}

TEST(AtomicFile, DroppedWithoutCommitLeavesTheTargetAndNoTemporary) {
  TempDir dir;
  write_file(dir / "target", "old");
  {
    auto file = fs::AtomicFile::create(dir.path(), dir / "target");
    ASSERT_TRUE(file);
    ASSERT_TRUE(file->write("half"));
  }
  EXPECT_EQ(read_file(dir / "target"), "old");
  EXPECT_EQ(entries_in(dir.path()), 1u);
}

TEST(AtomicFile, RetargetRenamesToTheNameKnownAtTheEnd) {
  TempDir dir;
  auto file = fs::AtomicFile::create(dir.path(), dir / "unknown");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->write("blob"));
  file->retarget(dir / "sha256-of-blob");
  ASSERT_TRUE(file->commit());
  EXPECT_EQ(read_file(dir / "sha256-of-blob"), "blob");
  EXPECT_FALSE(std::filesystem::exists(dir / "unknown"));
}

TEST(AtomicFile, ATemporaryInUseIsNotAbandonedAndOneWhoseWriterIsGoneIs) {
  TempDir dir;
  auto file = fs::AtomicFile::create(dir.path(), dir / "target");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->write("x"));
  fs::Path temp;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) temp = e.path();
  ASSERT_FALSE(temp.empty());
  age(temp);
  EXPECT_FALSE(fs::is_abandoned_temporary(temp));  // its writer holds the lock
  // A killed writer: its lock went with it. A plain old file stands for its temporary.
  write_file(dir / "left-by-a-killed-writer", "x");
  age(dir / "left-by-a-killed-writer");
  EXPECT_TRUE(fs::is_abandoned_temporary(dir / "left-by-a-killed-writer"));
  write_file(dir / "young", "x");  // younger than 2 s: its writer may not have locked it yet
  EXPECT_FALSE(fs::is_abandoned_temporary(dir / "young"));
}

TEST(WriteFileAtomic, ReplacesTheWholeFile) {
  TempDir dir;
  write_file(dir / "index.json", std::string(1000, 'x'));
  ASSERT_TRUE(fs::write_file_atomic(dir.path(), dir / "index.json", "{}"));
  EXPECT_EQ(read_file(dir / "index.json"), "{}");
}

TEST(ReadFile, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  auto text = fs::read_file(dir / "nodes.json");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find((dir / "nodes.json").string()), std::string::npos) << text.error().message;
}

TEST(OpenRead, NoFollowRefusesASymlinkThatFollowReads) {
  TempDir dir;
  write_file(dir / "real", "content");
  std::filesystem::create_symlink(dir / "real", dir / "link");
  EXPECT_TRUE(fs::open_read(dir / "link", fs::FollowSymlinks::yes));
  EXPECT_FALSE(fs::open_read(dir / "link", fs::FollowSymlinks::no));
  EXPECT_TRUE(fs::open_read(dir / "real", fs::FollowSymlinks::no));
}

TEST(ReadSome, ReadsToTheEndThenZero) {
  TempDir dir;
  write_file(dir / "f", "0123456789");
  auto fd = fs::open_read(dir / "f");
  ASSERT_TRUE(fd);
  std::byte buffer[4];
  std::string seen;
  for (int i = 0; i < 10; ++i) {
    auto n = fs::read_some(fd->get(), buffer, dir / "f");
    ASSERT_TRUE(n);
    if (*n == 0) break;
    seen.append(reinterpret_cast<const char*>(buffer), *n);
  }
  EXPECT_EQ(seen, "0123456789");
}

TEST(FileLock, ASecondExclusiveHolderWaitsBoundedlyThenFailsNamingTheLock) {
  TempDir dir;
  auto first = fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(100));
  ASSERT_TRUE(first) << first.error().message;
  // flock locks belong to the open file description: a second open in this process conflicts too.
  const auto started = std::chrono::steady_clock::now();
  auto second = fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(200));
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(second);
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_NE(second.error().message.find((dir / "lock").string()), std::string::npos) << second.error().message;
}

TEST(FileLock, SharedHoldersDoNotExcludeEachOtherButExcludeAWriter) {
  TempDir dir;
  auto a = fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(100), fs::LockMode::shared);
  auto b = fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(100), fs::LockMode::shared);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_FALSE(fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(50)));
}

TEST(FileLock, ReleasedWhenItsHolderIsDropped) {
  TempDir dir;
  { auto held = fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(100)); }
  EXPECT_TRUE(fs::FileLock::acquire(dir / "lock", std::chrono::milliseconds(100)));
}

TEST(DirectoryOf, ABareNameIsInTheCurrentDirectory) {
  EXPECT_EQ(fs::directory_of("index.json"), fs::Path("."));
  EXPECT_EQ(fs::directory_of("/store/index.json"), fs::Path("/store"));
}

}  // namespace
}  // namespace arec
