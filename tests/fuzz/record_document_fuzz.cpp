// parse_record_document on any bytes (what a registry may list as a record artifact): a refusal names
// the document; what it accepts is a record that validate_record_fields accepts, written back by
// record_document as bytes it accepts as the same record, byte for byte the second time.
#include "oci/record.hpp"
#include "tests/fuzz/require.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using arec::fuzz::require;
  const auto record = arec::parse_record_document(arec::fuzz::as_text(data, size), "fuzz.json");
  if (!record) {
    require(record.error().message.starts_with("fuzz.json"), "a refusal names the document");
    return 0;
  }
  require(arec::validate_record_fields(*record, "fuzz.json").has_value(), "an accepted record has valid fields");
  const auto written = arec::record_document(*record);
  require(written.has_value(), "an accepted record can be written");
  const auto again = arec::parse_record_document(*written, "written.json");
  require(again.has_value(), "what record_document writes is accepted");
  require(arec::to_json(*again) == arec::to_json(*record), "a record round-trips through its document");
  require(arec::record_document(*again).value_or("") == *written, "a record's document is the same bytes every time");
  const auto artifact = arec::record_artifact(*record);
  require(artifact.has_value() && artifact->descriptor.digest == arec::digest_of(artifact->manifest),
          "an accepted record has an artifact");
  return 0;
}
