#include "registry-client/transfer.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

TEST(Sizes, BytesAndBinaryUnits) {
  EXPECT_EQ(parse_size("1048576"), 1048576);
  EXPECT_EQ(parse_size("64M"), std::int64_t{64} << 20);
  EXPECT_EQ(parse_size("64MiB"), std::int64_t{64} << 20);
  EXPECT_EQ(parse_size("512k"), 512 * 1024);
  EXPECT_EQ(parse_size("1G"), std::int64_t{1} << 30);
  for (const char* bad : {"", "M", "12X", "-1", "0", "1.5M"}) EXPECT_FALSE(parse_size(bad)) << bad;
}

TEST(Sizes, TooLargeIsRefusedNotWrapped) {
  // 17179869185 GiB is 2^64 + 1 GiB: shifted blindly it would wrap to 1 GiB.
  const auto wrapped = parse_size("17179869185G");
  ASSERT_FALSE(wrapped);
  EXPECT_EQ(wrapped.error().message, "size \"17179869185G\": too large");
  EXPECT_EQ(wrapped.error().kind, ErrorKind::input);
  EXPECT_FALSE(parse_size("8589934592G"));  // 2^63 bytes
  EXPECT_EQ(parse_size("8589934591G"), std::int64_t{8589934591} << 30);
  EXPECT_FALSE(parse_size("8796093022208M"));
  EXPECT_EQ(parse_size("999999999999999"), 999999999999999);
  EXPECT_FALSE(parse_size("9999999999999999")) << "more than 15 digits";
}

}  // namespace
}  // namespace arec
