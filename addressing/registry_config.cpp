#include "addressing/registry_config.hpp"

#include <algorithm>
#include <cstdio>

#include "addressing/reference.hpp"

namespace arec {

namespace {

std::string url(const RuntimeRegistry& registry) {
  return (registry.scheme == RuntimeScheme::http ? "http://" : "https://") + registry.location;
}

// The first lines of every file: who wrote it, from what, and what it maps.
std::string header(const RuntimeRegistry& registry, std::string_view format, std::string_view host) {
  const bool bridge = host != registry.name;
  return "# Written by arec registry-config " + std::string(format) + " from node settings " + registry.settings +
         ": references to " + std::string(host) + (bridge ? " (an old address of the registry)" : "") +
         " pull from the registry at " + registry.location + " (node " + registry.node + ").\n";
}

std::string hosts_toml(const RuntimeRegistry& registry, std::string_view host) {
  const std::string server = url(registry);
  std::string out = header(registry, "containerd", host);
  out += "server = " + toml_string(server) + "\n\n";
  out += "[host." + toml_string(server) + "]\n";
  out += "  capabilities = [\"pull\", \"resolve\"]\n";
  if (registry.scheme == RuntimeScheme::https && !registry.ca_file.empty())
    out += "  ca = " + toml_string(registry.ca_file) + "\n";
  return out;
}

}  // namespace

bool is_host_port(std::string_view text) {
  if (!is_reference_domain(text)) return false;
  const auto ref = Reference::parse(std::string(text) + "/m/n");
  const std::string port = ref->port();
  if (port.empty() || port.size() > 5) return false;
  const auto number = std::stoul(port);
  return number >= 1 && number <= 65535;
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Result<RuntimeRegistry> runtime_registry(const NodeSettings& settings, std::string ca_file,
                                         const std::vector<std::string>& bridges) {
  if (settings.registry_name.empty()) {
    return fail_input(
        "node settings " + settings.source +
        " give no registry_name: add \"registry_name\": \"registry.mesh\" (a name of your choosing with a '.'), "
        "then compose again so that declarations name it");
  }
  auto resolution = resolve(settings, "registry");
  if (!resolution) return fail(resolution.error());
  auto endpoint = resolution->endpoint();
  if (!endpoint) return fail(endpoint.error());
  RuntimeRegistry out;
  out.name = settings.registry_name;
  out.location = *endpoint;
  out.node = resolution->node;
  out.scheme = resolution->is_loopback() || resolution->insecure_registry ? RuntimeScheme::http : RuntimeScheme::https;
  out.ca_file = std::move(ca_file);
  out.settings = settings.source;
  for (const auto& bridge : bridges) {
    if (!is_host_port(bridge)) {
      return fail_input("--bridge \"" + bridge +
                        "\": not HOST:PORT (an old address of the registry, e.g. 10.20.0.11:5000)");
    }
    if (bridge == out.name)
      return fail_input("--bridge \"" + bridge + "\": that is the registry_name, which is mapped already");
    if (std::ranges::find(out.bridges, bridge) == out.bridges.end()) out.bridges.push_back(bridge);
  }
  return out;
}

std::vector<HostsFile> containerd_hosts(const RuntimeRegistry& registry) {
  std::vector<HostsFile> out;
  out.push_back({registry.name, hosts_toml(registry, registry.name)});
  for (const auto& bridge : registry.bridges) out.push_back({bridge, hosts_toml(registry, bridge)});
  return out;
}

std::string registries_conf(const RuntimeRegistry& registry) {
  std::string out;
  const auto entry = [&](const std::string& prefix) {
    out += header(registry, "podman", prefix);
    out += "[[registry]]\n";
    out += "prefix = " + toml_string(prefix) + "\n";
    out += "location = " + toml_string(registry.location) + "\n";
    out += std::string("insecure = ") + (registry.scheme == RuntimeScheme::http ? "true" : "false") + "\n";
  };
  entry(registry.name);
  for (const auto& bridge : registry.bridges) {
    out += "\n";
    entry(bridge);
  }
  return out;
}

}  // namespace arec
