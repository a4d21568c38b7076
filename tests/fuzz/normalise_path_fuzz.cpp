// normalise_path on any bytes (tar entry names, bundle entries, --file destinations): what it accepts
// holds no "..", "." or empty component, starts and ends with no "/", is its own normal form, and is
// the same whether the name had a leading "/" or "./"; a name with a ".." component is refused.
#include <algorithm>

#include "tests/fuzz/require.hpp"
#include "util/paths.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using arec::fuzz::require;
  const auto name = arec::fuzz::as_text(data, size);
  const auto parts = arec::path_components(name);
  const bool climbs = std::find(parts.begin(), parts.end(), "..") != parts.end();
  const auto normal = arec::normalise_path(name);
  require(normal.has_value() != climbs, "a name is refused exactly when a component is \"..\"");
  if (!normal) return 0;
  const std::string& n = *normal;
  require(n.empty() || (n.front() != '/' && n.back() != '/'), "no leading or trailing slash");
  require(n.find("//") == std::string::npos, "no empty component");
  for (const auto& p : arec::path_components(n)) require(p != "." && p != "..", "no dot component");
  require(("/" + n) == "/" + arec::join_path(parts, parts.size()), "the components joined");
  require(arec::normalise_path(n) == normal, "the normal form is its own normal form");
  require(arec::normalise_path("/" + std::string(name)) == normal, "a leading slash changes nothing");
  require(arec::normalise_path("./" + std::string(name)) == normal, "a leading ./ changes nothing");
  return 0;
}
