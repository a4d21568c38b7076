#include "addressing/nodes.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

// Node settings like docs/compose.md's, with an IPv6 node, a node given no ports, and a bus and a broker
// beside the store.
const std::string k_mesh = R"({
  "self": "n1",
  "nodes": {
    "n1": { "address": "10.20.0.11", "ports": { "registry": 5000, "store": 6852, "bus": 5679 } },
    "n2": { "address": "fd00::12", "ports": { "registry": 5001, "broker-mgmt": 15672 }, "insecure_registry": true },
    "n3": { "address": "n3.mesh.internal", "ports": {} }
  },
  "services": { "registry": "n2", "store": "n1", "bus": "n1", "broker-mgmt": "n2", "vault": "n3" }
})";

NodeSettings mesh() {
  auto settings = NodeSettings::parse(k_mesh, "nodes.json");
  EXPECT_TRUE(settings) << settings.error().message;
  return *settings;
}

// The error for `text`, which must be refused.
std::string refused(const std::string& text) {
  auto settings = NodeSettings::parse(text, "nodes.json");
  EXPECT_FALSE(settings) << text;
  if (settings) return {};
  EXPECT_EQ(settings.error().kind, ErrorKind::input);
  return settings.error().message;
}

// nlohmann keeps the last of two keys: a second "trust" block would have turned the first off unseen.
TEST(NodeSettings, AKeyTwiceInOneObjectIsAnErrorNamingItsPath) {
  EXPECT_EQ(refused(R"({"nodes": {"n1": {}}, "trust": {"keys": ["team.pub"]}, "trust": {"keys": ["x.pub"]}})"),
            "node settings nodes.json: .trust: appears twice in its object; keep one");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {"ports": {"registry": 5000, "registry": 5001}}}})"),
            "node settings nodes.json: .nodes.n1.ports.registry: appears twice in its object; keep one");
  // The same key in two objects is two keys.
  EXPECT_TRUE(NodeSettings::parse(R"({"nodes": {"n1": {"ports": {"r": 1}}, "n2": {"ports": {"r": 1}}}})", "n.json"));
}

TEST(NodeSettings, TrustThatNamesNoKeyIsAnError) {
  EXPECT_EQ(refused(R"({"nodes": {"n1": {}}, "trust": {"keys": []}})"),
            "node settings nodes.json: .trust.keys: names no key; name the team's public key files, or remove "
            "\"trust\" to check no signature");
}

TEST(NodeSettings, ParsesNodesPortsAndServices) {
  const auto s = mesh();
  EXPECT_EQ(s.self, "n1");
  EXPECT_EQ(s.source, "nodes.json");
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes.at("n1").address, "10.20.0.11");
  EXPECT_EQ(s.nodes.at("n1").ports.at("store"), 6852);
  EXPECT_EQ(s.nodes.at("n2").address, "fd00::12");
  EXPECT_TRUE(s.nodes.at("n2").insecure_registry);
  EXPECT_FALSE(s.nodes.at("n1").insecure_registry);
  EXPECT_EQ(s.nodes.at("n3").address, "n3.mesh.internal");
  EXPECT_EQ(s.services.at("registry"), "n2");
}

TEST(NodeSettings, BuiltInIsOneLocalNodeWithRegistryPort5000) {
  const auto s = NodeSettings::built_in();
  EXPECT_EQ(s.self, "local");
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_TRUE(s.nodes.at("local").address.empty());
  EXPECT_EQ(s.nodes.at("local").ports.at("registry"), 5000);
  EXPECT_EQ(s.services.at("registry"), "local");
  auto r = resolve(s, "registry");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(*r->endpoint(), "127.0.0.1:5000");
}

TEST(NodeSettings, UnknownKeysAreErrorsWithTheirPath) {
  EXPECT_EQ(refused(R"({"nodes": {}, "registry": "n1"})"),
            "node settings nodes.json: .registry: unknown key (expected self, registry_name, nodes, services, trust)");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {"adress": "10.0.0.1"}}})"),
            "node settings nodes.json: .nodes.n1.adress: unknown key (expected address, ports, insecure_registry)");
}

