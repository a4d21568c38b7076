// Reference::parse on any text: a reference that parses prints a canonical form that parses to the same
// reference and prints the same again.
#include "registry-client/reference.hpp"
#include "tests/fuzz/require.hpp"

using arec::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = arec::fuzz::as_text(data, size);
  (void)arec::is_tag(text);
  const auto ref = arec::Reference::parse(text);
  if (!ref) {
    require(!ref.error().message.empty(), "a refused reference says why");
    return 0;
  }
  require(!ref->path.empty() && ref->segments() >= 1, "a reference has a path");
  const auto canonical = ref->str();
  const auto again = arec::Reference::parse(canonical);
  require(again.has_value(), "the canonical form parses");
  require(again->domain == ref->domain && again->path == ref->path && again->tag == ref->tag &&
              again->digest == ref->digest,
          "the canonical form parses to the same reference");
  require(again->str() == canonical, "the canonical form is a fixed point");
  const auto port = ref->port();
  require(ref->host() + (port.empty() ? "" : ":" + port) == ref->domain, "host and port make up the domain");
  return 0;
}
