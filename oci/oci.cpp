#include "oci/oci.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <set>

#include "oci/machine.hpp"

namespace arec {

Result<Compression> parse_compression(std::string_view text) {
  if (text == "gzip") return Compression::gzip;
  if (text == "zstd") return Compression::zstd;
  if (text == "none") return Compression::none;
  return fail_input("compression \"" + std::string(text) + "\": expected gzip, zstd or none");
}

std::string_view compression_name(Compression compression) {
  switch (compression) {
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    case Compression::none: break;
  }
  return "none";
}

std::string_view layer_media_type(Compression compression) {
  switch (compression) {
    case Compression::gzip: return media_type::k_layer_gzip;
    case Compression::zstd: return media_type::k_layer_zstd;
    case Compression::none: break;
  }
  return media_type::k_layer_tar;
}

namespace {

Error json_error(std::string_view what, std::string_view path, std::string_view problem) {
  return Error::input(std::string(what) + ": " + std::string(path) + ": " + std::string(problem));
}

// Reads an optional string member; absent is empty.
Result<std::string> optional_string(const nlohmann::json& object, std::string_view what, const std::string& path,
                                    const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return fail(json_error(what, path + "." + key, "must be a string"));
  return it->get<std::string>();
}

Result<std::string> required_string(const nlohmann::json& object, std::string_view what, const std::string& path,
                                    const char* key) {
  if (!object.contains(key)) return fail(json_error(what, path + "." + key, "is required"));
  return optional_string(object, what, path, key);
}

Result<Annotations> annotations_from(const nlohmann::json& object, std::string_view what, const std::string& path) {
  Annotations annotations;
  const auto it = object.find("annotations");
  if (it == object.end() || it->is_null()) return annotations;
  if (!it->is_object()) return fail(json_error(what, path + ".annotations", "must be an object"));
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) {
      return fail(json_error(what, path + ".annotations." + key, "must be a string"));
    }
    annotations.emplace(key, value.get<std::string>());
  }
  return annotations;
}

Result<Descriptor> descriptor_at(const nlohmann::json& json_value, std::string_view what, const std::string& path) {
  if (!json_value.is_object()) return fail(json_error(what, path, "must be an object"));
  Descriptor d;
  auto media = required_string(json_value, what, path, "mediaType");
  if (!media) return fail(media.error());
  d.media_type = *media;
  auto digest_text = required_string(json_value, what, path, "digest");
  if (!digest_text) return fail(digest_text.error());
  auto digest = Digest::parse(*digest_text);
  if (!digest) return fail(json_error(what, path + ".digest", digest.error().message));
  d.digest = *digest;
  const auto size = json_value.find("size");
  if (size == json_value.end() || !size->is_number_integer() || size->get<std::int64_t>() < 0) {
    return fail(json_error(what, path + ".size", "must be a non-negative integer"));
  }
  d.size = size->get<std::int64_t>();
  auto artifact_type = optional_string(json_value, what, path, "artifactType");
  if (!artifact_type) return fail(artifact_type.error());
  d.artifact_type = *artifact_type;
  if (const auto urls = json_value.find("urls"); urls != json_value.end() && !urls->is_null()) {
    if (!urls->is_array()) return fail(json_error(what, path + ".urls", "must be an array"));
    for (const auto& url : *urls) {
      if (!url.is_string()) return fail(json_error(what, path + ".urls", "must hold strings"));
      d.urls.push_back(url.get<std::string>());
    }
  }
  auto annotations = annotations_from(json_value, what, path);
  if (!annotations) return fail(annotations.error());
  d.annotations = std::move(*annotations);
  if (const auto platform = json_value.find("platform"); platform != json_value.end() && !platform->is_null()) {
    if (!platform->is_object()) return fail(json_error(what, path + ".platform", "must be an object"));
    Platform p;
    auto arch = required_string(*platform, what, path + ".platform", "architecture");
    if (!arch) return fail(arch.error());
    auto os = required_string(*platform, what, path + ".platform", "os");
    if (!os) return fail(os.error());
    auto variant = optional_string(*platform, what, path + ".platform", "variant");
    if (!variant) return fail(variant.error());
    p.architecture = *arch;
    p.os = *os;
    p.variant = *variant;
    d.platform = p;
  }
  return d;
}

