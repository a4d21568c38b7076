// The OCI image model (image-spec v1.1): descriptors, manifests, configs and indexes, with JSON
// round-trips. Nothing here knows where an image lives.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/digest.hpp"
#include "util/error.hpp"

namespace arec {

namespace media_type {
inline constexpr std::string_view k_manifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr std::string_view k_index = "application/vnd.oci.image.index.v1+json";
inline constexpr std::string_view k_config = "application/vnd.oci.image.config.v1+json";
inline constexpr std::string_view k_layer_tar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr std::string_view k_layer_gzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr std::string_view k_layer_zstd = "application/vnd.oci.image.layer.v1.tar+zstd";
inline constexpr std::string_view k_empty = "application/vnd.oci.empty.v1+json";
// Docker's schema 2 types, accepted when reading a base image.
inline constexpr std::string_view k_docker_manifest = "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr std::string_view k_docker_list = "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr std::string_view k_docker_config = "application/vnd.docker.container.image.v1+json";
inline constexpr std::string_view k_docker_layer_gzip = "application/vnd.docker.image.rootfs.diff.tar.gzip";
inline constexpr std::string_view k_docker_layer_tar = "application/vnd.docker.image.rootfs.diff.tar";

// Whether a media type is an image manifest, or an image index, in OCI's or Docker schema 2's spelling.
constexpr bool is_manifest(std::string_view type) { return type == k_manifest || type == k_docker_manifest; }
constexpr bool is_index(std::string_view type) { return type == k_index || type == k_docker_list; }
}  // namespace media_type

// How a layer's tar is compressed, and the media type that says so.
enum class Compression { none, gzip, zstd };

Result<Compression> parse_compression(std::string_view text);
std::string_view compression_name(Compression compression);
std::string_view layer_media_type(Compression compression);

namespace annotation {
inline constexpr std::string_view k_ref_name = "org.opencontainers.image.ref.name";
inline constexpr std::string_view k_created = "org.opencontainers.image.created";
inline constexpr std::string_view k_revision = "org.opencontainers.image.revision";
inline constexpr std::string_view k_base_digest = "org.opencontainers.image.base.digest";
// On a layer's descriptor: where its files come from ("deb:NAME=VERSION:ARCH", "deb:merged",
// "no-package", "own-libraries", "files"; see recorder/layering.hpp). A record of one layer has none.
inline constexpr std::string_view k_layer_origin = "dev.arec.layer.origin";
}  // namespace annotation

using Annotations = std::map<std::string, std::string>;

struct Platform {
  std::string architecture;
  std::string os;
  std::string variant;
};

struct Descriptor {
  std::string media_type;
  Digest digest;
  std::int64_t size = 0;
  std::string artifact_type;
  std::vector<std::string> urls;
  Annotations annotations;
  std::optional<Platform> platform;

