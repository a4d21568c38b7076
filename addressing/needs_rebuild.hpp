// needs-rebuild: the references that would break if the registry moved, found before it does.
//
// A reference is the mesh's when its domain is the registry's: the address or name of a node that
// holds or held the registry (was given a `registry` port) at that port, or a loopback address or
// localhost at a registry port. Of those:
//   genesis-pinned      a single-segment repository: no record can be behind it (rule 2)
//   no-build            module/name with no record in the store (or an image request without one)
//   hard-coded-address  a literal mesh address with a record behind it, or a literal ADDR:PORT of the
//                       registry in a declaration: replace it with a request
// A literal ADDR:PORT of another service is listed as other-service: it does not move with the
// registry, so it breaks nothing (information, never counted). What compose wrote into a composed output
// (a file that is its template, beside it as FILE.in or named by a compose depfile, with each request
// filled) is listed as composed: composing again after the move writes it anew (never counted). Everything else is
// external, and so is a reference naming the settings' registry_name, which each node's runtime maps to wherever the
// registry is. Requests that compose the registry's address into an image (arec://endpoint/registry/PATH) are
// classified by PATH as references are.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "addressing/composed.hpp"
#include "addressing/nodes.hpp"
#include "addressing/reference.hpp"
#include "oci/record.hpp"
#include "util/error.hpp"

namespace arec {

// The largest file read as a declaration; a larger one is skipped, and said to be (skipped_for_size).
inline constexpr std::uintmax_t k_max_declaration_size = 16u << 20;

enum class FindingKind { genesis_pinned, no_build, hard_coded_address, other_service, composed, external };

std::string_view kind_name(FindingKind kind);
// Whether a finding of this kind breaks on a registry move (other-service, composed and external ones do
// not).
bool breaks(FindingKind kind);

// One occurrence of a reference.
struct Finding {
  std::string reference;
  std::string source;      // "file:line" (1-based), "--ref", or "catalog"
  std::string file;        // empty for --ref and catalog
  std::size_t line = 0;    // 1-based; 0 when not in a file
  std::size_t column = 0;  // 1-based, in bytes; 0 when not in a file
  FindingKind kind = FindingKind::external;
  std::string action;
};

// How many different references the findings hold, and in how many places.
struct FindingCount {
  std::size_t references = 0;
  std::size_t occurrences = 0;
};

// The findings that would break on a move (other-service and external ones are not counted).
FindingCount count_breaking(const std::vector<Finding>& findings);

class RebuildQuery {
 public:
  enum class External { omit, include };
  // `records`: every record whose digest a pinned reference may name (the whole history). With
  // External::omit, a file is parsed only when it holds a text that can start a finding (an address of
  // a node at one of its ports, or arec://), which makes a large tree cost about a text search.
  RebuildQuery(const NodeSettings& settings, const std::vector<Record>& records, External scan = External::include);
  // An image index the store made over the records of `repository`'s platforms: a reference pinned to
  // its digest names a recorded build too (compose writes such digests for a module/name of several
  // platforms).
  void add_image_index(std::string_view repository, std::string_view digest);