// The array of descriptors at `key`, which manifests and indexes require.
Result<std::vector<Descriptor>> descriptors_at(const nlohmann::json& object, std::string_view what, const char* key) {
  std::vector<Descriptor> out;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fail(json_error(what, std::string(".") + key, "is required"));
  if (!it->is_array()) return fail(json_error(what, std::string(".") + key, "must be an array"));
  for (std::size_t i = 0; i < it->size(); ++i) {
    auto d = descriptor_at((*it)[i], what, std::string(".") + key + "[" + std::to_string(i) + "]");
    if (!d) return fail(d.error());
    out.push_back(std::move(*d));
  }
  return out;
}

Status check_schema_version(const nlohmann::json& object, std::string_view what) {
  const auto it = object.find("schemaVersion");
  if (it == object.end() || !it->is_number_integer() || it->get<int>() != 2) {
    return fail(json_error(what, ".schemaVersion", "must be 2"));
  }
  return {};
}

void put_if(nlohmann::json& object, const char* key, const std::string& value) {
  if (!value.empty()) object[key] = value;
}

void put_annotations(nlohmann::json& object, const Annotations& annotations) {
  if (!annotations.empty()) object["annotations"] = annotations;
}

}  // namespace

std::string Descriptor::annotation(std::string_view key) const {
  const auto it = annotations.find(std::string(key));
  return it == annotations.end() ? std::string() : it->second;
}

nlohmann::json to_json(const Descriptor& d) {
  nlohmann::json out = {{"mediaType", d.media_type}, {"digest", d.digest.str()}, {"size", d.size}};
  put_if(out, "artifactType", d.artifact_type);
  if (!d.urls.empty()) out["urls"] = d.urls;
  put_annotations(out, d.annotations);
  if (d.platform) {
    nlohmann::json p = {{"architecture", d.platform->architecture}, {"os", d.platform->os}};
    put_if(p, "variant", d.platform->variant);
    out["platform"] = std::move(p);
  }
  return out;
}

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json out = {{"schemaVersion", 2}, {"mediaType", m.media_type}, {"config", to_json(m.config)}};
  put_if(out, "artifactType", m.artifact_type);
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : m.layers) layers.push_back(to_json(layer));
  out["layers"] = std::move(layers);
  if (m.subject) out["subject"] = to_json(*m.subject);
  put_annotations(out, m.annotations);
  return out;
}

nlohmann::json to_json(const Index& index) {
  nlohmann::json out = {{"schemaVersion", 2}, {"mediaType", index.media_type}};
  nlohmann::json manifests = nlohmann::json::array();
  for (const auto& d : index.manifests) manifests.push_back(to_json(d));
  out["manifests"] = std::move(manifests);
  put_annotations(out, index.annotations);
  return out;
}

nlohmann::json to_json(const ImageConfig& c) {
  nlohmann::json out = c.unknown.is_object() ? c.unknown : nlohmann::json::object();
  put_if(out, "created", c.created);
  put_if(out, "author", c.author);
  out["architecture"] = c.architecture;
  out["os"] = c.os;
  put_if(out, "variant", c.variant);
  if (!c.config.empty()) out["config"] = c.config;
  nlohmann::json diff_ids = nlohmann::json::array();
  for (const auto& d : c.diff_ids) diff_ids.push_back(d.str());
  out["rootfs"] = {{"type", "layers"}, {"diff_ids", std::move(diff_ids)}};
  if (!c.history.empty()) {
    nlohmann::json history = nlohmann::json::array();
    for (const auto& h : c.history) {
      nlohmann::json entry = nlohmann::json::object();
      put_if(entry, "created", h.created);
      put_if(entry, "created_by", h.created_by);
      put_if(entry, "author", h.author);
      put_if(entry, "comment", h.comment);
      if (h.empty_layer) entry["empty_layer"] = true;
      history.push_back(std::move(entry));
    }
    out["history"] = std::move(history);
  }
  return out;
}

std::vector<Descriptor> blobs_of(const Manifest& manifest) {
  std::vector<Descriptor> blobs{manifest.config};
  blobs.insert(blobs.end(), manifest.layers.begin(), manifest.layers.end());
  return blobs;
}

Result<Descriptor> descriptor_from_json(const nlohmann::json& value, std::string_view what) {
  return descriptor_at(value, what, "");
}

