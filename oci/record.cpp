#include "oci/record.hpp"

#include <algorithm>
#include <ctime>
#include <tuple>

namespace arec {

namespace {

bool is_alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

void put(Annotations& annotations, std::string_view key, const std::string& value) {
  if (!value.empty()) annotations.emplace(key, value);
}

}  // namespace

bool is_config_name(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  return std::ranges::all_of(text, [](char c) { return is_alnum_lower(c) || (c >= 'A' && c <= 'Z') || c == '_'; });
}

namespace {

std::string shown_config(std::string_view config) {
  return config.empty() ? std::string("(none)") : std::string(config);
}

std::string list_of(const std::vector<std::string>& configs) {
  std::string out;
  for (const auto& c : configs) out += (out.empty() ? "" : ", ") + shown_config(c);
  return out;
}

}  // namespace

Result<ChosenConfig> choose_config(std::string_view repository, const std::vector<std::string>& recorded,
                                   const ConfigChoice& choice) {
  if (choice.asked) {
    if (std::ranges::find(recorded, *choice.asked) != recorded.end()) return ChosenConfig{*choice.asked, {}};
    // A record naming no configuration (recorded outside a build) serves every configuration.
    if (std::ranges::find(recorded, std::string()) != recorded.end()) return ChosenConfig{std::string(), {}};
    if (recorded.empty()) return fail_input(std::string(repository) + ": no record of configuration " + *choice.asked);
    return fail_input(std::string(repository) + ": no record of configuration " + *choice.asked +
                      " (its records are of " + list_of(recorded) + ")");
  }
  if (recorded.size() <= 1) return ChosenConfig{};
  if (std::ranges::find(recorded, choice.default_config) != recorded.end()) {
    return ChosenConfig{choice.default_config, std::string(repository) + " has records of " + list_of(recorded) +
                                                   ": using the default configuration, " + choice.default_config +
                                                   " (choose another with --config)"};
  }
  return fail_input(std::string(repository) + " has records of " + list_of(recorded) +
                    " and none of the default configuration " + choice.default_config +
                    ": choose one with --config NAME (or set AREC_DEFAULT_CONFIG)");
}

const Record* newest_of(const std::vector<Record>& history, const ChosenConfig& chosen) {
  for (auto r = history.rbegin(); r != history.rend(); ++r) {
    if (!chosen.config || r->config == *chosen.config) return &*r;
  }
  return nullptr;
}

std::vector<std::string> configs_of(const std::vector<Record>& history) {
  std::vector<std::string> out;
  for (const auto& r : history) out.push_back(r.config);
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string latest_tag(std::string_view config, const std::vector<std::string>& recorded,
                       std::string_view default_config) {
  if (recorded.size() <= 1 || config == default_config) return "latest";
  std::string tag = "latest-";
  for (char c : config.empty() ? std::string_view("none") : config) {
    tag.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : (is_alnum_lower(c) || c == '_' ? c : '-'));
  }
  return tag.substr(0, 128);
}

bool is_path_component(std::string_view text) {
  if (text.empty() || !is_alnum_lower(text.front()) || !is_alnum_lower(text.back())) return false;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_alnum_lower(text[i])) {
      ++i;
      continue;
    }
    // A separator: ".", "_", "__" or one or more "-", and then an alphanumeric.
    if (text[i] == '.') {
      ++i;
    } else if (text[i] == '_') {
      i += (i + 1 < text.size() && text[i + 1] == '_') ? 2 : 1;
    } else if (text[i] == '-') {
      while (i < text.size() && text[i] == '-') ++i;
    } else {
      return false;
    }
    if (i >= text.size() || !is_alnum_lower(text[i])) return false;
  }
  return true;
}

Status validate_record_part(std::string_view value, std::string_view what) {
  if (is_path_component(value)) return {};
  return fail_input(std::string(what) + " \"" + std::string(value) +
                    "\": not an OCI repository path component (lowercase letters and digits, "
                    "separated by '.', '_', '__' or '-')");
}

