#include "addressing/needs_rebuild.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <tuple>

#include "addressing/compose.hpp"
#include "recorder/fs.hpp"

namespace arec {

namespace {

constexpr std::uintmax_t k_max_declaration_size = 16u << 20;
constexpr std::string_view k_registry = "registry";
// A reference written without a port means HTTPS at 443: the registry's only where it was given 443.
constexpr std::string_view k_default_port = "443";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool is_structured(std::string_view file) {
  std::string name(file);
  if (name.ends_with(".in")) name.resize(name.size() - 3);
  return name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json");
}

std::string place(std::string_view file, std::size_t line) { return std::string(file) + ":" + std::to_string(line); }

std::size_t line_at(std::string_view text, std::size_t offset) {
  return static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) + 1;
}

bool is_host_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_path_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@';
}

// The request for a module/name, keeping the tag and digest a reference was written with.
std::string image_request(const Reference& ref) {
  return std::string(k_request_scheme) + "image/" + ref.path + (ref.tag.empty() ? "" : ":" + ref.tag) +
         (ref.digest.empty() ? "" : "@" + ref.digest);
}

// What to rebuild a repository as: its module/name when it has two segments, otherwise what is known.
std::string rebuild_action(const Reference& ref) {
  const std::string as = ref.segments() == 1   ? "<module>/" + ref.path
                         : ref.segments() == 2 ? ref.path
                                               : std::string("<module>/<name>");
  return "rebuild it through arec (arec_record) as " + as + ", then use " + std::string(k_request_scheme) + "image/" + as;
}

}  // namespace

// Lines and columns of offsets in one text, found by a search rather than counted from the start each
// time, which a file with many findings would make quadratic.
class RebuildQuery::LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1)) m_starts.push_back(at + 1);
  }
  std::size_t line(std::size_t offset) const {
    return static_cast<std::size_t>(std::upper_bound(m_starts.begin(), m_starts.end(), offset) - m_starts.begin());
  }
  std::size_t column(std::size_t offset) const { return offset - m_starts[line(offset) - 1] + 1; }

 private:
  std::vector<std::size_t> m_starts{0};  // where each line starts
};

std::string_view kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::genesis_pinned: return "genesis-pinned";
    case FindingKind::no_build: return "no-build";
    case FindingKind::hard_coded_address: return "hard-coded-address";
    case FindingKind::external: break;
  }
  return "external";
}

FindingCount count_breaking(const std::vector<Finding>& findings) {
  FindingCount count;
  std::set<std::string> references;
  for (const auto& f : findings) {
    if (f.kind == FindingKind::external) continue;
    ++count.occurrences;
    references.insert(f.reference);
  }
  count.references = references.size();
  return count;
}

RebuildQuery::RebuildQuery(const NodeSettings& settings, const std::vector<Record>& records) : m_registry_name(lower(settings.registry_name)) {
  std::map<std::uint16_t, std::string> loopback_ports;
  // The composing node's own ports first: on loopback, a port means what this node was given.
  if (const auto self = settings.nodes.find(settings.self); self != settings.nodes.end()) {
    for (const auto& [service, port] : self->second.ports) loopback_ports.emplace(port, service);
  }
  for (const auto& [name, node] : settings.nodes) {
    for (const auto& [service, port] : node.ports) loopback_ports.emplace(port, service);
    // A node given a registry port holds the registry or held it before a move.
    if (const auto registry = node.ports.find(std::string(k_registry)); registry != node.ports.end()) {
      const std::string port = std::to_string(registry->second);
      m_registry_ports.insert(port);
      m_registry_domains.insert(lower(name) + ":" + port);
      if (!node.address.empty()) m_registry_domains.insert(lower(host_for_port(node.address)) + ":" + port);
    }
    if (node.address.empty()) continue;
    for (const auto& [service, port] : node.ports) m_endpoints[host_for_port(node.address)].emplace(port, service);
  }
  for (const char* loopback : {"127.0.0.1", "localhost", "[::1]"}) m_endpoints[loopback] = loopback_ports;
  for (const auto& r : records) m_recorded.insert(r.repository());
}

bool RebuildQuery::is_registry_domain(const Reference& ref) const {
  if (ref.domain.empty()) return false;
  const std::string host = lower(ref.host());
  const std::string port = ref.port().empty() ? std::string(k_default_port) : ref.port();
  if (is_loopback_host(host)) return m_registry_ports.contains(port);
  return m_registry_domains.contains(host + ":" + port);
}

bool RebuildQuery::has_record(std::string_view repository) const { return m_recorded.contains(std::string(repository)); }

void RebuildQuery::add(std::string reference, std::string_view file, std::size_t line, std::size_t column, Classified what) {
  m_findings.push_back({std::move(reference), place(file, line), std::string(file), line, column, what.kind, std::move(what.action)});
}

