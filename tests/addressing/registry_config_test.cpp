#include "addressing/registry_config.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// n1 holds the registry at an address of its own; n2 is marked insecure_registry; n3 has no address yet.
const std::string k_nodes = R"({
  "self": "n1",
  "registry_name": "registry.mesh",
  "nodes": {
    "n1": { "address": "10.20.0.11", "ports": { "registry": 5000 } },
    "n2": { "address": "10.20.0.12", "ports": { "registry": 5001 }, "insecure_registry": true },
    "n3": { "ports": { "registry": 5002 } }
  },
  "services": { "registry": "n1" }
})";

NodeSettings settings(std::string_view holder = "n1", std::string_view self = "n1") {
  auto s = NodeSettings::parse(k_nodes, "nodes.json");
  EXPECT_TRUE(s) << s.error().message;
  s->services["registry"] = std::string(holder);
  s->self = std::string(self);
  return *s;
}

RuntimeRegistry registry(const NodeSettings& s, std::string ca = "", std::vector<std::string> bridges = {}) {
  auto r = runtime_registry(s, std::move(ca), bridges);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : RuntimeRegistry{};
}

std::string refused(const NodeSettings& s, std::vector<std::string> bridges) {
  auto r = runtime_registry(s, "", bridges);
  EXPECT_FALSE(r);
  if (r) return {};
  EXPECT_EQ(r.error().kind, ErrorKind::input);
  return r.error().message;
}

TEST(RegistryConfig, ContainerdHostsOverHttpsWithACa) {
  const auto hosts = containerd_hosts(registry(settings(), "/etc/arec/ca.pem"));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].host, "registry.mesh");
  EXPECT_EQ(
      hosts[0].text,
      "# Written by arec registry-config containerd from node settings nodes.json: references to registry.mesh pull "
      "from the registry at 10.20.0.11:5000 (node n1).\n"
      "server = \"https://10.20.0.11:5000\"\n"
      "\n"
      "[host.\"https://10.20.0.11:5000\"]\n"
      "  capabilities = [\"pull\", \"resolve\"]\n"
      "  ca = \"/etc/arec/ca.pem\"\n");
}

TEST(RegistryConfig, ContainerdHostsOverHttpsWithoutACa) {
  const auto hosts = containerd_hosts(registry(settings()));
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].text.substr(hosts[0].text.find('\n') + 1),
            "server = \"https://10.20.0.11:5000\"\n"
            "\n"
            "[host.\"https://10.20.0.11:5000\"]\n"
            "  capabilities = [\"pull\", \"resolve\"]\n");
}

TEST(RegistryConfig, PlainHttpOnLoopbackAndForAnInsecureRegistryNode) {
  // n3 has no address and is self: loopback (rule 4). A CA means nothing without TLS, so none is written.
  const auto loopback = containerd_hosts(registry(settings("n3", "n3"), "/etc/arec/ca.pem"));
  ASSERT_EQ(loopback.size(), 1u);
  EXPECT_EQ(
      loopback[0].text,
      "# Written by arec registry-config containerd from node settings nodes.json: references to registry.mesh pull "
      "from the registry at 127.0.0.1:5002 (node n3).\n"
      "server = \"http://127.0.0.1:5002\"\n"
      "\n"
      "[host.\"http://127.0.0.1:5002\"]\n"
      "  capabilities = [\"pull\", \"resolve\"]\n");
  const auto insecure = registry(settings("n2"));
  EXPECT_EQ(insecure.scheme, RuntimeScheme::http);
  EXPECT_EQ(insecure.location, "10.20.0.12:5001");
  EXPECT_EQ(registry(settings("n1")).scheme, RuntimeScheme::https);
}