std::optional<std::int64_t> rfc3339_seconds(std::string_view t) {
  const auto digits = [&t](std::size_t at, std::size_t count, int& out) {
    if (at + count > t.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + count; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      out = out * 10 + (t[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(0, 4, year) || t.size() < 20 || t[4] != '-' || !digits(5, 2, month) || t[7] != '-' ||
      !digits(8, 2, day) || (t[10] != 'T' && t[10] != 't') || !digits(11, 2, hour) || t[13] != ':' ||
      !digits(14, 2, minute) || t[16] != ':' || !digits(17, 2, second)) {
    return std::nullopt;
  }
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static constexpr int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > k_days[month - 1] + (month == 2 && leap ? 1 : 0)) return std::nullopt;
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
  std::size_t pos = 19;
  if (pos < t.size() && t[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  int offset = 0;  // seconds east of UTC
  if (pos < t.size() && (t[pos] == 'Z' || t[pos] == 'z')) {
    if (pos + 1 != t.size()) return std::nullopt;
  } else {
    int offset_hour = 0, offset_minute = 0;
    if (!(pos + 6 == t.size() && (t[pos] == '+' || t[pos] == '-') && digits(pos + 1, 2, offset_hour) &&
          t[pos + 3] == ':' && digits(pos + 4, 2, offset_minute) && offset_hour <= 23 && offset_minute <= 59)) {
      return std::nullopt;
    }
    offset = (t[pos] == '+' ? 1 : -1) * (offset_hour * 3600 + offset_minute * 60);
  }
  // Days since 1970-01-01 of the civil date (H. Hinnant's days_from_civil): no time zone consulted.
  const int y = year - (month <= 2 ? 1 : 0);
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = std::int64_t{era} * 146097 + doe - 719468;
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

bool is_rfc3339(std::string_view t) { return rfc3339_seconds(t).has_value(); }

Status validate_record_fields(const Record& record, std::string_view what) {
  const std::string of =
      std::string(what) + ": record " + printable(record.repository()) + "@" + record.manifest.digest.str();
  if (auto s = validate_record_part(record.module, "module"); !s) return fail(std::move(s.error()).context(of));
  if (auto s = validate_record_part(record.name, "name"); !s) return fail(std::move(s.error()).context(of));
  if (!is_rfc3339(record.recorded)) {
    return fail_input(of + ": recorded \"" + printable(record.recorded) +
                      "\" is not an RFC 3339 time (e.g. 2026-12-02T11:39:53Z)");
  }
  if (!record.base_digest.empty()) {
    if (auto d = Digest::parse(record.base_digest); !d) {
      return fail_input(of + ": base \"" + printable(record.base_digest) + "\" is not a digest (ALGORITHM:HEX)");
    }
  }
  for (auto [key, value] :
       {std::pair{"target", &record.target}, {"config", &record.config}, {"revision", &record.revision}}) {
    if (has_control_characters(*value))
      return fail_input(of + ": " + key + " \"" + printable(*value) + "\" holds control characters");
  }
  return {};
}

Descriptor to_descriptor(const Record& record, Latest latest) {
  Descriptor d = record.manifest;
  d.annotations.clear();
  put(d.annotations, annotation::k_module, record.module);
  put(d.annotations, annotation::k_name, record.name);
  put(d.annotations, annotation::k_created, record.recorded);
  put(d.annotations, annotation::k_target, record.target);
  put(d.annotations, annotation::k_config, record.config);
  put(d.annotations, annotation::k_revision, record.revision);
  put(d.annotations, annotation::k_base_digest, record.base_digest);
  if (latest == Latest::yes) d.annotations.emplace(annotation::k_ref_name, record.repository());
  return d;
}

std::optional<Record> record_from_descriptor(const Descriptor& d) {
  Record r;
  r.module = d.annotation(annotation::k_module);
  r.name = d.annotation(annotation::k_name);
  if (!is_path_component(r.module) || !is_path_component(r.name)) return std::nullopt;
  r.manifest = d;
  r.manifest.annotations.clear();
  r.recorded = d.annotation(annotation::k_created);
  r.target = d.annotation(annotation::k_target);
  r.config = d.annotation(annotation::k_config);
  r.revision = d.annotation(annotation::k_revision);
  r.base_digest = d.annotation(annotation::k_base_digest);
  return r;
}

nlohmann::json to_json(const Record& r) {
  nlohmann::json out = {{"module", r.module},
                        {"name", r.name},
                        {"digest", r.manifest.digest.str()},
                        {"size", r.manifest.size},
                        {"mediaType", r.manifest.media_type},
                        {"recorded", r.recorded}};
  if (r.manifest.platform) {
    // os/architecture[/variant], as docker --platform and skopeo spell it
    out["platform"] = r.manifest.platform->os + "/" + r.manifest.platform->architecture +
                      (r.manifest.platform->variant.empty() ? "" : "/" + r.manifest.platform->variant);
  }
  for (auto [key, value] :
       {std::pair{"target", &r.target}, {"config", &r.config}, {"revision", &r.revision}, {"base", &r.base_digest}}) {
    if (!value->empty()) out[key] = *value;
  }
  return out;
}

Result<std::string> record_document(const Record& record) { return canonical_json(to_json(record)); }

Result<Record> parse_record_document(std::string_view bytes, std::string_view what) {
  const std::string of(what);
  if (bytes.size() > k_max_record_document) {
    return fail_input(of + ": " + std::to_string(bytes.size()) + " bytes, more than a record document may hold (" +
                      std::to_string(k_max_record_document) + ")");
  }
  auto json = parse_json(bytes, what);
  if (!json) return fail_input(json.error().message);
  if (!json->is_object()) return fail_input(of + ": not a JSON object");
  static constexpr std::string_view k_required[] = {"module", "name", "digest", "size", "mediaType", "recorded"};
  static constexpr std::string_view k_optional[] = {"platform", "target", "config", "revision", "base"};
  for (const auto& [key, value] : json->items()) {
    const bool known = std::ranges::find(k_required, key) != std::end(k_required) ||
                       std::ranges::find(k_optional, key) != std::end(k_optional);
    if (!known)
      return fail_input(of + ": unknown field \"" + printable(key) + "\" (a record document holds only the record)");
  }
  const auto text = [&](std::string_view key, bool required) -> Result<std::string> {
    const auto it = json->find(key);
    if (it == json->end()) {
      if (required) return fail_input(of + ": no field \"" + std::string(key) + "\"");
      return std::string();
    }
    if (!it->is_string()) return fail_input(of + ": \"" + std::string(key) + "\" is not a string");
    return it->get<std::string>();
  };
  Record r;
  std::string digest, platform;
  for (auto [key, out, required] : {std::tuple{"module", &r.module, true},
                                    {"name", &r.name, true},
                                    {"digest", &digest, true},
                                    {"mediaType", &r.manifest.media_type, true},
                                    {"recorded", &r.recorded, true},
                                    {"platform", &platform, false},
                                    {"target", &r.target, false},
                                    {"config", &r.config, false},
                                    {"revision", &r.revision, false},
                                    {"base", &r.base_digest, false}}) {
    auto value = text(key, required);
    if (!value) return fail(value.error());
    *out = std::move(*value);
  }
  const auto size = json->find("size");
  if (size == json->end()) return fail_input(of + ": no field \"size\"");
  if (!size->is_number_integer() || size->get<std::int64_t>() < 0)
    return fail_input(of + ": \"size\" is not a size in bytes");
  r.manifest.size = size->get<std::int64_t>();
  auto parsed = Digest::parse(digest);
  if (!parsed) return fail_input(of + ": \"digest\" " + printable(digest) + " is not a digest (ALGORITHM:HEX)");
  r.manifest.digest = *parsed;
  if (r.manifest.media_type != media_type::k_manifest) {
    return fail_input(of + ": \"mediaType\" \"" + printable(r.manifest.media_type) + "\" is not " +
                      std::string(media_type::k_manifest));
  }
  if (json->contains("platform")) {
    auto p = parse_platform(platform);
    if (!p) return fail_input(of + ": \"platform\" \"" + printable(platform) + "\" is not OS/ARCH[/VARIANT]");
    r.manifest.platform = std::move(*p);
  }
  // An empty optional field is one record_document leaves out: present and empty, it was not written so.
  for (auto [key, value] :
       {std::pair{"target", &r.target}, {"config", &r.config}, {"revision", &r.revision}, {"base", &r.base_digest}}) {
    if (json->contains(key) && value->empty()) return fail_input(of + ": \"" + std::string(key) + "\" is empty");
  }
  if (auto s = validate_record_fields(r, what); !s) return fail(s.error());
  return r;
}

Result<RecordArtifact> record_artifact(const Record& record) {
  RecordArtifact out;
  auto document = record_document(record);
  if (!document) return fail(std::move(document.error()).context("the record document of " + record.identity()));
  out.document = std::move(*document);
  out.layer = Descriptor{std::string(media_type::k_arec_record),
                         digest_of(out.document),
                         static_cast<std::int64_t>(out.document.size()),
                         {},
                         {},
                         {},
                         {}};
  Manifest manifest;
  manifest.artifact_type = std::string(media_type::k_arec_record);
  manifest.config = Descriptor{std::string(media_type::k_empty), digest_of("{}"), 2, {}, {}, {}, {}};
  manifest.layers.push_back(out.layer);
  manifest.subject =
      Descriptor{record.manifest.media_type, record.manifest.digest, record.manifest.size, {}, {}, {}, {}};
  manifest.annotations.emplace(annotation::k_created, record.recorded);
  auto text = canonical_json(to_json(manifest));
  if (!text) return fail(std::move(text.error()).context("the record artifact of " + record.identity()));
  out.manifest = std::move(*text);
  out.descriptor = Descriptor{std::string(media_type::k_manifest),
                              digest_of(out.manifest),
                              static_cast<std::int64_t>(out.manifest.size()),
                              std::string(media_type::k_arec_record),
                              {},
                              manifest.annotations,
                              {}};
  return out;
}

std::string rfc3339(std::int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string now_rfc3339() { return rfc3339(static_cast<std::int64_t>(std::time(nullptr))); }

}  // namespace arec