TEST(NodeSettings, WrongTypesAreErrorsWithTheirPath) {
  EXPECT_EQ(refused(R"([])"), "node settings nodes.json: .: must be an object, got array");
  EXPECT_EQ(refused(R"({"self": 1})"), "node settings nodes.json: .self: must be a string, got number");
  EXPECT_EQ(refused(R"({"nodes": []})"), "node settings nodes.json: .nodes: must be an object, got array");
  EXPECT_EQ(refused(R"({"nodes": {"n1": "10.0.0.1"}})"),
            "node settings nodes.json: .nodes.n1: must be an object, got string");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {"address": 10}}})"),
            "node settings nodes.json: .nodes.n1.address: must be a string, got number");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {"ports": [5000]}}})"),
            "node settings nodes.json: .nodes.n1.ports: must be an object, got array");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {"insecure_registry": "yes"}}})"),
            "node settings nodes.json: .nodes.n1.insecure_registry: must be true or false, got string");
  EXPECT_EQ(refused(R"({"nodes": {"n1": {}}, "services": {"registry": 1}})"),
            "node settings nodes.json: .services.registry: must name a node, got number");
}

TEST(NodeSettings, PortsOutOfRangeAreErrors) {
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": 70000}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: 70000 is not a port (1-65535)");
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": 0}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: 0 is not a port (1-65535)");
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": -1}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: -1 is not a port (1-65535)");
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": 18446744073709551615}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: 18446744073709551615 is not a port (1-65535)");
}

TEST(NodeSettings, NumbersBeyondADoubleAreErrors) {
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": 1e999}}}})"),
            "node settings nodes.json: a number is too large");
}

TEST(NodeSettings, DocumentsNestedTooDeepAreErrors) {
  const auto deep = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": )" + deep + "}}}}"),
            "node settings nodes.json: nested deeper than 512 levels");
}

TEST(NodeSettings, PortsThatAreNotNumbersAreErrors) {
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": "5000"}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: \"5000\" is not a port (an integer 1-65535)");
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": 5000.5}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: 5000.5 is not a port (an integer 1-65535)");
  EXPECT_EQ(refused(R"({"nodes": {"n2": {"ports": {"registry": null}}}})"),
            "node settings nodes.json: .nodes.n2.ports.registry: null is not a port (an integer 1-65535)");
}

TEST(NodeSettings, AddressesMustBeIpOrDnsNames) {
  EXPECT_NE(
      refused(R"({"nodes": {"n1": {"address": "10.0.0.1:5000"}}})").find(".nodes.n1.address: \"10.0.0.1:5000\" is not"),
      std::string::npos);
  EXPECT_NE(refused(R"({"nodes": {"n1": {"address": "[::1]"}}})").find("without brackets"), std::string::npos);
  EXPECT_NE(refused(R"({"nodes": {"n1": {"address": ""}}})").find(".nodes.n1.address: is empty"), std::string::npos);
}

TEST(NodeSettings, AServiceHeldByAnUnknownNodeIsAnError) {
  EXPECT_EQ(refused(R"({"nodes": {"n1": {}}, "services": {"registry": "n9"}})"),
            "node settings nodes.json: .services.registry: names node \"n9\", which is not in .nodes");
}

TEST(NodeSettings, ServiceNamesFollowTheRequestGrammar) {
  EXPECT_NE(refused(R"({"nodes": {"n1": {}}, "services": {"Registry": "n1"}})")
                .find(".services.Registry: \"Registry\" is not a service name"),
            std::string::npos);
  EXPECT_NE(refused(R"({"nodes": {"n1": {"ports": {"my_store": 1}}}})").find(".nodes.n1.ports.my_store"),
            std::string::npos);
}