TEST(RegistryConfig, BridgesMapOldAddressesToTheCurrentOne) {
  const auto hosts =
      containerd_hosts(registry(settings("n2"), "", {"10.20.0.11:5000", "[fd00::1]:5000", "10.20.0.11:5000"}));
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].host, "registry.mesh");
  EXPECT_EQ(hosts[1].host, "10.20.0.11:5000");
  EXPECT_EQ(hosts[2].host, "[fd00::1]:5000");
  EXPECT_EQ(hosts[1].text,
            "# Written by arec registry-config containerd from node settings nodes.json: references to 10.20.0.11:5000 "
            "(an old address of the registry) pull from the registry at 10.20.0.12:5001 (node n2).\n"
            "server = \"http://10.20.0.12:5001\"\n"
            "\n"
            "[host.\"http://10.20.0.12:5001\"]\n"
            "  capabilities = [\"pull\", \"resolve\"]\n");
}

TEST(RegistryConfig, RegistriesConfDropIn) {
  EXPECT_EQ(registries_conf(registry(settings("n2"), "", {"10.20.0.11:5000"})),
            "# Written by arec registry-config podman from node settings nodes.json: references to registry.mesh pull "
            "from the registry at 10.20.0.12:5001 (node n2).\n"
            "[[registry]]\n"
            "prefix = \"registry.mesh\"\n"
            "location = \"10.20.0.12:5001\"\n"
            "insecure = true\n"
            "\n"
            "# Written by arec registry-config podman from node settings nodes.json: references to 10.20.0.11:5000 "
            "(an old address of the registry) pull from the registry at 10.20.0.12:5001 (node n2).\n"
            "[[registry]]\n"
            "prefix = \"10.20.0.11:5000\"\n"
            "location = \"10.20.0.12:5001\"\n"
            "insecure = true\n");
  EXPECT_EQ(registries_conf(registry(settings())),
            "# Written by arec registry-config podman from node settings nodes.json: references to registry.mesh pull "
            "from the registry at 10.20.0.11:5000 (node n1).\n"
            "[[registry]]\n"
            "prefix = \"registry.mesh\"\n"
            "location = \"10.20.0.11:5000\"\n"
            "insecure = false\n");
}

TEST(RegistryConfig, NoRegistryNameSaysWhatToAdd) {
  auto s = settings();
  s.registry_name.clear();
  EXPECT_EQ(refused(s, {}),
            "node settings nodes.json give no registry_name: add \"registry_name\": \"registry.mesh\" (a name of your "
            "choosing "
            "with a '.'), then compose again so that declarations name it");
}

TEST(RegistryConfig, ARegistryItsNodeCannotReachIsAnError) {
  // n3 holds it without an address and this is n1: rule 4.
  EXPECT_NE(refused(settings("n3"), {}).find("which has no address yet"), std::string::npos);
}

TEST(RegistryConfig, BadBridgesAreRefusedNamingThem) {
  for (const std::string bad : {"10.20.0.11", "registry", "10.20.0.11:0", "10.20.0.11:65536", "10.20.0.11:5000/mesh",
                                "http://10.20.0.11:5000", "fd00::1:5000", "", "a b:5000"}) {
    EXPECT_EQ(refused(settings(), {bad}),
              "--bridge \"" + bad + "\": not HOST:PORT (an old address of the registry, e.g. 10.20.0.11:5000)");
  }
  auto s = settings();
  s.registry_name = "registry.mesh:5000";
  EXPECT_EQ(refused(s, {"registry.mesh:5000"}),
            "--bridge \"registry.mesh:5000\": that is the registry_name, which is mapped already");
}

TEST(RegistryConfig, HostPortFollowsTheReferenceGrammar) {
  for (const std::string good :
       {"10.20.0.11:5000", "[fd00::1]:5000", "localhost:1", "n1.mesh:65535", "registry.mesh:443"}) {
    EXPECT_TRUE(is_host_port(good)) << good;
  }
  EXPECT_FALSE(is_host_port("localhost"));
  EXPECT_FALSE(is_host_port("n1:005000"));
}

TEST(RegistryConfig, TomlStringsAreEscaped) {
  EXPECT_EQ(toml_string(R"(/a "b"\c)"), R"("/a \"b\"\\c")");
  EXPECT_EQ(toml_string("x\ny\t"), R"("x\u000Ay\u0009")");
}

}  // namespace
}  // namespace arec