  // Declarations: a file, or every file under a directory. Every text file gives each full reference
  // written in it (scan_references), its image requests and requests that compose the registry's
  // address into an image, and its literal ADDR:PORT of a service. YAML and JSON files (*.yaml, *.yml,
  // *.json, and those with a further .in) must parse, and give Helm's `repository` + `tag` as one.
  // References in shell and compose defaults (${VAR:-REF}, ${VAR-REF}, ${VAR:=REF}, ${VAR=REF}) count
  // as written there. Files holding a NUL byte are not declarations; files of more than
  // k_max_declaration_size are not read, and are listed by skipped_for_size().
  Status scan_path(const std::filesystem::path& path);
  // The same for several paths, less the files and directories a glob of `excludes` matches: a glob
  // matches a path when it matches (fnmatch, `*` not crossing '/') the path or any tail of it that starts
  // at a component (`*.yaml`, `generated`, `deploy/*.yaml`). A composed output among them (its template
  // beside it as FILE.in, or named by a compose depfile, *.d, among them) whose bytes are what compose
  // writes from that template has what compose filled in it listed as composed; its template is read
  // too, unless excluded.
  Status scan_paths(const std::vector<std::filesystem::path>& paths, const std::vector<std::string>& excludes = {});
  Status scan_text(std::string_view text, std::string_view file);
  // The declarations read so far (text files given or found under a directory), and the files and
  // directories excluded (a directory counts once).
  std::size_t files_read() const { return m_files_read; }
  std::size_t files_excluded() const { return m_files_excluded; }
  // The composed outputs recognised, each with its template, in the order read; and the templates
  // (files holding requests) read with no output recognised.
  const std::vector<ComposedFrom>& composed_outputs() const { return m_composed; }
  const std::vector<std::filesystem::path>& templates() const { return m_templates; }
  // The files left unread for their size (more than k_max_declaration_size), in the order met.
  const std::vector<std::filesystem::path>& skipped_for_size() const { return m_skipped_for_size; }
  // A reference given on the command line; an invalid one is an error.
  Status add_reference(std::string_view reference, std::string_view source);
  // A repository (and tag) in the registry's own catalog, at `registry` (host:port).
  void add_catalog_entry(std::string_view registry, std::string_view repository, std::string_view tag);

  // One row per occurrence: those in files sorted by file, line and column, then --ref values, then
  // the catalog; external ones only when asked for (and when the query was made to include them).
  std::vector<Finding> findings(External external) const;

 private:
  class LineIndex;
  struct HelmImage {
    std::string repository;
    std::string tag;
    std::string registry;  // the three-key form: `registry:` beside `repository:` and `tag:`
  };
  struct Classified {
    FindingKind kind;
    std::string action;
  };
  // Where a reference was met: a record's own repository in the catalog is no finding.
  enum class FoundIn { declaration, catalog };
  std::optional<Classified> classify(const Reference& ref, FoundIn found_in) const;
  void add(std::string reference, std::string_view file, std::size_t line, std::size_t column, Classified what);
  void add_elsewhere(std::string reference, std::string source, Classified what);
  bool is_registry_domain(const Reference& ref) const;
  bool names_registry(const Reference& ref) const;  // its domain is the settings' registry_name
  bool has_record(std::string_view repository) const;
  bool has_digest(std::string_view repository, std::string_view digest) const;
  // What to rebuild `ref` as: its module/name, or for a single segment the store's module where the
  // records name one ("<module>/NAME" where they do not).
  std::string rebuild_as(const Reference& ref) const;
  bool may_hold_finding(std::string_view text) const;
  // Reads and scans one file; `read`, when given, gets the text read (untouched for a file not read).
  Status scan_file(const std::filesystem::path& file, std::string& buffer, std::string_view* read = nullptr);
  // Lists what compose filled into `output` (its text) from `template_path` as composed.
  void mark_composed(const std::string& output, std::string_view text, const std::filesystem::path& template_path,
                     std::size_t first_finding);
  std::map<std::size_t, HelmImage> helm_images(std::string_view text) const;
  void scan_requests_in(std::string_view text, std::string_view file, const LineIndex& lines);
  void scan_literal_endpoints(std::string_view text, std::string_view file, const LineIndex& lines,
                              const std::set<std::size_t>& reference_domains);

  std::string m_registry_name;               // lower-case registry_name, empty when none
  std::set<std::string> m_registry_domains;  // lower-case host:port of every registry node
  std::set<std::string> m_registry_ports;    // every registry port, for loopback hosts
  std::map<std::string, std::map<std::uint16_t, std::string>> m_endpoints;  // address -> port -> service
  std::map<std::string, std::set<std::string>> m_recorded;                  // module/name -> the digests recorded
  std::vector<bool> m_candidate_ports = std::vector<bool>(65536);           // ports of any node, for may_hold_finding
  External m_scan = External::include;
  bool m_port_free_registry = false;  // a registry at 443: references need no port
  std::size_t m_files_read = 0;
  std::size_t m_files_excluded = 0;
  std::vector<ComposedFrom> m_composed;
  std::vector<std::filesystem::path> m_templates;
  std::vector<std::filesystem::path> m_skipped_for_size;
  std::vector<Finding> m_findings;  // in the order found
};

}  // namespace arec