TEST(NodeSettings, SelfNamingAnUnknownNodeIsAnError) {
  EXPECT_EQ(refused(R"({"self": "n9", "nodes": {"n1": {}}})"),
            "node settings nodes.json: .self: names node \"n9\", which is not in .nodes");
}

TEST(NodeSettings, MalformedJsonNamesTheLine) {
  EXPECT_EQ(refused("{\n  \"nodes\": {\n    \"n1\": { \"address\": \"10.0.0.1\" },\n  }\n}"),
            "node settings nodes.json: malformed JSON at line 4, column 3");
  EXPECT_EQ(refused(""), "node settings nodes.json: malformed JSON at line 1, column 1");
}

TEST(NodeSettings, LoadReadsTheFileAndSelfOverridesIt) {
  TempDir tmp;
  write_file(tmp / "nodes.json", k_mesh);
  auto s = NodeSettings::load((tmp / "nodes.json").string(), "n2");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->self, "n2");
  EXPECT_EQ(s->source, (tmp / "nodes.json").string());
}

TEST(NodeSettings, LoadRefusesASelfThatIsNoNode) {
  TempDir tmp;
  write_file(tmp / "nodes.json", k_mesh);
  const auto path = (tmp / "nodes.json").string();
  auto s = NodeSettings::load(path, "n9");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "--self \"n9\": no such node in node settings " + path);
  EXPECT_FALSE(NodeSettings::load("", "n9"));
}

TEST(NodeSettings, LoadNamesAMissingFile) {
  TempDir tmp;
  auto s = NodeSettings::load((tmp / "missing.json").string(), "");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("reading node settings"), std::string::npos);
  EXPECT_NE(s.error().message.find("missing.json"), std::string::npos);
}

TEST(NodeSettings, LoadWithNoFileIsTheBuiltInDefault) {
  auto s = NodeSettings::load("", "");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->source, "built-in default");
}

TEST(NodeSettings, WrittenSettingsReadBackTheSame) {
  const auto s = mesh();
  auto again = NodeSettings::parse(s.to_json_text(), "again.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->to_json_text(), s.to_json_text());
}

TEST(NodeSettings, ARegistryNameIsAReferenceDomain) {
  for (const std::string name :
       {"registry.mesh", "registry.mesh:5000", "localhost", "10.0.0.5:5000", "[fd00::1]:5000"}) {
    auto s = NodeSettings::parse(R"({"registry_name": ")" + name + R"(", "nodes": {}})", "nodes.json");
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->registry_name, name);
    auto again = NodeSettings::parse(s->to_json_text(), "again.json");
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(again->registry_name, name);
    EXPECT_EQ(again->to_json_text(), s->to_json_text());
  }
  EXPECT_TRUE(NodeSettings::parse(R"({"nodes": {}})", "nodes.json")->registry_name.empty());
  EXPECT_EQ(NodeSettings::parse(R"({"nodes": {}})", "nodes.json")->to_json_text().find("registry_name"),
            std::string::npos);
  const std::string why =
      " is not a registry name that references read as their domain (a DNS name with a '.', optionally "
      ":PORT, e.g. \"registry.mesh\", or localhost)";
  // A single word is a path component to every runtime, never a domain.
  EXPECT_EQ(refused(R"({"registry_name": "registry", "nodes": {}})"),
            "node settings nodes.json: .registry_name: \"registry\"" + why);
  EXPECT_EQ(refused(R"({"registry_name": "registry.mesh/mesh", "nodes": {}})"),
            "node settings nodes.json: .registry_name: \"registry.mesh/mesh\"" + why);
  EXPECT_EQ(refused(R"({"registry_name": "", "nodes": {}})"), "node settings nodes.json: .registry_name: \"\"" + why);
  EXPECT_EQ(refused(R"({"registry_name": "Registry.mesh:x", "nodes": {}})"),
            "node settings nodes.json: .registry_name: \"Registry.mesh:x\"" + why);
  EXPECT_EQ(refused(R"({"registry_name": 5000, "nodes": {}})"),
            "node settings nodes.json: .registry_name: must be a string, got number");
}

