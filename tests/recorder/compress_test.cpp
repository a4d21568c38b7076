#include "recorder/compress.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include "support/memory_sink.hpp"

namespace arec {
namespace {

using test::MemorySink;

std::string compress_bytes(Compression compression, unsigned threads, const std::string& input) {
  MemorySink sink;
  auto compressor = make_compressor(compression, CompressOptions{threads, -1}, sink);
  for (std::size_t pos = 0; pos < input.size(); pos += 70000) {
    const auto part = std::string_view(input).substr(pos, 70000);
    EXPECT_TRUE(compressor->write(std::as_bytes(std::span(part.data(), part.size()))));
  }
  EXPECT_TRUE(compressor->finish());
  return sink.bytes;
}

// Decompresses with libarchive's raw reader (zlib and libzstd underneath), as consumers do.
std::string decompress(const std::string& bytes) {
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_raw(a);
  archive_read_open_memory(a, bytes.data(), bytes.size());
  archive_entry* e = nullptr;
  std::string out;
  if (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    char buffer[65536];
    la_ssize_t n;
    while ((n = archive_read_data(a, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  }
  archive_read_free(a);
  return out;
}

TEST(Compression, SameBytesForAnyThreadCountAndRoundTrips) {
  std::string input(5 * 1024 * 1024 + 123, '\0');
  std::uint32_t x = 1;
  for (auto& c : input) {
    x = x * 1103515245 + 12345;
    c = static_cast<char>((x >> 16) % 16 + 'a');  // compressible, not trivial
  }
  for (auto compression : {Compression::gzip, Compression::zstd}) {
    const auto one = compress_bytes(compression, 1, input);
    const auto two = compress_bytes(compression, 2, input);
    const auto four = compress_bytes(compression, 4, input);
    EXPECT_EQ(digest_of(one), digest_of(two)) << compression_name(compression);
    EXPECT_EQ(digest_of(one), digest_of(four)) << compression_name(compression);
    EXPECT_LT(one.size(), input.size());
    EXPECT_EQ(digest_of(decompress(one)), digest_of(input)) << compression_name(compression);
  }
  // gzip header: magic, deflate, no flags, MTIME zero (no timestamp).
  const auto gz = compress_bytes(Compression::gzip, 2, "hello");
  EXPECT_EQ(gz.substr(0, 3), std::string("\x1f\x8b\x08", 3));
  EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0'));
  EXPECT_EQ(compress_bytes(Compression::none, 2, input), input);
}

TEST(Compression, NamesAndMediaTypes) {
  for (auto compression : {Compression::gzip, Compression::zstd, Compression::none}) {
    EXPECT_EQ(parse_compression(compression_name(compression)), compression);
  }
  EXPECT_EQ(layer_media_type(Compression::gzip), "application/vnd.oci.image.layer.v1.tar+gzip");
  EXPECT_EQ(layer_media_type(Compression::zstd), "application/vnd.oci.image.layer.v1.tar+zstd");
  EXPECT_EQ(layer_media_type(Compression::none), "application/vnd.oci.image.layer.v1.tar");
  const auto bad = parse_compression("xz");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "compression \"xz\": expected gzip, zstd or none");
}

TEST(Compression, HashingAndBackgroundSinksPassEveryByteInOrder) {
  std::string input;
  for (int i = 0; i < 200000; ++i) input += std::to_string(i);
  MemorySink sink;
  auto background = make_background_sink(sink, 4096);
  HashingSink hashing(*background);
  for (std::size_t pos = 0; pos < input.size(); pos += 1000) {
    const auto part = std::string_view(input).substr(pos, 1000);
    ASSERT_TRUE(hashing.write(std::as_bytes(std::span(part.data(), part.size()))));
  }
  ASSERT_TRUE(hashing.finish());
  EXPECT_TRUE(sink.finished);
  EXPECT_EQ(sink.bytes, input);
  EXPECT_EQ(hashing.digest(), digest_of(input));
}

}  // namespace
}  // namespace arec
