#include "addressing/nodes.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "addressing/reference.hpp"
#include "addressing/text_position.hpp"
#include "oci/oci.hpp"
#include "util/fs.hpp"

namespace arec {

namespace {

Error settings_error(std::string_view source, std::string_view path, std::string_view problem) {
  return Error::input("node settings " + std::string(source) + ": " + std::string(path) + ": " + std::string(problem));
}

bool is_dns_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t pos = 0;
  while (pos <= name.size()) {
    const auto end = std::min(name.find('.', pos), name.size());
    const auto label = name.substr(pos, end - pos);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    if (!std::all_of(label.begin(), label.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; })) {
      return false;
    }
    pos = end + 1;
  }
  return true;
}

bool is_ipv6(std::string_view text) {
  in6_addr out{};
  return inet_pton(AF_INET6, std::string(text).c_str(), &out) == 1;
}

bool is_ipv4(std::string_view text) {
  in_addr out{};
  return inet_pton(AF_INET, std::string(text).c_str(), &out) == 1;
}

std::string type_name(const nlohmann::json& value) { return value.is_null() ? "null" : value.type_name(); }

Status parse_node(const std::string& name, const nlohmann::json& value, std::string_view source, Node& node) {
  const std::string path = ".nodes." + name;
  if (!value.is_object()) return fail(settings_error(source, path, "must be an object, got " + type_name(value)));
  for (const auto& [key, field] : value.items()) {
    const std::string field_path = path + "." + key;
    if (key == "address") {
      if (field.is_null()) continue;
      if (!field.is_string())
        return fail(settings_error(source, field_path, "must be a string, got " + type_name(field)));
      const auto address = field.get<std::string>();
      if (address.empty())
        return fail(settings_error(source, field_path, "is empty; leave it out while the node has no address"));
      if (address.front() == '[')
        return fail(settings_error(source, field_path, "\"" + address + "\": write IPv6 addresses without brackets"));
      if (!is_ipv4(address) && !is_ipv6(address) && !is_dns_name(address)) {
        return fail(settings_error(source, field_path, "\"" + address + "\" is not an IPv4, IPv6 address or DNS name"));
      }
      node.address = address;
    } else if (key == "ports") {
      if (!field.is_object())
        return fail(settings_error(source, field_path, "must be an object, got " + type_name(field)));
      for (const auto& [service, port] : field.items()) {
        const std::string port_path = field_path + "." + service;
        if (!is_service_name(service)) {
          return fail(
              settings_error(source, port_path, "\"" + service + "\" is not a service name ([a-z0-9][a-z0-9-]*)"));
        }
        if (!port.is_number_integer()) {
          return fail(settings_error(source, port_path, port.dump() + " is not a port (an integer 1-65535)"));
        }
        const auto number = port.get<std::int64_t>();
        if (number < 1 || number > 65535) {
          return fail(settings_error(source, port_path, port.dump() + " is not a port (1-65535)"));
        }
        node.ports[service] = static_cast<std::uint16_t>(number);
      }
    } else if (key == "insecure_registry") {
      if (!field.is_boolean())
        return fail(settings_error(source, field_path, "must be true or false, got " + type_name(field)));
      node.insecure_registry = field.get<bool>();
    } else {
      return fail(settings_error(source, field_path, "unknown key (expected address, ports, insecure_registry)"));
    }
  }
  return {};
}

}  // namespace

