#include "registry-client/move.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

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
  EXPECT_EQ(
      nlohmann::ordered_json::parse(plan->settings_after).dump(),
      R"({"services":{"registry":"n2","bus":"n1"},"nodes":{"n2":{"ports":{"bus":5679,"registry":5001},"address":"10.0.0.2"},"n1":{"address":"10.0.0.1","ports":{"registry":5000}}}})");
  EXPECT_EQ(
      nlohmann::ordered_json::parse(plan->settings_before).dump(),
      R"({"services":{"registry":"n1","bus":"n1"},"nodes":{"n2":{"ports":{"bus":5679},"address":"10.0.0.2"},"n1":{"address":"10.0.0.1","ports":{"registry":5000}}}})");

  auto same = plan_move(*settings, "n1", 5000, {}, ClientSettings{});
  ASSERT_TRUE(same) << same.error().message;
  EXPECT_TRUE(same->already_there);
  auto other_port = plan_move(*settings, "n1", 5002, {}, ClientSettings{});
  ASSERT_TRUE(other_port) << other_port.error().message;
  EXPECT_FALSE(other_port->already_there);
  EXPECT_EQ(other_port->to.host, "10.0.0.1:5002");
}

// A compact file of seven lines: the plan shows its own lines, and the move rewrites the two values
// that move and nothing else, byte for byte.
TEST(MovePlan, ChangesOnlyTheValuesThatMoveAndKeepsEveryOtherByte) {
  test::TempDir dir;
  const auto path = (dir / "nodes.json").string();
  const std::string before =
      "{\"self\":\"n1\",\n"
      " \"nodes\": {\"n1\": {\"address\": \"10.0.0.1\", \"ports\": {\"registry\": 5000, \"db\": 6379}},\n"
      "           \"n2\": {\"address\": \"10.0.0.2\",\n"
      "                  \"ports\": {\"bus\":5679}},\n"
      "           \"n3\": {\"address\": \"10.0.0.3\"}},\n"
      " \"services\": {\"registry\":  \"n1\", \"db\": \"n1\"}\n"
      "}\n";
  test::write_file(path, before);
  auto settings = NodeSettings::load(path, "");
  ASSERT_TRUE(settings) << settings.error().message;
  auto plan = plan_move(*settings, "n2", 5001, {}, ClientSettings{});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->settings_before, before);
  std::string after = before;
  after.replace(after.find("{\"bus\":5679}"), 12, "{\"bus\":5679, \"registry\": 5001}");
  after.replace(after.find("\"registry\":  \"n1\""), 17, "\"registry\":  \"n2\"");
  EXPECT_EQ(plan->settings_after, after);
  EXPECT_EQ(settings_diff(*plan, "nodes.json"),
            "--- nodes.json\n+++ nodes.json (after the move)\n@@ -1,7 +1,7 @@\n"
            " {\"self\":\"n1\",\n"
            "  \"nodes\": {\"n1\": {\"address\": \"10.0.0.1\", \"ports\": {\"registry\": 5000, \"db\": 6379}},\n"
            "            \"n2\": {\"address\": \"10.0.0.2\",\n"
            "-                  \"ports\": {\"bus\":5679}},\n"
            "+                  \"ports\": {\"bus\":5679, \"registry\": 5001}},\n"
            "            \"n3\": {\"address\": \"10.0.0.3\"}},\n"
            "- \"services\": {\"registry\":  \"n1\", \"db\": \"n1\"}\n"
            "+ \"services\": {\"registry\":  \"n2\", \"db\": \"n1\"}\n"
            " }\n");
  // A node given no ports gets them; a port given already is rewritten where it is.
  auto to_n3 = plan_move(*settings, "n3", 5002, {}, ClientSettings{});
  ASSERT_TRUE(to_n3) << to_n3.error().message;
  EXPECT_NE(to_n3->settings_after.find("\"n3\": {\"address\": \"10.0.0.3\", \"ports\": {\"registry\": 5002}}"),
            std::string::npos)
      << to_n3->settings_after;
  auto same_node = plan_move(*settings, "n1", 5003, {}, ClientSettings{});
  ASSERT_TRUE(same_node) << same_node.error().message;
  std::string port_only = before;
  port_only.replace(port_only.find("5000"), 4, "5003");
  EXPECT_EQ(same_node->settings_after, port_only);
}

}  // namespace
}  // namespace arec
