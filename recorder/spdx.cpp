// The SPDX 2.3 writer of a record's SBOM (declared in recorder/sbom.hpp).
#include <map>
#include <set>

#include "recorder/sbom.hpp"

namespace arec {

namespace {

constexpr std::string_view k_tool = "Tool: arec";
constexpr std::string_view k_record_package_id = "SPDXRef-Package-record";
constexpr std::string_view k_os_package_id = "SPDXRef-OperatingSystem";
constexpr std::string_view k_noassertion = "NOASSERTION";

// SPDX identifiers allow letters, digits, '.' and '-'.
std::string spdx_id_part(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') c = '-';
  }
  return out;
}

nlohmann::json relationship(std::string_view from, std::string_view type, std::string_view to) {
  return {{"spdxElementId", from}, {"relationshipType", type}, {"relatedSpdxElement", to}};
}

// SPDX writes a supplier as "Organization: name (email)"; Debian's Maintainer field is "name <email>".
// A packages-info file gives it as SPDX writes it.
std::string spdx_supplier(const std::string& maintainer) {
  if (maintainer.empty()) return std::string(k_noassertion);
  if (maintainer.starts_with("Organization: ") || maintainer.starts_with("Person: ")) return maintainer;
  std::string supplier = maintainer;
  if (const auto lt = supplier.find('<'); lt != std::string::npos && supplier.ends_with('>')) {
    supplier = supplier.substr(0, lt) + "(" + supplier.substr(lt + 1, supplier.size() - lt - 2) + ")";
  }
  return "Organization: " + supplier;
}

}  // namespace

nlohmann::json spdx_document(const SbomFacts& facts) {
  const std::string repository = facts.module + "/" + facts.name;
  nlohmann::json record = {
      {"SPDXID", k_record_package_id},
      {"name", repository},
      {"downloadLocation", k_noassertion},
      {"filesAnalyzed", false},
      {"supplier", k_noassertion},
      {"primaryPackagePurpose", "CONTAINER"},
      {"externalRefs",
       {{{"referenceCategory", "PACKAGE-MANAGER"},
         {"referenceType", "purl"},
         {"referenceLocator", "pkg:oci/" + purl_encode(facts.name) + "@" + purl_encode(facts.image.str())}}}}};
  if (!facts.revision.empty()) record["versionInfo"] = facts.revision;

  nlohmann::json packages = nlohmann::json::array({record});
  nlohmann::json relationships = nlohmann::json::array();
  relationships.push_back(relationship("SPDXRef-DOCUMENT", "DESCRIBES", k_record_package_id));
  if (facts.os) {
    packages.push_back({{"SPDXID", k_os_package_id},
                        {"name", facts.os->id},
                        {"versionInfo", facts.os->version},
                        {"description", facts.os->pretty_name},
                        {"downloadLocation", k_noassertion},
                        {"filesAnalyzed", false},
                        {"supplier", k_noassertion},
                        {"primaryPackagePurpose", "OPERATING_SYSTEM"}});
    relationships.push_back(relationship(k_record_package_id, "CONTAINS", k_os_package_id));
  }
  std::map<std::string, const Licence::Other*> other_licences;  // by id: the first package's text
  std::map<std::string, std::string> id_of;                     // package key -> SPDX identifier
  std::set<std::string> ids;
  for (const auto& p : facts.packages) {
    // Keys that differ only in characters SPDX identifiers cannot hold ("dep:a_b", "dep:a-b") stay apart.
    std::string id = "SPDXRef-Package-" + spdx_id_part(p.key);
    for (int n = 2; !ids.insert(id).second; ++n)
      id = "SPDXRef-Package-" + spdx_id_part(p.key) + "-" + std::to_string(n);
    id_of.emplace(p.key, id);
    nlohmann::json package = {{"SPDXID", id},
                              {"name", p.name},
                              {"downloadLocation", p.download_location.empty() ? k_noassertion : p.download_location},
                              {"filesAnalyzed", false},
                              {"supplier", spdx_supplier(p.supplier)}};
    if (!p.version.empty()) package["versionInfo"] = p.version;
    // Only what is known: an absent licence field asserts nothing, and each byte is pushed with every
    // change of the image.
    if (!p.licence.expression.empty()) package["licenseDeclared"] = p.licence.expression;
    if (!p.source_info.empty()) package["sourceInfo"] = p.source_info;
    if (!p.purl.empty()) {
      package["externalRefs"] = {
          {{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", p.purl}}};
    }
    if (!p.checksums.empty()) {
      auto checksums = nlohmann::json::array();
      for (const auto& [algorithm, value] : p.checksums)
        checksums.push_back({{"algorithm", algorithm}, {"checksumValue", value}});
      package["checksums"] = std::move(checksums);
    }
    for (const auto& other : p.licence.others) other_licences.try_emplace(other.id, &other);
    packages.push_back(std::move(package));
    relationships.push_back(relationship(k_record_package_id, "CONTAINS", id));
  }

  // A Debian package's files are its own (dpkg lists them with their checksums): the document names the
  // package once, and lists, with their checksums, only the files of no Debian package; a dependency's
  // few files are listed, held by its package.
  nlohmann::json files = nlohmann::json::array();
  std::size_t number = 0;
  for (const auto& f : facts.files) {
    if (!f.packages.empty()) continue;
    const std::string id = "SPDXRef-File-" + std::to_string(++number);
    files.push_back({{"SPDXID", id},
                     {"fileName", "./" + f.path},
                     {"checksums",
                      {{{"algorithm", "SHA1"}, {"checksumValue", f.sha1}},
                       {{"algorithm", "SHA256"}, {"checksumValue", f.sha256}}}}});
    const auto holder = f.dependency.empty() ? id_of.end() : id_of.find(f.dependency);
    relationships.push_back(
        relationship(holder == id_of.end() ? std::string(k_record_package_id) : holder->second, "CONTAINS", id));
  }
  nlohmann::json document = {{"spdxVersion", "SPDX-2.3"},
                             {"dataLicense", "CC0-1.0"},
                             {"SPDXID", "SPDXRef-DOCUMENT"},
                             {"name", repository + "@" + facts.image.str()},
                             {"documentNamespace", "https://arec.dev/spdx/" + repository + "/" + facts.image.hex()},
                             {"creationInfo", {{"created", rfc3339(facts.created)}, {"creators", {k_tool}}}},
                             {"packages", std::move(packages)},
                             {"files", std::move(files)},
                             {"relationships", std::move(relationships)}};
  if (!other_licences.empty()) {
    auto extracted = nlohmann::json::array();
    for (const auto& [id, other] : other_licences) {
      extracted.push_back({{"licenseId", id}, {"name", other->name}, {"extractedText", other->text}});
    }
    document["hasExtractedLicensingInfos"] = std::move(extracted);
  }
  return document;
}

}  // namespace arec
