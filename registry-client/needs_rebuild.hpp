// needs-rebuild: the references that would break if the registry moved, found before it does.
//
// A reference is the mesh's when its domain is a node's address or name, a loopback address or
// localhost, at any port. Of those:
//   genesis-pinned      a single-segment repository: no record can be behind it (rule 2)
//   no-build            module/name with no record in the store (or an image request without one)
//   hard-coded-address  a literal mesh address with a record behind it, or a literal ADDR:PORT of a
//                       service in a declaration: replace it with a request
// Everything else is external.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/error.hpp"
#include "recorder/record.hpp"
#include "registry-client/nodes.hpp"

namespace arec {

// Strongest first: a reference found as several kinds is reported as the first of them.
enum class FindingKind { genesis_pinned, no_build, hard_coded_address, external };

std::string_view kind_name(FindingKind kind);

struct Finding {
  std::string reference;
  std::string source;  // "file:line" (1-based), "--ref", or "catalog"
  FindingKind kind = FindingKind::external;
  std::string action;
};

class RebuildQuery {
 public:
  RebuildQuery(const NodeSettings& settings, const std::vector<Record>& records);

  // Declarations: a file, or every file under a directory. YAML and JSON files (*.yaml, *.yml,
  // *.json, and those with a further .in) give the values of `image` keys at any depth, in every
  // document; every text file gives its image requests and its literal ADDR:PORT of a service.
  Status scan_path(const std::filesystem::path& path);
  Status scan_text(std::string_view text, std::string_view file);
  // A reference given on the command line; an invalid one is an error.
  Status add_reference(std::string_view reference, std::string_view source);
  // A repository (and tag) in the registry's own catalog, at `registry` (host:port).
  void add_catalog_entry(std::string_view registry, std::string_view repository, std::string_view tag);

  // Each reference once, with its strongest kind; external ones only when asked for.
  std::vector<Finding> findings(bool include_external) const;

 private:
  struct Place {
    std::string file;
    std::size_t line;
  };
  void classify(std::string_view reference, const std::string& source, bool from_catalog);
  void add(Finding finding);
  bool is_mesh_host(std::string_view host) const;
  bool has_record(std::string_view repository) const;
  void scan_image_keys(std::string_view text, std::string_view file, std::vector<Place>& image_lines);
  void scan_literal_endpoints(std::string_view text, std::string_view file, const std::vector<Place>& image_lines);

  std::set<std::string> m_mesh_hosts;                      // lower-case: node addresses and names
  std::map<std::string, std::map<std::uint16_t, std::string>> m_endpoints;  // address -> port -> service
  std::set<std::string> m_recorded;                        // module/name with a record
  std::map<std::string, Finding> m_findings;               // by reference
  std::vector<std::string> m_order;                        // references in the order first found
};

}  // namespace arec
