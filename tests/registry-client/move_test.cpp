#include "registry-client/move.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

std::string diff_of(std::string before, std::string after) {
  MovePlan plan;
  plan.settings_before = std::move(before);
  plan.settings_after = std::move(after);
  return settings_diff(plan, "nodes.json");
}

// The expected texts are what GNU `diff -u` prints for the same files (but the header's times).
TEST(MoveSettingsDiff, DistantChangesAreHunksOfTheirOwnWithThreeLinesOfContext) {
  EXPECT_EQ(diff_of("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n", "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n"),
            "--- nodes.json\n+++ nodes.json (after the move)\n"
            "@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n"
            "@@ -11,3 +11,4 @@\n k\n l\n m\n+n\n");
}

TEST(MoveSettingsDiff, ChangesWithinSixLinesShareAHunk) {
  EXPECT_EQ(diff_of("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nc\nd\ne\nf\ng\nX\nh\n"),
            "--- nodes.json\n+++ nodes.json (after the move)\n"
            "@@ -1,8 +1,8 @@\n a\n-b\n c\n d\n e\n f\n g\n+X\n h\n");
}

TEST(MoveSettingsDiff, ARemovedLineComesBeforeTheLineThatReplacesIt) {
  EXPECT_EQ(diff_of("{\n  \"registry\": \"n1\"\n}\n", "{\n  \"registry\": \"n2\"\n}\n"),
            "--- nodes.json\n+++ nodes.json (after the move)\n"
            "@@ -1,3 +1,3 @@\n {\n-  \"registry\": \"n1\"\n+  \"registry\": \"n2\"\n }\n");
}

TEST(MovePlan, KeepsTheFilesKeyOrderAndChangesOnlyTheRegistry) {
  test::TempDir dir;
  const auto path = (dir / "nodes.json").string();
  test::write_file(path, R"({"services": {"registry": "n1", "bus": "n1"},
 "nodes": {"n2": {"ports": {"bus": 5679}, "address": "10.0.0.2"}, "n1": {"address": "10.0.0.1", "ports": {"registry": 5000}}}})");
  auto settings = NodeSettings::load(path, "");
  ASSERT_TRUE(settings) << settings.error().message;
  auto plan = plan_move(*settings, "n2", 5001, {}, ClientSettings{});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->already_there);
  EXPECT_EQ(plan->from.host, "10.0.0.1:5000");
  EXPECT_EQ(plan->to.host, "10.0.0.2:5001");
  EXPECT_EQ(nlohmann::ordered_json::parse(plan->settings_after).dump(),
            R"({"services":{"registry":"n2","bus":"n1"},"nodes":{"n2":{"ports":{"bus":5679,"registry":5001},"address":"10.0.0.2"},"n1":{"address":"10.0.0.1","ports":{"registry":5000}}}})");
  EXPECT_EQ(nlohmann::ordered_json::parse(plan->settings_before).dump(),
            R"({"services":{"registry":"n1","bus":"n1"},"nodes":{"n2":{"ports":{"bus":5679},"address":"10.0.0.2"},"n1":{"address":"10.0.0.1","ports":{"registry":5000}}}})");

  auto same = plan_move(*settings, "n1", 5000, {}, ClientSettings{});
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_TRUE(same->already_there);
  auto other_port = plan_move(*settings, "n1", 5002, {}, ClientSettings{});
  ASSERT_TRUE(other_port) << other_port.error().message;
  EXPECT_FALSE(other_port->already_there);
  EXPECT_EQ(other_port->to.host, "10.0.0.1:5002");
}

}  // namespace
}  // namespace arec
