// Reference::parse on any text: a reference that parses prints a canonical form that parses to the same
// reference and prints the same again. scan_references on the same text: each reference it finds lies
// in the text, in order and apart, at the line and column it says, and parses there as what it found.
#include <algorithm>

#include "addressing/reference.hpp"
#include "tests/fuzz/require.hpp"

using arec::fuzz::require;

namespace {

void check_scan(std::string_view text) {
  std::size_t previous_end = 0;
  for (const auto& found : arec::scan_references(text)) {
    require(found.offset >= previous_end && found.offset + found.length <= text.size(), "in the text, in order, apart");
    previous_end = found.offset + found.length;
    const auto before = text.substr(0, found.offset);
    const auto newline = before.rfind('\n');
    require(found.line == 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')),
            "the line counts newlines");
    require(found.column == (newline == std::string_view::npos ? found.offset + 1 : found.offset - newline),
            "the column");
    const auto again = arec::Reference::parse(text.substr(found.offset, found.length));
    require(again.has_value() && again->str() == found.reference.str(), "the text parses as the reference found");
    require(!found.reference.domain.empty(), "a reference found in a text is a full one");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = arec::fuzz::as_text(data, size);
  check_scan(text);
  arec::fuzz::require_linear(
      text, [](std::string_view t) { (void)arec::scan_references(t); }, "the reference scanner is linear");
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