Result<Manifest> manifest_from_json(const nlohmann::json& value, std::string_view what) {
  if (!value.is_object()) return fail(json_error(what, ".", "must be an object"));
  if (auto s = check_schema_version(value, what); !s) return fail(s.error());
  Manifest m;
  auto media = optional_string(value, what, "", "mediaType");
  if (!media) return fail(media.error());
  m.media_type = media->empty() ? std::string(media_type::k_manifest) : *media;
  auto artifact_type = optional_string(value, what, "", "artifactType");
  if (!artifact_type) return fail(artifact_type.error());
  m.artifact_type = *artifact_type;
  if (!value.contains("config")) return fail(json_error(what, ".config", "is required"));
  auto config = descriptor_at(value["config"], what, ".config");
  if (!config) return fail(config.error());
  m.config = std::move(*config);
  auto layers = descriptors_at(value, what, "layers");
  if (!layers) return fail(layers.error());
  m.layers = std::move(*layers);
  if (const auto subject = value.find("subject"); subject != value.end() && !subject->is_null()) {
    auto d = descriptor_at(*subject, what, ".subject");
    if (!d) return fail(d.error());
    m.subject = std::move(*d);
  }
  auto annotations = annotations_from(value, what, "");
  if (!annotations) return fail(annotations.error());
  m.annotations = std::move(*annotations);
  return m;
}

Result<Index> index_from_json(const nlohmann::json& value, std::string_view what) {
  if (!value.is_object()) return fail(json_error(what, ".", "must be an object"));
  if (auto s = check_schema_version(value, what); !s) return fail(s.error());
  Index index;
  auto media = optional_string(value, what, "", "mediaType");
  if (!media) return fail(media.error());
  index.media_type = media->empty() ? std::string(media_type::k_index) : *media;
  auto manifests = descriptors_at(value, what, "manifests");
  if (!manifests) return fail(manifests.error());
  index.manifests = std::move(*manifests);
  auto annotations = annotations_from(value, what, "");
  if (!annotations) return fail(annotations.error());
  index.annotations = std::move(*annotations);
  return index;
}

Result<ImageConfig> config_from_json(const nlohmann::json& value, std::string_view what) {
  if (!value.is_object()) return fail(json_error(what, ".", "must be an object"));
  ImageConfig c;
  c.unknown = value;
  for (const char* key : {"created", "author", "architecture", "os", "variant", "config", "rootfs", "history"}) {
    c.unknown.erase(key);
  }
  for (auto [field, key] : {std::pair{&c.created, "created"}, {&c.author, "author"}, {&c.variant, "variant"}}) {
    auto s = optional_string(value, what, "", key);
    if (!s) return fail(s.error());
    *field = *s;
  }
  auto arch = required_string(value, what, "", "architecture");
  if (!arch) return fail(arch.error());
  c.architecture = *arch;
  auto os = required_string(value, what, "", "os");
  if (!os) return fail(os.error());
  c.os = *os;
  if (const auto it = value.find("config"); it != value.end() && !it->is_null()) {
    if (!it->is_object()) return fail(json_error(what, ".config", "must be an object"));
    c.config = *it;
  }
  const auto rootfs = value.find("rootfs");
  if (rootfs == value.end() || !rootfs->is_object()) return fail(json_error(what, ".rootfs", "is required"));
  // Compared as JSON: nlohmann's value() would throw on a "type" that is not a string.
  if (const auto type = rootfs->find("type"); type == rootfs->end() || *type != "layers") {
    return fail(json_error(what, ".rootfs.type", "must be \"layers\""));
  }
  const auto diff_ids = rootfs->find("diff_ids");
  if (diff_ids == rootfs->end() || !diff_ids->is_array()) {
    return fail(json_error(what, ".rootfs.diff_ids", "must be an array"));
  }
  for (std::size_t i = 0; i < diff_ids->size(); ++i) {
    const auto& id = (*diff_ids)[i];
    const std::string path = ".rootfs.diff_ids[" + std::to_string(i) + "]";
    if (!id.is_string()) return fail(json_error(what, path, "must be a string"));
    auto digest = Digest::parse(id.get<std::string>());
    if (!digest) return fail(json_error(what, path, digest.error().message));
    c.diff_ids.push_back(*digest);
  }
  if (const auto history = value.find("history"); history != value.end() && !history->is_null()) {
    if (!history->is_array()) return fail(json_error(what, ".history", "must be an array"));
    for (std::size_t i = 0; i < history->size(); ++i) {
      const auto& h = (*history)[i];
      const std::string path = ".history[" + std::to_string(i) + "]";
      if (!h.is_object()) return fail(json_error(what, path, "must be an object"));
      HistoryEntry entry;
      for (auto [field, key] : {std::pair{&entry.created, "created"},
                                {&entry.created_by, "created_by"},
                                {&entry.author, "author"},
                                {&entry.comment, "comment"}}) {
        auto s = optional_string(h, what, path, key);
        if (!s) return fail(s.error());
        *field = *s;
      }
      const auto empty = h.find("empty_layer");
      entry.empty_layer = empty != h.end() && empty->is_boolean() && empty->get<bool>();
      c.history.push_back(std::move(entry));
    }
  }
  return c;
}