TEST(Resolve, TheHoldersAddressAndPort) {
  auto r = resolve(mesh(), "store");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->node, "n1");
  EXPECT_EQ(r->address, "10.20.0.11");
  EXPECT_EQ(r->address_from, Resolution::AddressFrom::node);
  EXPECT_EQ(r->port, 6852);
  EXPECT_EQ(*r->endpoint(), "10.20.0.11:6852");
}

TEST(Resolve, Ipv6GoesInBracketsWhereAPortFollows) {
  auto r = resolve(mesh(), "registry");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->address, "fd00::12");
  EXPECT_EQ(r->host(), "[fd00::12]");
  EXPECT_EQ(*r->endpoint(), "[fd00::12]:5001");
  EXPECT_TRUE(r->insecure_registry);
}

TEST(Resolve, APortNotGivenIsNoneAndNoEndpoint) {
  auto r = resolve(mesh(), "vault");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->port);
  auto endpoint = r->endpoint();
  ASSERT_FALSE(endpoint);
  EXPECT_EQ(endpoint.error().message, "service vault: node n3 was given no port for vault");
  auto port = given_port(mesh(), "vault");
  ASSERT_TRUE(port);
  EXPECT_FALSE(*port);
}

TEST(Resolve, AServiceNobodyHoldsIsAnError) {
  auto r = resolve(mesh(), "cache");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("service cache: no node holds it in node settings nodes.json"), std::string::npos);
  EXPECT_FALSE(given_port(mesh(), "cache"));
}

const std::string k_genesis = R"({
  "self": "first",
  "nodes": { "first": { "ports": { "registry": 5000 } }, "second": { "address": "10.0.0.2" } },
  "services": { "registry": "first" }
})";

TEST(Resolve, AHolderWithNoAddressIsLoopbackForItself) {
  auto s = NodeSettings::parse(k_genesis, "nodes.json");
  ASSERT_TRUE(s);
  auto r = resolve(*s, "registry");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->address, "127.0.0.1");
  EXPECT_EQ(r->address_from, Resolution::AddressFrom::loopback);
  EXPECT_TRUE(r->is_loopback());
}

TEST(Resolve, AHolderWithNoAddressIsAnErrorForAnotherNodeNamingBoth) {
  auto s = NodeSettings::parse(k_genesis, "nodes.json");
  ASSERT_TRUE(s);
  s->self = "second";
  auto r = resolve(*s, "registry");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("held by node first, which has no address yet, and this is node second"),
            std::string::npos)
      << r.error().message;
  // The port needs no address.
  auto port = given_port(*s, "registry");
  ASSERT_TRUE(port);
  EXPECT_EQ(*port, 5000);
}

TEST(Resolve, AHolderWithNoAddressIsAnErrorWhenSelfIsNotSet) {
  auto s = NodeSettings::parse(k_genesis, "nodes.json");
  ASSERT_TRUE(s);
  s->self.clear();
  auto r = resolve(*s, "registry");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("self is not set"), std::string::npos);
}

TEST(Loopback, RecognisesLoopbackHosts) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"})
    EXPECT_TRUE(is_loopback_host(host)) << host;
  for (const char* host : {"10.0.0.1", "fd00::1", "example.com", "128.0.0.1"})
    EXPECT_FALSE(is_loopback_host(host)) << host;
}

TEST(ServiceName, FollowsTheGrammar) {
  for (const char* name : {"registry", "broker-mgmt", "s3", "0store"}) EXPECT_TRUE(is_service_name(name)) << name;
  for (const char* name : {"", "-x", "Store", "my_store", "a.b"}) EXPECT_FALSE(is_service_name(name)) << name;
}

}  // namespace
}  // namespace arec
