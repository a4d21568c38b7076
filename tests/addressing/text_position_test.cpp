#include "addressing/text_position.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// nlohmann counts the byte it stopped at from 1.
TEST(LineAndColumn, CountsLinesAndColumnsFromOne) {
  EXPECT_EQ(line_and_column("abc", 1), "line 1, column 1");
  EXPECT_EQ(line_and_column("abc", 3), "line 1, column 3");
  EXPECT_EQ(line_and_column("ab\ncd", 4), "line 2, column 1");
  EXPECT_EQ(line_and_column("ab\ncd", 5), "line 2, column 2");
  EXPECT_EQ(line_and_column("\n\n\nx", 4), "line 4, column 1");
}

TEST(LineAndColumn, AByteBeyondTheTextStopsAtItsEnd) {
  EXPECT_EQ(line_and_column("a\nb", 100), "line 2, column 2");
  EXPECT_EQ(line_and_column("", 0), "line 1, column 1");
}

TEST(JsonProblem, NamesWhereTheParserStopped) {
  const std::string text = "{\n  \"nodes\": [1,\n}";
  auto parsed = read_json<nlohmann::json>(text);
  ASSERT_FALSE(parsed);
  const std::string said = json_problem(text, parsed.error());
  EXPECT_NE(said.find("line 3, column 1"), std::string::npos) << said;
}

}  // namespace
}  // namespace arec