void RebuildQuery::add_elsewhere(std::string reference, std::string source, Classified what) {
  m_findings.push_back({std::move(reference), std::move(source), "", 0, 0, what.kind, std::move(what.action)});
}

bool RebuildQuery::names_registry(const Reference& ref) const {
  return !m_registry_name.empty() && lower(ref.domain) == m_registry_name;
}

std::optional<RebuildQuery::Classified> RebuildQuery::classify(const Reference& ref, FoundIn found_in) const {
  // Each node's runtime maps the registry's name to wherever it is: such a reference follows a move.
  if (names_registry(ref)) return Classified{FindingKind::external, "none: it names the registry by registry_name, which follows it"};
  if (!is_registry_domain(ref)) return Classified{FindingKind::external, "none: it does not name the mesh's registry"};
  if (ref.segments() == 1) return Classified{FindingKind::genesis_pinned, rebuild_action(ref)};
  if (ref.segments() == 2 && has_record(ref.path)) {
    if (found_in == FoundIn::catalog) return std::nullopt;  // pushed by arec: fine
    return Classified{FindingKind::hard_coded_address, "replace it with " + image_request(ref)};
  }
  return Classified{FindingKind::no_build, rebuild_action(ref)};
}

Status RebuildQuery::add_reference(std::string_view reference, std::string_view source) {
  auto ref = Reference::parse(reference);
  if (!ref) return fail(std::move(ref.error()).context(std::string(source)));
  if (auto what = classify(*ref, FoundIn::declaration)) add_elsewhere(ref->str(), std::string(source), std::move(*what));
  return {};
}

void RebuildQuery::add_catalog_entry(std::string_view registry, std::string_view repository, std::string_view tag) {
  std::string reference = std::string(registry) + "/" + std::string(repository);
  if (!tag.empty()) reference += ":" + std::string(tag);
  auto ref = Reference::parse(reference);
  if (!ref) return;
  if (auto what = classify(*ref, FoundIn::catalog)) add_elsewhere(ref->str(), "catalog", std::move(*what));
}

// Helm's split form: a mapping with `repository: ADDR:PORT/agent` and `tag: 1.2` beside it is the one
// reference ADDR:PORT/agent:1.2. Keyed by where the repository's value starts in the text.
std::map<std::size_t, RebuildQuery::HelmImage> RebuildQuery::helm_images(std::string_view text) const {
  std::map<std::size_t, HelmImage> images;
  // Throws YAML::Exception on malformed input; scan_text reports it with its line.
  const auto documents = YAML::LoadAll(std::string(text));
  std::vector<YAML::Node> pending(documents.begin(), documents.end());
  // Iterative, so that deep nesting in a hostile file cannot exhaust the stack.
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsSequence()) {
      for (const auto& item : node) pending.push_back(item);
    } else if (node.IsMap()) {
      const YAML::Node repository = node["repository"];
      const YAML::Node tag = node["tag"];
      if (repository && tag && repository.IsScalar() && tag.IsScalar() && is_tag(tag.Scalar()) && repository.Mark().pos >= 0) {
        images.emplace(static_cast<std::size_t>(repository.Mark().pos), HelmImage{repository.Scalar(), tag.Scalar()});
      }
      for (const auto& entry : node) pending.push_back(entry.second);
    }
  }
  return images;
}

// Image requests without a record, and requests that compose the registry's address into an image.
void RebuildQuery::scan_requests_in(std::string_view text, std::string_view file, const LineIndex& lines) {
  for (const auto& request : scan_requests(text)) {
    const std::size_t column = lines.column(request.offset);
    if (request.kind == Request::Kind::image) {
      const std::string repository = std::string(request.module) + "/" + std::string(request.name);
      if (has_record(repository)) continue;  // fine: compose fills it from the record
      add(std::string(request.text(text)), file, request.line, column,
          {FindingKind::no_build, "record " + repository + " with arec (arec_record); compose cannot fill it until then"});
      continue;
    }
    // The registry's API in a URL ("https://arec://endpoint/registry/v2/") is not an image.
    if (request.service != k_registry || text.substr(0, request.offset).ends_with("://")) continue;
    // arec://endpoint/registry/PATH, or arec://address/registry:PORT/PATH.
    std::size_t at = request.offset + request.length;
    if (request.kind == Request::Kind::address && at < text.size() && text[at] == ':') {
      const std::size_t digits = at + 1;
      while (at + 1 < text.size() && is_digit(text[at + 1])) ++at;
      if (at + 1 == digits) continue;
      ++at;
    } else if (request.kind != Request::Kind::endpoint) {
      continue;
    }
    if (at >= text.size() || text[at] != '/') continue;
    std::size_t end = at + 1;
    while (end < text.size() && is_path_char(text[end])) ++end;
    while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == ':' || text[end - 1] == '@')) --end;
    // The path read as it would be at a registry; "localhost" only stands in for the address.
    auto ref = Reference::parse("localhost" + std::string(text.substr(at, end - at)));
    if (!ref) continue;  // not an image: the registry's API, say
    ref->tag.clear();
    ref->digest.clear();
    const std::string written(text.substr(request.offset, end - request.offset));
    if (ref->segments() == 1) {
      add(written, file, request.line, column, {FindingKind::genesis_pinned, rebuild_action(*ref)});
    } else if (ref->segments() == 2 && has_record(ref->path)) {
      add(written, file, request.line, column,
          {FindingKind::hard_coded_address, "use " + std::string(k_request_scheme) + "image/" + ref->path});
    } else {
      add(written, file, request.line, column, {FindingKind::no_build, rebuild_action(*ref)});
    }
  }
}

