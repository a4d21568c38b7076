#include "recorder/record.hpp"

#include <ctime>

namespace arec {

namespace {

bool is_alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

void put(Annotations& annotations, std::string_view key, const std::string& value) {
  if (!value.empty()) annotations.emplace(key, value);
}

}  // namespace

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
