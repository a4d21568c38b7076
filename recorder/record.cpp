#include "recorder/record.hpp"

#include <algorithm>
#include <ctime>

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

std::string shown_config(std::string_view config) { return config.empty() ? std::string("(none)") : std::string(config); }

std::string list_of(const std::vector<std::string>& configs) {
  std::string out;
  for (const auto& c : configs) out += (out.empty() ? "" : ", ") + shown_config(c);
  return out;
}

}  // namespace

Result<ChosenConfig> choose_config(std::string_view repository, const std::vector<std::string>& recorded, const ConfigChoice& choice) {
  if (choice.asked) {
    if (std::ranges::find(recorded, *choice.asked) != recorded.end()) return ChosenConfig{*choice.asked, {}};
    // A record naming no configuration (recorded outside a build) serves every configuration.
    if (std::ranges::find(recorded, std::string()) != recorded.end()) return ChosenConfig{std::string(), {}};
    if (recorded.empty()) return fail_input(std::string(repository) + ": no record of configuration " + *choice.asked);
    return fail_input(std::string(repository) + ": no record of configuration " + *choice.asked + " (its records are of " +
                      list_of(recorded) + ")");
  }
  if (recorded.size() <= 1) return ChosenConfig{};
  if (std::ranges::find(recorded, choice.default_config) != recorded.end()) {
    return ChosenConfig{choice.default_config, std::string(repository) + " has records of " + list_of(recorded) +
                                                   ": using the default configuration, " + choice.default_config +
                                                   " (choose another with --config)"};
  }
  return fail_input(std::string(repository) + " has records of " + list_of(recorded) + " and none of the default configuration " +
                    choice.default_config + ": choose one with --config NAME (or set AREC_DEFAULT_CONFIG)");
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

std::string latest_tag(std::string_view config, const std::vector<std::string>& recorded, std::string_view default_config) {
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
  for (auto [key, value] : {std::pair{"target", &r.target}, {"config", &r.config}, {"revision", &r.revision},
                            {"base", &r.base_digest}}) {
    if (!value->empty()) out[key] = *value;
  }
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