bool is_service_name(std::string_view name) {
  if (name.empty() ||
      !(std::islower(static_cast<unsigned char>(name[0])) || std::isdigit(static_cast<unsigned char>(name[0])))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

bool is_reference_domain(std::string_view name) {
  if (name.empty()) return false;
  // The domain of "NAME/m/n" is NAME only when NAME is one: a '.' or ':' in it, or localhost.
  auto ref = Reference::parse(std::string(name) + "/m/n");
  return ref && ref->domain == name;
}

bool is_loopback_host(std::string_view host) {
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, std::string(host).c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

Result<NodeSettings> NodeSettings::parse(std::string_view text, std::string_view source) {
  auto parsed = read_json<nlohmann::json>(text);
  if (!parsed) return fail_input("node settings " + std::string(source) + ": " + json_problem(text, parsed.error()));
  // The parser keeps the last of two keys: a second "trust" block would turn the first off unseen.
  if (const auto twice = duplicate_json_key(text))
    return fail(settings_error(source, *twice, "appears twice in its object; keep one"));
  const nlohmann::json& doc = *parsed;
  if (!doc.is_object()) return fail(settings_error(source, ".", "must be an object, got " + type_name(doc)));
  NodeSettings settings;
  settings.source = std::string(source);
  for (const auto& [key, value] : doc.items()) {
    if (key == "self") {
      if (!value.is_string()) return fail(settings_error(source, ".self", "must be a string, got " + type_name(value)));
      settings.self = value.get<std::string>();
    } else if (key == "registry_name") {
      if (!value.is_string())
        return fail(settings_error(source, ".registry_name", "must be a string, got " + type_name(value)));
      settings.registry_name = value.get<std::string>();
      if (!is_reference_domain(settings.registry_name)) {
        return fail(
            settings_error(source, ".registry_name",
                           "\"" + settings.registry_name +
                               "\" is not a registry name that references read as their domain (a DNS name with a '.', "
                               "optionally :PORT, e.g. \"registry.mesh\", or localhost)"));
      }
    } else if (key == "nodes") {
      if (!value.is_object())
        return fail(settings_error(source, ".nodes", "must be an object, got " + type_name(value)));
      for (const auto& [name, node_value] : value.items()) {
        if (name.empty()) return fail(settings_error(source, ".nodes", "a node name is empty"));
        Node node;
        if (auto s = parse_node(name, node_value, source, node); !s) return fail(s.error());
        settings.nodes.emplace(name, std::move(node));
      }
    } else if (key == "services") {
      if (!value.is_object())
        return fail(settings_error(source, ".services", "must be an object, got " + type_name(value)));
      for (const auto& [service, holder] : value.items()) {
        const std::string path = ".services." + service;
        if (!is_service_name(service)) {
          return fail(settings_error(source, path, "\"" + service + "\" is not a service name ([a-z0-9][a-z0-9-]*)"));
        }
        if (!holder.is_string())
          return fail(settings_error(source, path, "must name a node, got " + type_name(holder)));
        settings.services[service] = holder.get<std::string>();
      }
    } else if (key == "trust") {
      if (!value.is_object() || value.size() != 1 || !value.contains("keys") || !value["keys"].is_array())
        return fail(settings_error(source, ".trust", "must be an object {\"keys\": [FILE, ...]}"));
      // Trust declared is trust meant: an empty list would check nothing without a word.
      if (value["keys"].empty())
        return fail(settings_error(source, ".trust.keys",
                                   "names no key; name the team's public key files, or "
                                   "remove \"trust\" to check no signature"));
      for (const auto& file : value["keys"]) {
        if (!file.is_string() || file.get<std::string>().empty())
          return fail(settings_error(source, ".trust.keys", "each must be a file name, got " + type_name(file)));
        settings.trust_keys.push_back(file.get<std::string>());
      }
    } else {
      return fail(
          settings_error(source, "." + key, "unknown key (expected self, registry_name, nodes, services, trust)"));
    }
  }
  for (const auto& [service, holder] : settings.services) {
    if (!settings.nodes.contains(holder)) {
      return fail(
          settings_error(source, ".services." + service, "names node \"" + holder + "\", which is not in .nodes"));
    }
  }
  if (!settings.self.empty() && !settings.nodes.contains(settings.self)) {
    return fail(settings_error(source, ".self", "names node \"" + settings.self + "\", which is not in .nodes"));
  }
  return settings;
}

NodeSettings NodeSettings::built_in() {
  NodeSettings settings;
  settings.self = "local";
  settings.nodes["local"].ports["registry"] = 5000;
  settings.services["registry"] = "local";
  settings.source = "built-in default";
  return settings;
}

Result<NodeSettings> NodeSettings::load(const std::string& path, const std::string& self) {
  NodeSettings settings = NodeSettings::built_in();
  if (!path.empty()) {
    auto text = fs::read_file(path, k_max_settings_size);
    if (!text) return fail(std::move(text.error()).context("reading node settings"));
    auto parsed = parse(*text, path);
    if (!parsed) return fail(parsed.error());
    settings = std::move(*parsed);
    // A mesh ships its settings with its keys beside them.
    for (auto& key : settings.trust_keys) key = (fs::Path(path).parent_path() / key).lexically_normal().string();
  }
  if (!self.empty()) {
    if (!settings.nodes.contains(self)) {
      return fail_input("--self \"" + self + "\": no such node in node settings " + settings.source);
    }
    settings.self = self;
  }
  return settings;
}

std::string NodeSettings::to_json_text() const {
  nlohmann::json doc = nlohmann::json::object();
  if (!self.empty()) doc["self"] = self;
  if (!registry_name.empty()) doc["registry_name"] = registry_name;
  doc["nodes"] = nlohmann::json::object();
  for (const auto& [name, node] : nodes) {
    nlohmann::json n = nlohmann::json::object();
    if (!node.address.empty()) n["address"] = node.address;
    n["ports"] = nlohmann::json::object();
    for (const auto& [service, port] : node.ports) n["ports"][service] = port;
    if (node.insecure_registry) n["insecure_registry"] = true;
    doc["nodes"][name] = std::move(n);
  }
  doc["services"] = services;
  if (!trust_keys.empty()) doc["trust"] = {{"keys", trust_keys}};
  return doc.dump(2) + "\n";
}

std::string host_for_port(std::string_view address) {
  return address.find(':') != std::string_view::npos ? "[" + std::string(address) + "]" : std::string(address);
}

std::string Resolution::host() const { return host_for_port(address); }

Result<std::string> Resolution::endpoint() const {
  if (!port) return fail_input("service " + service + ": node " + node + " was given no port for " + service);
  return host() + ":" + std::to_string(*port);
}

bool Resolution::is_loopback() const { return is_loopback_host(address); }

namespace {

// The name of the node that holds `service`, or the error saying none does.
Result<std::string> holder_of(const NodeSettings& settings, std::string_view service) {
  const auto held = settings.services.find(std::string(service));
  if (held == settings.services.end()) {
    return fail_input("service " + std::string(service) + ": no node holds it in node settings " + settings.source +
                      " (add \"" + std::string(service) + "\": NODE under \"services\")");
  }
  return held->second;
}

}  // namespace

Result<std::optional<std::uint16_t>> given_port(const NodeSettings& settings, std::string_view service) {
  auto holder = holder_of(settings, service);
  if (!holder) return fail(holder.error());
  const Node& node = settings.nodes.at(*holder);
  if (const auto port = node.ports.find(std::string(service)); port != node.ports.end()) return port->second;
  return std::nullopt;
}

Result<Resolution> resolve(const NodeSettings& settings, std::string_view service) {
  auto holder = holder_of(settings, service);
  if (!holder) return fail(holder.error());
  const Node& node = settings.nodes.at(*holder);
  Resolution r;
  r.service = std::string(service);
  r.node = *holder;
  r.insecure_registry = node.insecure_registry;
  if (const auto port = node.ports.find(r.service); port != node.ports.end()) r.port = port->second;
  if (!node.address.empty()) {
    r.address = node.address;
  } else if (r.node == settings.self) {
    // Rule 4: only the holder itself may reach a node without an address, by loopback.
    r.address = "127.0.0.1";
    r.address_from = Resolution::AddressFrom::loopback;
  } else {
    return fail_input(
        "service " + r.service + " is held by node " + r.node + ", which has no address yet, and this is " +
        (settings.self.empty() ? std::string("not that node (self is not set)") : "node " + settings.self) + "; give " +
        r.node + " an address in " + settings.source + ", or compose on " + r.node);
  }
  return r;
}

}  // namespace arec
