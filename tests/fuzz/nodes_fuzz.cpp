// NodeSettings::parse on any text: settings that parse are written back (to_json_text) as settings that
// parse to the same thing, and every service they name resolves or says why not.
#include "addressing/nodes.hpp"
#include "tests/fuzz/require.hpp"

using arec::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto settings = arec::NodeSettings::parse(arec::fuzz::as_text(data, size), "nodes.json");
  if (!settings) {
    require(settings.error().message.starts_with("node settings nodes.json"), "an error names the settings");
    return 0;
  }
  const auto written = settings->to_json_text();
  const auto again = arec::NodeSettings::parse(written, "nodes.json");
  require(again.has_value(), "written settings parse");
  require(again->to_json_text() == written, "written settings are a fixed point");
  require(again->self == settings->self && again->registry_name == settings->registry_name &&
              again->services == settings->services && again->nodes.size() == settings->nodes.size(),
          "written settings hold the same nodes and services");
  for (const auto& [service, holder] : settings->services) {
    const auto resolution = arec::resolve(*settings, service);
    const auto port = arec::given_port(*settings, service);
    require(port.has_value(), "a service that is held has a port or none");
    if (!resolution) {
      require(!resolution.error().message.empty(), "an unresolved service says why");
      continue;
    }
    require(resolution->node == holder && resolution->port == *port, "resolve agrees with the settings");
    require(!resolution->address.empty(), "a resolved service has an address");
    if (resolution->port) require(resolution->endpoint().has_value(), "a service with a port has an endpoint");
  }
  return 0;
}