void RebuildQuery::scan_literal_endpoints(std::string_view text, std::string_view file, const LineIndex& lines,
                                          const std::set<std::size_t>& reference_domains) {
  for (const auto& [host, ports] : m_endpoints) {
    const std::string needle = host + ":";
    for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
      if (at > 0 && (is_host_char(text[at - 1]) || text[at - 1] == ':')) continue;
      // The domain of a reference to the registry is reported with the reference, never on its own.
      if (reference_domains.contains(at)) continue;
      std::size_t end = at + needle.size();
      while (end < text.size() && is_digit(text[end])) ++end;
      if (end == at + needle.size() || end - at - needle.size() > 5) continue;
      const auto port = std::stoul(std::string(text.substr(at + needle.size(), end - at - needle.size())));
      const auto service = ports.find(static_cast<std::uint16_t>(port));
      if (port > 65535 || service == ports.end()) continue;
      add(std::string(text.substr(at, end - at)), file, lines.line(at), lines.column(at),
          {FindingKind::hard_coded_address, "replace it with arec://endpoint/" + service->second});
    }
  }
}

Status RebuildQuery::scan_text(std::string_view text, std::string_view file) {
  std::map<std::size_t, HelmImage> helm;
  if (is_structured(file)) {
    try {
      helm = helm_images(text);
    } catch (const YAML::Exception& e) {
      // Marks are 0-based. At the end of the input the mark is past the last newline, a line the file
      // does not have: name the last line with content instead.
      const std::size_t last = line_at(text, std::min(text.find_last_not_of(" \t\r\n"), text.size()));
      const std::size_t line = std::min(static_cast<std::size_t>(std::max(e.mark.line, 0)) + 1, last);
      return fail_input(place(file, line) + ": malformed YAML: " + e.msg);
    }
  }
  std::set<std::size_t> reference_domains;
  for (auto& found : scan_references(text)) {
    Reference& ref = found.reference;
    // A quoted value starts one byte after its mark.
    auto image = helm.find(found.offset);
    if (image == helm.end() && found.offset > 0) image = helm.find(found.offset - 1);
    if (image != helm.end() && image->second.repository == ref.str() && ref.tag.empty() && ref.digest.empty()) {
      ref.tag = image->second.tag;
    }
    if (is_registry_domain(ref) || names_registry(ref)) reference_domains.insert(found.offset);
    if (auto what = classify(ref, FoundIn::declaration)) add(ref.str(), file, found.line, found.column, std::move(*what));
  }
  const LineIndex lines(text);
  scan_requests_in(text, file, lines);
  scan_literal_endpoints(text, file, lines, reference_domains);
  return {};
}

Status RebuildQuery::scan_path(const std::filesystem::path& path) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path, ec)) {
    for (auto it = std::filesystem::recursive_directory_iterator(path, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_directory() && it->path().filename().string().starts_with(".")) {
        it.disable_recursion_pending();  // .git and the like hold no declarations
      } else if (it->is_regular_file()) {
        files.push_back(it->path());
      }
    }
    if (ec) return fail_input("reading " + path.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    return fail_input(path.string() + ": no such file or directory");
  }
  for (const auto& file : files) {
    if (std::filesystem::file_size(file, ec) > k_max_declaration_size) continue;
    auto text = fs::read_file(file);
    if (!text) return fail(text.error());
    if (text->find('\0') != std::string::npos) continue;  // not text
    if (auto s = scan_text(*text, file.string()); !s) return s;
  }
  return {};
}

std::vector<Finding> RebuildQuery::findings(External external) const {
  std::vector<Finding> out;
  for (const auto& f : m_findings) {
    if (external == External::include || f.kind != FindingKind::external) out.push_back(f);
  }
  // Files first, in order; then --ref values and the catalog as they were given.
  const auto rank = [](const Finding& f) { return f.file.empty() ? (f.source == "catalog" ? 2 : 1) : 0; };
  std::stable_sort(out.begin(), out.end(), [&](const Finding& a, const Finding& b) {
    return std::tuple(rank(a), a.file, a.line, a.column) < std::tuple(rank(b), b.file, b.line, b.column);
  });
  return out;
}

}  // namespace arec