namespace {

// nlohmann's SAX events, keeping the keys of each open object and the path to it.
class DuplicateKeys final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<std::string> found;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(Kind::object); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Kind::array); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    auto& frame = m_frames.back();
    if (!frame.keys.insert(key).second) {
      found = frame.path + "." + key;
      return false;
    }
    frame.key = key;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  enum class Kind { object, array };
  struct Frame {
    Kind kind;
    std::string path;
    std::set<std::string> keys;
    std::string key;        // of an object: the key whose value comes next
    std::size_t index = 0;  // of an array: the next element's
  };
  std::string child_path() const {
    if (m_frames.empty()) return {};
    const auto& f = m_frames.back();
    return f.kind == Kind::object ? f.path + "." + f.key : f.path + "[" + std::to_string(f.index) + "]";
  }
  bool value() {
    if (!m_frames.empty() && m_frames.back().kind == Kind::array) ++m_frames.back().index;
    return true;
  }
  bool open(Kind kind) {
    m_frames.push_back({kind, child_path(), {}, {}, 0});
    return true;
  }
  bool close() {
    m_frames.pop_back();
    return value();
  }
  std::vector<Frame> m_frames;
};

}  // namespace

std::optional<std::string> duplicate_json_key(std::string_view bytes) {
  DuplicateKeys keys;
  try {
    nlohmann::json::sax_parse(bytes, &keys);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // what does not parse is read_json's to report
  }
  return keys.found;
}

Result<nlohmann::json> parse_json(std::string_view bytes, std::string_view what) {
  auto parsed = read_json<nlohmann::json>(bytes);
  if (parsed) return std::move(*parsed);
  const auto& problem = parsed.error();
  return fail_input(std::string(what) + ": " + problem.message +
                    (problem.byte ? " at byte " + std::to_string(*problem.byte) : ""));
}

Status check_oci_layout(std::string_view text, const std::string& what) {
  auto document = parse_json(text, what);
  if (!document) return fail(document.error());
  if (!document->is_object() || !document->contains("imageLayoutVersion"))
    return fail_input(what + ": imageLayoutVersion is missing");
  return {};
}

Result<std::string> canonical_json(const nlohmann::json& value) {
  try {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
  } catch (const nlohmann::json::type_error&) {
    return fail_input("a value is not valid UTF-8");
  }
}

Platform host_platform() {
  utsname u{};
  const std::string machine = uname(&u) == 0 ? u.machine : "";
  const Machine* m = machine_of_uname(machine);
  if (!m) return {machine.empty() ? "unknown" : machine, "linux", ""};
  // A 64-bit ARM kernel runs ARMv8 programs: OCI's arm64/v8, which images naming no variant serve.
  const std::string_view variant = m->architecture == "arm64" ? "v8" : m->variant;
  return {std::string(m->architecture), "linux", std::string(variant)};
}

Result<Platform> parse_platform(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (true) {
    const auto slash = text.find('/', pos);
    parts.emplace_back(text.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  const bool valid_words = std::all_of(parts.begin(), parts.end(), [](const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
  });
  if (parts.size() < 2 || parts.size() > 3 || !valid_words) {
    return fail_input("--platform \"" + std::string(text) +
                      "\": expected OS/ARCHITECTURE[/VARIANT], e.g. linux/arm64 or linux/arm/v7");
  }
  return Platform{parts[1], parts[0], parts.size() == 3 ? parts[2] : std::string()};
}

std::string platform_text(const Platform& platform) {
  return platform.os + "/" + platform.architecture + (platform.variant.empty() ? "" : "/" + platform.variant);
}

bool serves(const Platform& candidate, const Platform& wanted) {
  return candidate.os == wanted.os && candidate.architecture == wanted.architecture &&
         (wanted.variant.empty() || candidate.variant.empty() || candidate.variant == wanted.variant);
}

}  // namespace arec
