#include "recorder/file_hashing.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "recorder/compress.hpp"
#include "recorder/layer.hpp"
#include "support/memory_sink.hpp"
#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::MemorySink;
using test::TempDir;
using test::write_file;

// 3 MiB and a bit: more than one block of the reader's pool, and hashed on the worker threads.
std::string big_content() {
  std::string out(std::size_t{3} * 1024 * 1024 + 123, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>((i * 7 + i / 4099) % 256);
  return out;
}

TEST(FileHashing, ChecksumsFromThePackingReadAreThoseOfEachFileAndTheTarIsUnchanged) {
  TempDir dir;
  write_file(dir / "in/big", big_content());
  write_file(dir / "in/small", "hello\n");
  write_file(dir / "in/empty", "");
  auto entries = collect_entries({*parse_layer_input(LayerInput::Kind::directory, (dir / "in").string() + "=/srv")});
  ASSERT_TRUE(entries);
  ChecksumTable table;
  TarOptions options;
  options.checksums = &table;
  // The blocks go through a thread of their own, shared, as a record writes them; its small bound makes
  // the reader wait for it.
  MemorySink sink;
  HashingSink hashing(sink);
  auto background = make_background_sink(hashing, 4096);
  ASSERT_TRUE(write_tar(*entries, options, *background));
  // The same bytes as before the blocks were shared: the DiffID of this tree recorded by arec 2026-12-03.
  EXPECT_EQ(hashing.digest().str(), "sha256:92df2bedecff254ec2599785c3d0f6fde81a9d075eafc7d6e79d27d11684996e");
  EXPECT_EQ(table.size(), 3U);
  // As sha1sum and sha256sum say.
  EXPECT_EQ(table.find("srv/big"), (FileChecksums{"cc1866f69bde700fa3105b4edae96d24dbd94a4e",
                                                  "72412c79e4e19a11b796d1d7ef964aafb109c29e0a20707f56da7c7ba889d4ae"}));
  EXPECT_EQ(table.find("srv/small"),
            (FileChecksums{"f572d396fae9206628714fb2ce00f72e94f2258f",
                           "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}));
  EXPECT_EQ(table.find("srv/empty"),
            (FileChecksums{"da39a3ee5e6b4b0d3255bfef95601890afd80709",
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}));
  EXPECT_EQ(table.find("srv/big"), checksums_of(big_content()));
}

TEST(FileHashing, OnlyTheWantedFilesAreHashed) {
  TempDir dir;
  write_file(dir / "in/a", big_content());
  write_file(dir / "in/b", big_content() + "b");
  auto entries = collect_entries({*parse_layer_input(LayerInput::Kind::directory, (dir / "in").string() + "=/srv")});
  ASSERT_TRUE(entries);
  ChecksumTable table;
  TarOptions options;
  options.checksums = &table;
  options.checksum_wanted = [](const LayerEntry& e) { return e.path == "srv/b"; };
  MemorySink sink;
  ASSERT_TRUE(write_tar(*entries, options, sink));
  EXPECT_EQ(table.size(), 1U);
  EXPECT_FALSE(table.find("srv/a"));
  EXPECT_EQ(table.find("srv/b"), checksums_of(big_content() + "b"));
}

TEST(FileHashing, ManyFilesOneAfterAnotherEachGetTheirOwn) {
  // Workers hash file after file without starting over: each file's sums are its own.
  ChecksumTable table;
  BlockPool pool(2, 1000);
  {
    FileHashing hashing(table);
    for (int f = 0; f < 5; ++f) {
      const std::string content(
          static_cast<std::size_t>(FileHashing::k_hashed_inline) + 1 + static_cast<std::size_t>(f) * 777,
          static_cast<char>('a' + f));
      hashing.begin("f" + std::to_string(f), static_cast<std::int64_t>(content.size()));
      for (std::size_t pos = 0; pos < content.size(); pos += pool.block_size()) {
        auto block = pool.take();
        const std::size_t n = std::min(pool.block_size(), content.size() - pos);
        std::memcpy(block->data(), content.data() + pos, n);
        hashing.add(SharedBytes{block, std::span<const std::byte>(block->data(), n)});
      }
      hashing.end();
    }
    hashing.finish();
  }
  for (int f = 0; f < 5; ++f) {
    const std::string content(
        static_cast<std::size_t>(FileHashing::k_hashed_inline) + 1 + static_cast<std::size_t>(f) * 777,
        static_cast<char>('a' + f));
    EXPECT_EQ(table.find("f" + std::to_string(f)), checksums_of(content)) << f;
  }
}

TEST(BlockPool, TakingWaitsWhileEveryBlockIsOut) {
  BlockPool pool(2, 16);
  auto a = pool.take();
  auto b = pool.take();
  EXPECT_EQ(a->size(), 16U);
  std::atomic<bool> taken{false};
  std::thread waiter([&] {
    auto c = pool.take();
    taken = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(taken);
  const auto* reused = a.get();
  a.reset();
  waiter.join();
  EXPECT_TRUE(taken);
  // The block that came back is the one handed out again: no memory is made beyond the pool's.
  EXPECT_EQ(pool.take().get(), reused);
}

}  // namespace
}  // namespace arec
