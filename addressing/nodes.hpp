// Node settings: "what the node was given". Which nodes exist, each node's private address (absent on
// a first node mid-genesis) and the ports it was given, and which node holds each service. Addresses
// are read from here where they are used (rule 3) and never cached across runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace arec {

// Node settings are a small document a person or a tool writes: read whole, up to this.
inline constexpr std::size_t k_max_settings_size = std::size_t{16} << 20;

struct Node {
  std::string address;                         // IPv4, IPv6 (no brackets) or DNS name; empty when none yet
  std::map<std::string, std::uint16_t> ports;  // service -> port the node was given
  bool insecure_registry = false;              // plain HTTP allowed to this node's registry
};

struct NodeSettings {
  std::string self;  // the node this machine is; may be empty
  // The registry's stable name, a reference domain ("registry.mesh"); empty when not given. With it,
  // image requests compose to this name and each node's container runtime maps it to the registry's
  // address (arec registry-config); without it, to the address.
  std::string registry_name;
  std::map<std::string, Node> nodes;
  std::map<std::string, std::string> services;  // service -> node that holds it
  std::string source;                           // the file read, or "built-in default"
  // "trust": {"keys": [...]}: the public keys whose signatures this mesh trusts (oci/trust), each
  // relative to the settings file as load() returns them.
  std::vector<std::string> trust_keys;

  // Parses and validates; every error names `source` and the JSON path of what is wrong.
  static Result<NodeSettings> parse(std::string_view text, std::string_view source);
  // One node `local`, no address, registry port 5000, holding the registry; self = local.
  static NodeSettings built_in();
  // Reads `path` (empty: the built-in default). `self` overrides the file's self when not empty.
  static Result<NodeSettings> load(const std::string& path, const std::string& self);

  // The settings as JSON in the file format (keys sorted), e.g. for writing a moved registry.
  std::string to_json_text() const;
};

// True for a service name as requests spell it: [a-z0-9][a-z0-9-]*
bool is_service_name(std::string_view name);

// True for a name that a reference reads as its domain: it contains a '.' or a ':', or is localhost
// ("registry.mesh", "registry.mesh:5000", "10.0.0.5:5000", "[::1]:5000").
bool is_reference_domain(std::string_view name);

// Where a service is, and how that was decided.
struct Resolution {
  enum class AddressFrom { node, loopback };

  std::string service;
  std::string node;
  std::string address;                // the node's address, or 127.0.0.1 by the loopback rule
  std::optional<std::uint16_t> port;  // empty: the node was given no port for this service (rule 5)
  AddressFrom address_from = AddressFrom::node;
  bool insecure_registry = false;

  // The address as it goes before ":port" (IPv6 in brackets).
  std::string host() const;
  // host:port; an error naming node and service when no port was given.
  Result<std::string> endpoint() const;
  // True for 127.0.0.0/8, ::1 and localhost.
  bool is_loopback() const;
};

// Resolves the node holding `service`, its address and the port it was given (rules 3-5). A holder
// without an address resolves to 127.0.0.1 only when it is `self`; otherwise the error names both nodes.
Result<Resolution> resolve(const NodeSettings& settings, std::string_view service);

// The port the node holding `service` was given for it; empty when it was given none (rule 5). A port
// needs no address, so this answers even while the holder has none.
Result<std::optional<std::uint16_t>> given_port(const NodeSettings& settings, std::string_view service);

// An address as it goes before ":port" in a URL or reference: an IPv6 address in brackets.
std::string host_for_port(std::string_view address);

// True for 127.0.0.0/8, ::1 (with or without brackets) and localhost.
bool is_loopback_host(std::string_view host);

}  // namespace arec
