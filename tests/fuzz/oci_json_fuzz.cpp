// parse_json and the OCI model's readers on any bytes: canonical JSON round-trips byte for byte, and
// whatever a reader accepts is written back (to_json) as JSON the reader accepts as the same thing.
#include "oci/oci.hpp"
#include "oci/record.hpp"
#include "tests/fuzz/require.hpp"

namespace {

using arec::fuzz::require;

std::string canonical(const nlohmann::json& json) {
  auto text = arec::canonical_json(json);
  require(text.has_value(), "parsed JSON has a canonical form");
  return *text;
}

// from(to_json(x)) is x again, compared by canonical bytes.
template <typename Read>
void round_trip(const nlohmann::json& json, Read read) {
  const auto value = read(json, "fuzz.json");
  if (!value) {
    require(value.error().message.starts_with("fuzz.json"), "an error names the document");
    return;
  }
  const auto written = canonical(to_json(*value));
  const auto again = read(to_json(*value), "fuzz.json");
  require(again.has_value(), "what a reader accepted is accepted again once written");
  require(canonical(to_json(*again)) == written, "a model value round-trips");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto json = arec::parse_json(arec::fuzz::as_text(data, size), "fuzz.json");
  if (!json) {
    require(json.error().message.starts_with("fuzz.json: "), "a refused document names itself");
    return 0;
  }
  const auto text = canonical(*json);
  const auto again = arec::parse_json(text, "canonical.json");
  require(again.has_value(), "canonical JSON parses");
  require(canonical(*again) == text, "canonical JSON round-trips byte for byte");

  round_trip(*json, arec::descriptor_from_json);
  round_trip(*json, arec::manifest_from_json);
  round_trip(*json, arec::config_from_json);
  round_trip(*json, arec::index_from_json);
  if (const auto index = arec::index_from_json(*json, "fuzz.json")) {
    for (const auto& descriptor : index->manifests) {
      const auto record = arec::record_from_descriptor(descriptor);
      if (!record) continue;
      const auto back = arec::record_from_descriptor(arec::to_descriptor(*record, arec::Latest::yes));
      require(back.has_value() && back->identity() == record->identity(),
              "a record round-trips through its descriptor");
    }
  }
  return 0;
}