  // The value of an annotation, or empty when absent.
  std::string annotation(std::string_view key) const;
};

struct Manifest {
  std::string media_type{media_type::k_manifest};
  std::string artifact_type;
  Descriptor config;
  std::vector<Descriptor> layers;
  std::optional<Descriptor> subject;
  Annotations annotations;
};

struct Index {
  std::string media_type{media_type::k_index};
  std::vector<Descriptor> manifests;
  Annotations annotations;
};

struct HistoryEntry {
  std::string created;
  std::string created_by;
  std::string author;
  std::string comment;
  bool empty_layer = false;
};

// The image configuration. `config` (execution parameters) and any top-level keys arec does not model
// are kept as JSON so that a base image's settings survive being extended.
struct ImageConfig {
  std::string created;
  std::string author;
  std::string architecture;
  std::string os;
  std::string variant;
  nlohmann::json config = nlohmann::json::object();
  std::vector<Digest> diff_ids;
  std::vector<HistoryEntry> history;
  nlohmann::json unknown = nlohmann::json::object();
};

// The blobs a manifest names: its config, then its layers.
std::vector<Descriptor> blobs_of(const Manifest& manifest);

nlohmann::json to_json(const Descriptor& descriptor);
nlohmann::json to_json(const Manifest& manifest);
nlohmann::json to_json(const Index& index);
nlohmann::json to_json(const ImageConfig& config);

// Parsers name the JSON path of what is wrong; `what` names the document in messages.
Result<Descriptor> descriptor_from_json(const nlohmann::json& json, std::string_view what);
Result<Manifest> manifest_from_json(const nlohmann::json& json, std::string_view what);
Result<Index> index_from_json(const nlohmann::json& json, std::string_view what);
Result<ImageConfig> config_from_json(const nlohmann::json& json, std::string_view what);

// JSON nested deeper than this is refused when read: copying and writing a document recurse once per
// level, so a document nested a million deep would exhaust the stack.
inline constexpr int k_max_json_depth = 512;

// Why bytes are not a JSON document arec reads.
struct JsonProblem {
  std::string message;              // "malformed JSON", "a number is too large", "nested deeper than ..."
  std::optional<std::size_t> byte;  // a syntax error's nlohmann parse_error::byte (counted from 1)
};

// The deepest nesting of arrays and objects in `bytes` (strings skipped), measured before parsing:
// nlohmann's parser with a callback scans a parent array at the end of each of its objects, which
// makes a large index.json quadratic to read.
inline int json_depth(std::string_view bytes) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Parses `bytes` into `Json` (nlohmann::json or ordered_json) without throwing.
template <typename Json>
std::expected<Json, JsonProblem> read_json(std::string_view bytes) {
  try {
    // nlohmann counts the top-level value as depth 0.
    if (json_depth(bytes) - 1 > k_max_json_depth) {
      return std::unexpected(JsonProblem{"nested deeper than " + std::to_string(k_max_json_depth) + " levels", {}});
    }
    return Json::parse(bytes);
  } catch (const typename Json::parse_error& e) {
    return std::unexpected(JsonProblem{"malformed JSON", e.byte});
  } catch (const typename Json::out_of_range&) {
    // Valid JSON that nlohmann refuses as it parses: a number beyond a double (1e999).
    return std::unexpected(JsonProblem{"a number is too large", {}});
  }
}

// Parses bytes as JSON, with the byte offset of a syntax error in the message.
Result<nlohmann::json> parse_json(std::string_view bytes, std::string_view what);

// The path (".trust", ".nodes.n1.ports.registry", ".list[2].key") of the first key that appears twice
// in one object of the JSON `bytes`, or nothing. nlohmann keeps the last of duplicate keys without a
// word, so that a second block of settings would silently take the place of the first; JSON documents
// should have none (RFC 8259). One pass, no tree built.
std::optional<std::string> duplicate_json_key(std::string_view bytes);

// Parses a blob's bytes as one typed OCI document (Descriptor, Manifest, Index or ImageConfig): the
// JSON, then the document; both errors name `what`.
template <typename Document>
Result<Document> parse_document(std::string_view bytes, std::string_view what) {
  auto json = parse_json(bytes, what);
  if (!json) return fail(json.error());
  if constexpr (std::is_same_v<Document, Descriptor>) {
    return descriptor_from_json(*json, what);
  } else if constexpr (std::is_same_v<Document, Manifest>) {
    return manifest_from_json(*json, what);
  } else if constexpr (std::is_same_v<Document, Index>) {
    return index_from_json(*json, what);
  } else {
    static_assert(std::is_same_v<Document, ImageConfig>, "parse_document reads OCI documents only");
    return config_from_json(*json, what);
  }
}

// An image layout's `oci-layout` file, as arec writes it, and the check of one read (from a store or a
// bundle): a JSON object with imageLayoutVersion. `what` names the file in an error.
inline constexpr std::string_view k_oci_layout_document = R"({"imageLayoutVersion":"1.0.0"})";
Status check_oci_layout(std::string_view text, const std::string& what);

// The one serialisation arec writes: keys sorted, no insignificant whitespace, UTF-8. Equal content
// therefore has equal bytes and equal digests. Fails on strings that are not valid UTF-8.
Result<std::string> canonical_json(const nlohmann::json& json);

// The platform arec runs on, in OCI terms (GOARCH/GOOS names: amd64, arm64, linux).
Platform host_platform();
// "os/architecture[/variant]" (linux/arm64, linux/arm/v7), as --platform and OCI tools spell it.
Result<Platform> parse_platform(std::string_view text);
std::string platform_text(const Platform& platform);
// Whether an image of `candidate` is one for `wanted`, as an index is picked from: a manifest naming no
// variant serves one asked for with a variant (most arm64 images name none, v8 being the default); one
// naming another variant does not.
bool serves(const Platform& candidate, const Platform& wanted);

}  // namespace arec
