#include "addressing/nodes_text.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// A settings file as a person writes it: its own key order, a comment member arec does not read, a
// key with an escaped quote, numbers as written.
const std::string k_file = R"({
  "//": "the mesh's nodes; ask ops before changing",
  "services": {
    "bus": "n1",
    "registry": "n1"
  },
  "nodes": {
    "n2": {
      "ports": {
        "bus": 5679
      },
      "address": "10.0.0.2",
      "note \"x\"": 1.50
    },
    "n1": { "address": "10.0.0.1", "ports": { "registry": 5000 } }
  }
})";

TEST(NodesText, MovesTheRegistryAndKeepsEveryOtherByte) {
  const auto moved = with_registry_moved(k_file, "n2", 5001);
  ASSERT_TRUE(moved);
  std::string expected = k_file;
  expected.replace(expected.find("\"registry\": \"n1\""), 16, "\"registry\": \"n2\"");
  // Added after the last member of n2's ports, on a line of its own with that member's indentation.
  expected.replace(expected.find("\"bus\": 5679"), 11, "\"bus\": 5679,\n        \"registry\": 5001");
  EXPECT_EQ(*moved, expected);
}

TEST(NodesText, KeepsTheKeyOrderAndTheCommentMember) {
  const auto moved = with_registry_moved(k_file, "n2", 5001);
  ASSERT_TRUE(moved);
  EXPECT_TRUE(
      moved->starts_with("{\n  \"//\": \"the mesh's nodes; ask ops before changing\",\n  \"services\": {\n    \"bus\""))
      << *moved;
  EXPECT_LT(moved->find("\"n2\": {"), moved->find("\"n1\": {")) << *moved;
  EXPECT_NE(moved->find("\"note \\\"x\\\"\": 1.50"), std::string::npos) << *moved;
}

TEST(NodesText, RewritesAPortWhereItIs) {
  const auto moved = with_registry_moved(k_file, "n1", 5003);
  ASSERT_TRUE(moved);
  std::string expected = k_file;
  expected.replace(expected.find("5000"), 4, "5003");
  EXPECT_EQ(*moved, expected);
}

TEST(NodesText, GivesANodeWithoutPortsItsPortsInline) {
  const std::string file =
      R"({"services": {"registry": "n1"}, "nodes": {"n1": {"address": "10.0.0.1"}, "n3": {"address": "10.0.0.3"}}})";
  const auto moved = with_registry_moved(file, "n3", 5002);
  ASSERT_TRUE(moved);
  EXPECT_EQ(
      *moved,
      R"({"services": {"registry": "n3"}, "nodes": {"n1": {"address": "10.0.0.1"}, "n3": {"address": "10.0.0.3", "ports": {"registry": 5002}}}})");
}

TEST(NodesText, AddsTheRegistryServiceWhenNoneHoldsIt) {
  const auto moved = with_registry_moved(R"({"services": {}, "nodes": {"n1": {"ports": {}}}})", "n1", 5000);
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, R"({"services": {"registry": "n1"}, "nodes": {"n1": {"ports": {"registry": 5000}}}})");
}

TEST(NodesText, NothingWithoutServicesOrTheNode) {
  EXPECT_EQ(with_registry_moved(R"({"nodes": {"n1": {}}})", "n1", 5000), std::nullopt);
  EXPECT_EQ(with_registry_moved(R"({"services": {"registry": "n1"}, "nodes": {"n1": {}}})", "n2", 5000), std::nullopt);
}

}  // namespace
}  // namespace arec
