#include "port-reader/port_reader.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

TEST(PortReader, ANumberIsThePort) {
  auto r = read_port("6852", 5000);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->said, PortReading::Said::port);
  EXPECT_FALSE(r->nothing_said());
  EXPECT_EQ(r->port, 6852);
}

TEST(PortReader, TheBoundsArePorts) {
  EXPECT_EQ(read_port("1", std::nullopt)->port, 1);
  EXPECT_EQ(read_port("65535", std::nullopt)->port, 65535);
}

TEST(PortReader, SurroundingBlanksAreIgnored) { EXPECT_EQ(read_port(" 5679\n", std::nullopt)->port, 5679); }

TEST(PortReader, EmptyIsNothingSaidAndTheSealedValueStands) {
  auto r = read_port("", 6852);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->said, PortReading::Said::empty);
  EXPECT_TRUE(r->nothing_said());
  EXPECT_EQ(r->port, 6852);
  EXPECT_TRUE(r->request.empty());
}

TEST(PortReader, EmptyWithNothingSealedHasNoPort) {
  auto r = read_port("  ", std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->nothing_said());
  EXPECT_FALSE(r->port);
}

TEST(PortReader, AnUnfilledRequestIsNothingSaidAndNamesTheRequest) {
  auto r = read_port("arec://port/store", 6852);
  ASSERT_TRUE(r) << "an unfilled request must never be \"not a port\": " << r.error().message;
  EXPECT_EQ(r->said, PortReading::Said::unfilled_request);
  EXPECT_EQ(r->port, 6852);
  EXPECT_EQ(r->request, "arec://port/store");
}

TEST(PortReader, AnyUnfilledRequestKindIsNothingSaid) {
  auto r = read_port("arec://newkind/thing", 5000);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->said, PortReading::Said::unfilled_request);
  EXPECT_EQ(r->port, 5000);
}

TEST(PortReader, GarbageIsNotAPort) {
  for (const char* value :
       {"abc", "0", "65536", "-1", "+80", "80x", "8 0", "5000.0", "99999999999999999999", "http://x"}) {
    auto r = read_port(value, 5000);
    ASSERT_FALSE(r) << value;
    EXPECT_EQ(r.error().kind, ErrorKind::input);
    EXPECT_NE(r.error().message.find("is not a port"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(value), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace arec
