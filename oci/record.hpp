// A record names an artifact by module, name and digest, plus facts that hold no address (rule 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "util/error.hpp"

namespace arec {

namespace annotation {
inline constexpr std::string_view k_module = "dev.arec.module";
inline constexpr std::string_view k_name = "dev.arec.name";
inline constexpr std::string_view k_target = "dev.arec.target";
inline constexpr std::string_view k_config = "dev.arec.config";
// On the index.json entry of a referrer (an SBOM): the digest of the image manifest it refers to.
// Such an entry is not a record, and is kept while its subject is.
inline constexpr std::string_view k_subject = "dev.arec.subject";
}  // namespace annotation

struct Record {
  std::string module;
  std::string name;
  Descriptor manifest;      // digest, size and media type of the image manifest
  std::string recorded;     // RFC 3339 UTC time the record was made
  std::string target;       // the build target, when known
  std::string config;       // the build configuration (Debug, Release), when known
  std::string revision;     // source revision, when recorded inside a git work tree
  std::string base_digest;  // the manifest digest of the base image, when there is one

  std::string repository() const { return module + "/" + name; }
  // "module/name@sha256:..." — the identity arec prints.
  std::string identity() const { return repository() + "@" + manifest.digest.str(); }
};

// True for one OCI repository path component: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
bool is_path_component(std::string_view text);

// Checks a module or name; `what` is "module" or "name".
Status validate_record_part(std::string_view value, std::string_view what);

// Whether `text` is an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)), each field in
// its range (a day the month has; a leap second :60 allowed).
bool is_rfc3339(std::string_view text);
// The seconds since the epoch of such a time (its fraction dropped); nothing for any other text.
std::optional<std::int64_t> rfc3339_seconds(std::string_view text);

// How far ahead of this machine's clock a record's time may lie. Builders' clocks disagree by seconds
// when kept by NTP; a record further ahead is refused by pull, and no push leaves `latest` to it, since
// by the newest-time rule it would stay there for ever.
inline constexpr std::int64_t k_clock_tolerance_seconds = 300;

// Checks the fields of a record that came from outside (a bundle) as arec's own are made: module and
// name, `recorded` an RFC 3339 time, `base` empty or a digest, and no control character in target,
// config or revision. `what` names where it came from.
Status validate_record_fields(const Record& record, std::string_view what);

// The index.json descriptor of a record: the manifest descriptor plus address-free annotations.
// Latest::yes adds org.opencontainers.image.ref.name = module/name, which tools look images up by.
enum class Latest { no, yes };
Descriptor to_descriptor(const Record& record, Latest latest);
// The record behind an index.json descriptor, or nothing for descriptors arec did not write.
std::optional<Record> record_from_descriptor(const Descriptor& descriptor);

nlohmann::json to_json(const Record& record);

// ---- The record document: a record as it travels through a registry, an OCI artifact whose subject is
// the record's image manifest (a referrer, like the SBOM), so that a machine that did not build can
// pull the record with the image. It holds the fields of to_json(Record) and nothing else: no address,
// host, port or registry name (rule 1).

namespace media_type {
inline constexpr std::string_view k_arec_record = "application/vnd.dev.arec.record.v1+json";
}  // namespace media_type

// A record document is a few hundred bytes; anything much larger is not one, and is refused before
// it is read whole.
inline constexpr std::size_t k_max_record_document = 64 * 1024;

// The document of `record`: canonical JSON of to_json(record), so that the same record always gives
// the same bytes and digest, and pushing it again costs no write.
Result<std::string> record_document(const Record& record);

// Reads a record document from outside (a registry): a JSON object of exactly the fields
// record_document writes, each of its type, checked as validate_record_fields checks a bundle's. Any
// other field, a missing one or a document above k_max_record_document is refused (exit 2), the error
// starting with `what`.
Result<Record> parse_record_document(std::string_view bytes, std::string_view what);

// The artifact of a record as it is pushed: the document as its one layer, the empty config, the
// record's manifest as subject. Made the same from the same record, by push and by verify alike.
struct RecordArtifact {
  std::string document;
  Descriptor layer;       // the document's descriptor
  std::string manifest;   // the artifact manifest's bytes
  Descriptor descriptor;  // the manifest's descriptor, with its artifactType
};
Result<RecordArtifact> record_artifact(const Record& record);

// ---- Configurations: which record "the latest of module/name" means (ARCHITECTURE.md, "Configurations")

// The configuration a project builds when none is named (CMake's usual release build), unless
// AREC_DEFAULT_CONFIG or --default-config say otherwise.
inline constexpr std::string_view k_default_config = "Release";

// True for a build configuration's name as arec takes it: 1 to 64 of [A-Za-z0-9_] (what CMake's
// $<CONFIG:...> compares), so that it is one word in a request and a tag (latest-<name>) from it.
bool is_config_name(std::string_view text);

// What the command line or a request asks for.
struct ConfigChoice {
  std::optional<std::string> asked;              // --config, or a request's ?config=
  std::string default_config{k_default_config};  // used when several are recorded and none was asked
};

struct ChosenConfig {
  // The configuration whose newest record is meant; nothing when any record is (one configuration, or
  // none, recorded: the latest, as before configurations were told apart).
  std::optional<std::string> config;
  std::string note;  // when the default was used among several: says so, for the caller to show
};

// Which configuration `repository` means, given the configurations it has records of (`recorded`,
// "" for records that name none). Asked for: that one, else the records naming none (they serve every
// configuration), else an error naming those recorded. Not asked
// for: any, where one is recorded; the default, where several are (with a note); an error where
// several are and the default is not among them. Never "whichever was built last".
Result<ChosenConfig> choose_config(std::string_view repository, const std::vector<std::string>& recorded,
                                   const ConfigChoice& choice);

// The newest of `history` (oldest first) in the chosen configuration, or null.
const Record* newest_of(const std::vector<Record>& history, const ChosenConfig& chosen);

// The configurations of `history`, each once, sorted.
std::vector<std::string> configs_of(const std::vector<Record>& history);

// The registry tag that names the latest record of `config` in a push: `latest` for the default
// configuration (or the only one recorded), `latest-<config in lower case>` for the others.
std::string latest_tag(std::string_view config, const std::vector<std::string>& recorded,
                       std::string_view default_config);

// The current time as RFC 3339 UTC ("2026-12-02T11:39:53Z").
std::string now_rfc3339();
// Seconds since the epoch as RFC 3339 UTC.
std::string rfc3339(std::int64_t seconds);

}  // namespace arec
