// The registry as a node's container runtime reaches it: the settings' registry_name (the domain that
// composed references name) mapped to the address the settings resolve for this node, written in the
// runtimes' own formats. Pure: the texts are made here, written by the caller.
//
//   containerd   DIR/<host>/hosts.toml for each host mapped (config_path, ctr --hosts-dir)
//   podman       a registries.conf drop-in (podman, CRI-O, buildah, skopeo)
//
// No signature policy: neither runtime verifies the Sigstore bundles arec writes (docs/signing-nodes.md).
//
// A bridge maps an old address of the registry (a reference composed before registry_name was given,
// or before a move) to the current one too, so that what was composed then still pulls by digest.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "addressing/nodes.hpp"
#include "util/error.hpp"

namespace arec {

// Whether the runtime speaks HTTPS to the registry; the rule push follows: plain HTTP to a registry on
// loopback or on a node marked insecure_registry, HTTPS everywhere else.
enum class RuntimeScheme { https, http };

struct RuntimeRegistry {
  std::string name;      // the registry_name: the domain references name
  std::string location;  // host:port the settings resolve for this node
  std::string node;      // the node holding the registry
  RuntimeScheme scheme = RuntimeScheme::https;
  std::string ca_file;               // a CA to trust for it (absolute), written for HTTPS only; may be empty
  std::vector<std::string> bridges;  // old host:port addresses mapped to `location` too, in order
  std::string settings;              // the node settings it was read from, named in the files' headers
};

// What the settings give for `self`: an error (bad input) naming the settings when they give no
// registry_name, saying what to add; a bridge that is not HOST:PORT, or that is the registry's name, is
// refused naming it. Bridges given twice are written once.
Result<RuntimeRegistry> runtime_registry(const NodeSettings& settings, std::string ca_file,
                                         const std::vector<std::string>& bridges);

// True for HOST:PORT as a reference's domain spells it: a DNS name, IPv4 or [IPv6], and a port 1-65535.
bool is_host_port(std::string_view text);

// One containerd hosts file: DIR/<host>/hosts.toml.
struct HostsFile {
  std::string host;  // the directory under DIR, named as references name the registry
  std::string text;  // the hosts.toml
};

// The registry's name first, then each bridge.
std::vector<HostsFile> containerd_hosts(const RuntimeRegistry& registry);

// The registries.conf drop-in: one [[registry]] for the name, then one for each bridge.
std::string registries_conf(const RuntimeRegistry& registry);

// A TOML basic string, quoted and escaped.
std::string toml_string(std::string_view text);

}  // namespace arec
