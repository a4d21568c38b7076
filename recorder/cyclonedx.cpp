#include "recorder/cyclonedx.hpp"

#include <map>
#include <optional>

#include "oci/digest.hpp"

namespace arec {

namespace {

// A version 5 (name-based) UUID made of the image digest: the same document has the same serial
// number, and two images' documents differ in theirs.
std::string serial_number(const Digest& image) {
  std::string hex = digest_of("arec cyclonedx " + image.str()).hex().substr(0, 32);
  hex[12] = '5';
  static constexpr char k_variant[] = "89ab";
  hex[16] = k_variant[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
  return "urn:uuid:" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) +
         "-" + hex.substr(20);
}

// CycloneDX's name of an SPDX checksum algorithm; nothing for one CycloneDX has no name for (SHA224).
std::optional<std::string> hash_algorithm(std::string_view spdx) {
  if (spdx == "SHA1") return "SHA-1";
  if (spdx == "SHA256") return "SHA-256";
  if (spdx == "SHA384") return "SHA-384";
  if (spdx == "SHA512") return "SHA-512";
  if (spdx == "MD5" || spdx == "SHA3-256" || spdx == "SHA3-384" || spdx == "SHA3-512") return std::string(spdx);
  return std::nullopt;
}

// Debian's Maintainer, "name <email>", or an SPDX agent ("Organization: name (email)"), as an
// organizational entity.
nlohmann::json supplier(std::string_view maintainer) {
  char open_mark = '<';
  char close_mark = '>';
  for (std::string_view agent : {"Organization: ", "Person: "}) {
    if (!maintainer.starts_with(agent)) continue;
    maintainer.remove_prefix(agent.size());
    open_mark = '(';
    close_mark = ')';
  }
  const auto open = maintainer.rfind(open_mark);
  if (open == std::string_view::npos || !maintainer.ends_with(close_mark)) return {{"name", maintainer}};
  std::string_view name = maintainer.substr(0, open);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return {{"name", name}, {"contact", {{{"email", maintainer.substr(open + 1, maintainer.size() - open - 2)}}}}};
}

nlohmann::json file_component(const SbomFile& f) {
  return {{"type", "file"},
          {"bom-ref", file_key(f.path)},
          {"name", "/" + f.path},
          {"hashes", {{{"alg", "SHA-1"}, {"content", f.sha1}}, {{"alg", "SHA-256"}, {"content", f.sha256}}}}};
}

// One licence identifier alone is a license object (its id from the SPDX list, or the name and text of a
// licence the list lacks); anything more is an SPDX expression.
nlohmann::json licences(const Licence& licence) {
  const std::string& e = licence.expression;
  if (e.find(' ') == std::string::npos && !e.starts_with('(')) {
    if (!e.starts_with("LicenseRef-")) return {{{"license", {{"id", e}}}}};
    for (const auto& other : licence.others) {
      if (other.id == e) return {{{"license", {{"name", other.name}, {"text", {{"content", other.text}}}}}}};
    }
  }
  return {{{"expression", e}}};
}

}  // namespace

nlohmann::json cyclonedx_document(const SbomFacts& facts) {
  const std::string repository = facts.module + "/" + facts.name;
  nlohmann::json subject = {{"type", "container"},
                            {"bom-ref", k_record_key},
                            {"name", repository},
                            {"purl", "pkg:oci/" + purl_encode(facts.name) + "@" + purl_encode(facts.image.str())}};
  if (!facts.revision.empty()) subject["version"] = facts.revision;

  nlohmann::json components = nlohmann::json::array();
  std::vector<std::string> refs;
  if (facts.os) {
    nlohmann::json os = {
        {"type", "operating-system"}, {"bom-ref", k_os_key}, {"name", facts.os->id}, {"version", facts.os->version}};
    if (!facts.os->pretty_name.empty()) os["description"] = facts.os->pretty_name;
    components.push_back(std::move(os));
    refs.emplace_back(k_os_key);
  }
  // A dependency's files are components of its component (CycloneDX's containment).
  std::map<std::string, nlohmann::json> held;
  for (const auto& p : facts.packages) held.emplace(p.key, nlohmann::json());
  const auto holder = [&](const SbomFile& f) {
    return f.packages.empty() && !f.dependency.empty() ? held.find(f.dependency) : held.end();
  };
  for (const auto& f : facts.files) {
    if (auto it = holder(f); it != held.end()) it->second.push_back(file_component(f));
  }
  for (const auto& p : facts.packages) {
    nlohmann::json component = {{"type", "library"}, {"bom-ref", p.key}, {"name", p.name}};
    if (!p.version.empty()) component["version"] = p.version;
    if (!p.supplier.empty()) component["supplier"] = supplier(p.supplier);
    if (!p.purl.empty()) component["purl"] = p.purl;
    if (!p.licence.expression.empty()) component["licenses"] = licences(p.licence);
    auto hashes = nlohmann::json::array();
    for (const auto& [algorithm, value] : p.checksums) {
      if (auto alg = hash_algorithm(algorithm)) hashes.push_back({{"alg", *alg}, {"content", value}});
    }
    if (!hashes.empty()) component["hashes"] = std::move(hashes);
    if (!p.download_location.empty()) {
      // SPDX's git+URL@REF is a repository; anything else is what was downloaded.
      const bool vcs = p.download_location.starts_with("git+");
      component["externalReferences"] = {{{"type", vcs ? "vcs" : "distribution"}, {"url", p.download_location}}};
    }
    if (auto& files = held.at(p.key); !files.is_null()) component["components"] = std::move(files);
    components.push_back(std::move(component));
    refs.push_back(p.key);
  }
  // A Debian package's files are its own, a dependency's inside its component: only the files of no
  // package are components of their own.
  for (const auto& f : facts.files) {
    if (!f.packages.empty() || holder(f) != held.end()) continue;
    components.push_back(file_component(f));
    refs.push_back(file_key(f.path));
  }

  // Every component once, the subject first, each with what it needs (of the components listed).
  const std::set<std::string> listed(refs.begin(), refs.end());
  nlohmann::json dependencies = nlohmann::json::array();
  const auto depends = [&](const std::string& ref) {
    auto on = nlohmann::json::array();
    if (const auto it = facts.depends_on.find(ref); it != facts.depends_on.end()) {
      for (const auto& key : it->second) {
        if (listed.contains(key)) on.push_back(key);
      }
    }
    dependencies.push_back({{"ref", ref}, {"dependsOn", std::move(on)}});
  };
  depends(std::string(k_record_key));
  for (const auto& ref : refs) depends(ref);

  return {{"$schema", "http://cyclonedx.org/schema/bom-1.6.schema.json"},
          {"bomFormat", "CycloneDX"},
          {"specVersion", "1.6"},
          {"serialNumber", serial_number(facts.image)},
          {"version", 1},
          {"metadata",
           {{"timestamp", rfc3339(facts.created)},
            {"tools", {{"components", {{{"type", "application"}, {"name", "arec"}}}}}},
            {"component", std::move(subject)}}},
          {"components", std::move(components)},
          {"dependencies", std::move(dependencies)}};
}

}  // namespace arec
