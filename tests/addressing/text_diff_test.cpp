#include "addressing/text_diff.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// The lines a to p, one a line; `changed` gives the letters written in capitals instead.
std::string letters(std::string_view changed = "") {
  std::string out;
  for (char c = 'a'; c <= 'p'; ++c) {
    out.push_back(changed.find(c) == std::string_view::npos ? c : static_cast<char>(c - 'a' + 'A'));
    out.push_back('\n');
  }
  return out;
}

std::string body_of(std::string_view before, std::string_view after) {
  const std::string diff = unified_diff(before, after, "old", "new");
  EXPECT_TRUE(diff.starts_with("--- old\n+++ new\n")) << diff;
  return diff.substr(std::string_view("--- old\n+++ new\n").size());
}

// The expected texts are what GNU `diff -u` prints for the same files (but the header's names and times).
TEST(TextDiff, HeadersNameBothSides) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nc\n", "nodes.json", "nodes.json (after the move)"),
            "--- nodes.json\n+++ nodes.json (after the move)\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
}

TEST(TextDiff, AnInsertionIsShownBetweenItsContext) {
  EXPECT_EQ(body_of("a\nb\nc\n", "a\nb\nX\nc\n"), "@@ -1,3 +1,4 @@\n a\n b\n+X\n c\n");
}

TEST(TextDiff, ADeletionIsShownWithThreeLinesOfContextAfterIt) {
  EXPECT_EQ(body_of("a\nb\nc\nd\ne\nf\ng\nh\n", "b\nc\nd\ne\nf\ng\nh\n"), "@@ -1,4 +1,3 @@\n-a\n b\n c\n d\n");
}

TEST(TextDiff, AnEmptySideIsNumberedByTheLineBeforeIt) {
  EXPECT_EQ(body_of("", "x\ny\n"), "@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(body_of("x\ny\n", ""), "@@ -1,2 +0,0 @@\n-x\n-y\n");
}

TEST(TextDiff, ChangesSixKeptLinesApartShareAHunk) {
  EXPECT_EQ(body_of(letters(), letters("el")),
            "@@ -2,14 +2,14 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n i\n j\n k\n-l\n+L\n m\n n\n o\n");
}

TEST(TextDiff, ChangesSevenKeptLinesApartAreHunksOfTheirOwn) {
  EXPECT_EQ(body_of(letters(), letters("em")),
            "@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
            "@@ -10,7 +10,7 @@\n j\n k\n l\n-m\n+M\n n\n o\n p\n");
}

TEST(TextDiff, DistantChangesAreHunksOfTheirOwnWithThreeLinesOfContext) {
  EXPECT_EQ(body_of("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"),
            "@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"
            "@@ -11,3 +11,4 @@\n k\n l\n m\n+n\n");
}

TEST(TextDiff, ARemovedLineComesBeforeTheLineThatReplacesIt) {
  EXPECT_EQ(body_of("{\n  \"registry\": \"n1\"\n}\n", "{\n  \"registry\": \"n2\"\n}\n"),
            "@@ -1,3 +1,3 @@\n {\n-  \"registry\": \"n1\"\n+  \"registry\": \"n2\"\n }\n");
}

TEST(TextDiff, TheSameTextHasNoHunk) { EXPECT_EQ(body_of(letters(), letters()), ""); }

}  // namespace
}  // namespace arec
