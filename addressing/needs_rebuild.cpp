#include "addressing/needs_rebuild.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <tuple>

#include "addressing/compose.hpp"
#include "util/ascii.hpp"
#include "util/fs.hpp"

namespace arec {

namespace {

constexpr std::string_view k_registry = "registry";
// A reference written without a port means HTTPS at 443: the registry's only where it was given 443.
constexpr std::string_view k_default_port = "443";

using ascii::is_digit;
using ascii::lower;

bool is_structured(std::string_view file) {
  std::string name(file);
  if (name.ends_with(".in")) name.resize(name.size() - 3);
  return name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".json");
}

// yaml-cpp 0.7's LoadAll never returns on a stream where no node can start (a line holding only ","): the
// parser reports an empty document there without consuming anything, again and again, growing memory
// until the process is killed. A first pass over the parser's events refuses a document that starts
// where the one before it did; only then does LoadAll build the nodes, on a stream known to end.
class DocumentStarts final : public YAML::EventHandler {
 public:
  explicit DocumentStarts(std::string_view text) : text_(text) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (mark.pos == last_) {
      const auto at = std::min(static_cast<std::size_t>(std::max(mark.pos, 0)), text_.size());
      throw YAML::ParserException(mark, "no node can start at \"" + printable(text_.substr(at, 1)) + "\"");
    }
    last_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  std::string_view text_;
  int last_ = -1;
};

std::vector<YAML::Node> load_all(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts(text);
  while (parser.HandleNextDocument(starts)) {
  }
  return YAML::LoadAll(text);
}

std::string place(std::string_view file, std::size_t line) { return std::string(file) + ":" + std::to_string(line); }

std::size_t line_at(std::string_view text, std::size_t offset) {
  return static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) +
         1;
}

bool is_host_char(char c) { return ascii::is_alnum(c) || c == '.' || c == '-' || c == '_'; }
// Characters that may continue a reference's path, tag or digest.
bool is_reference_char(char c) {
  return ascii::is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@';
}

// The request for a module/name, keeping the tag and digest a reference was written with.
std::string image_request(const Reference& ref) {
  return std::string(k_request_scheme) + "image/" + ref.path + (ref.tag.empty() ? "" : ":" + ref.tag) +
         (ref.digest.empty() ? "" : "@" + ref.digest);
}

// The digest a referrer is kept under where a registry has no referrers API: "sha256-<64 hex>". arec
// pushes these itself beside the records; they name no image anyone deploys.
bool is_referrer_tag(std::string_view tag) {
  constexpr std::string_view prefix = "sha256-";
  return tag.size() == prefix.size() + 64 && tag.starts_with(prefix) &&
         std::all_of(tag.begin() + static_cast<std::ptrdiff_t>(prefix.size()), tag.end(), ascii::is_lower_hex);
}

// A text with the defaults of shell and compose variables written in place: "${REGISTRY:-ADDR:PORT}/x"
// reads "ADDR:PORT/x", so that the reference a default spells is found as one. `origin` maps each byte
// of `text` (and its end) to its offset in the original. One pass: linear in the text.
struct Expanded {
  std::string text;
  std::vector<std::size_t> origin;
};

std::optional<Expanded> expand_defaults(std::string_view text) {
  if (text.find("${") == std::string_view::npos) return std::nullopt;
  Expanded out;
  out.text.reserve(text.size());
  out.origin.reserve(text.size() + 1);
  std::vector<bool> open;  // for each "${" not yet closed: whether its closing brace goes too
  std::size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (c == '$' && at + 1 < text.size() && text[at + 1] == '{') {
      std::size_t end = at + 2;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) ++end;
      std::size_t value = 0;  // where the default starts, when this is ${NAME:-, ${NAME-, ${NAME:= or ${NAME=
      if (end > at + 2 && end < text.size()) {
        if (text[end] == ':' && end + 1 < text.size() && (text[end + 1] == '-' || text[end + 1] == '=')) {
          value = end + 2;
        } else if (text[end] == '-' || text[end] == '=') {
          value = end + 1;
        }
      }
      open.push_back(value != 0);
      if (value != 0) {
        at = value;
        continue;
      }
    } else if (c == '}' && !open.empty()) {
      const bool drop = open.back();
      open.pop_back();
      if (drop) {
        ++at;
        continue;
      }
    }
    out.text.push_back(c);
    out.origin.push_back(at);
    ++at;
  }
  out.origin.push_back(text.size());
  return out;
}

// The advice for a reference to rebuild through arec, as `as` (a module/name, or a pattern of one).
std::string rebuild_action(const std::string& as) {
  return "rebuild it through arec (arec_record) as " + as + ", then use " + std::string(k_request_scheme) + "image/" +
         as;
}

}  // namespace

// Lines and columns of offsets in one text, found by a search rather than counted from the start each
// time, which a file with many findings would make quadratic.
class RebuildQuery::LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1))
      m_starts.push_back(at + 1);
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
    case FindingKind::other_service: return "other-service";
    case FindingKind::composed: return "composed";
    case FindingKind::external: break;
  }
  return "external";
}

bool breaks(FindingKind kind) {
  return kind != FindingKind::external && kind != FindingKind::other_service && kind != FindingKind::composed;
}

FindingCount count_breaking(const std::vector<Finding>& findings) {
  FindingCount count;
  std::set<std::string> references;
  for (const auto& f : findings) {
    if (!breaks(f.kind)) continue;
    ++count.occurrences;
    references.insert(f.reference);
  }
  count.references = references.size();
  return count;
}

RebuildQuery::RebuildQuery(const NodeSettings& settings, const std::vector<Record>& records, External scan)
    : m_registry_name(lower(settings.registry_name)), m_scan(scan) {
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
      if (port == k_default_port) m_port_free_registry = true;
      m_registry_domains.insert(lower(name) + ":" + port);
      if (!node.address.empty()) m_registry_domains.insert(lower(host_for_port(node.address)) + ":" + port);
    }
    if (node.address.empty()) continue;
    for (const auto& [service, port] : node.ports) m_endpoints[host_for_port(node.address)].emplace(port, service);
  }
  for (const char* loopback : {"127.0.0.1", "localhost", "[::1]"}) m_endpoints[loopback] = loopback_ports;
  for (const auto& [port, service] : loopback_ports) m_candidate_ports[port] = true;
  for (const auto& r : records) m_recorded[r.repository()].insert(r.manifest.digest.str());
}

// Every finding holds a ':' that starts ":PORT" (a port some node was given) or "://" after "arec",
// unless a registry is at 443, where a reference names it without a port. memchr finds the colons at
// the speed of a text search; only a file with such a colon is parsed.
bool RebuildQuery::may_hold_finding(std::string_view text) const {
  if (m_port_free_registry) return true;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  for (const char* p = begin;
       (p = static_cast<const char*>(std::memchr(p, ':', static_cast<std::size_t>(end - p)))) != nullptr; ++p) {
    if (end - p >= 3 && p[1] == '/' && p[2] == '/' && p - begin >= 4 && std::memcmp(p - 4, "arec", 4) == 0) return true;
    std::size_t port = 0;
    const char* digit = p + 1;
    while (digit < end && digit - p <= 5 && is_digit(*digit))
      port = port * 10 + static_cast<std::size_t>(*digit++ - '0');
    if (digit > p + 1 && (digit == end || !is_digit(*digit)) && port < m_candidate_ports.size() &&
        m_candidate_ports[port])
      return true;
  }
  return false;
}

bool RebuildQuery::is_registry_domain(const Reference& ref) const {
  if (ref.domain.empty()) return false;
  const std::string host = lower(ref.host());
  const std::string port = ref.port().empty() ? std::string(k_default_port) : ref.port();
  if (is_loopback_host(host)) return m_registry_ports.contains(port);
  return m_registry_domains.contains(host + ":" + port);
}

void RebuildQuery::add_image_index(std::string_view repository, std::string_view digest) {
  m_recorded[std::string(repository)].insert(std::string(digest));
}

bool RebuildQuery::has_record(std::string_view repository) const {
  return m_recorded.contains(std::string(repository));
}

std::string RebuildQuery::rebuild_as(const Reference& ref) const {
  if (ref.segments() == 2) return ref.path;
  if (ref.segments() != 1) return "<module>/<name>";
  // A single segment names no module: the store's, where the records say which. A record of that name
  // in one module names it; else the one module every record is of.
  std::set<std::string> named, modules;
  for (const auto& [repository, digests] : m_recorded) {
    const auto slash = repository.find('/');
    if (slash == std::string::npos) continue;
    const std::string module = repository.substr(0, slash);
    modules.insert(module);
    if (repository.substr(slash + 1) == ref.path) named.insert(module);
  }
  if (named.size() == 1) return *named.begin() + "/" + ref.path;
  if (named.empty() && modules.size() == 1) return *modules.begin() + "/" + ref.path;
  return "<module>/" + ref.path;
}

bool RebuildQuery::has_digest(std::string_view repository, std::string_view digest) const {
  const auto found = m_recorded.find(std::string(repository));
  return found != m_recorded.end() && found->second.contains(std::string(digest));
}

void RebuildQuery::add(std::string reference, std::string_view file, std::size_t line, std::size_t column,
                       Classified what) {
  m_findings.push_back(
      {std::move(reference), place(file, line), std::string(file), line, column, what.kind, std::move(what.action)});
}

void RebuildQuery::add_elsewhere(std::string reference, std::string source, Classified what) {
  m_findings.push_back({std::move(reference), std::move(source), "", 0, 0, what.kind, std::move(what.action)});
}

bool RebuildQuery::names_registry(const Reference& ref) const {
  return !m_registry_name.empty() && lower(ref.domain) == m_registry_name;
}

std::optional<RebuildQuery::Classified> RebuildQuery::classify(const Reference& ref, FoundIn found_in) const {
  // Each node's runtime maps the registry's name to wherever it is: such a reference follows a move.
  if (names_registry(ref))
    return Classified{FindingKind::external, "none: it names the registry by registry_name, which follows it"};
  if (!is_registry_domain(ref)) return Classified{FindingKind::external, "none: it does not name the mesh's registry"};
  if (ref.segments() == 1) return Classified{FindingKind::genesis_pinned, rebuild_action(rebuild_as(ref))};
  if (ref.segments() == 2 && has_record(ref.path)) {
    if (found_in == FoundIn::catalog) return std::nullopt;  // pushed by arec: fine
    // A request for a digest no record has is one compose refuses: the digest must be built first.
    if (!ref.digest.empty() && !has_digest(ref.path, ref.digest)) {
      return Classified{FindingKind::no_build,
                        "no record of " + ref.path + " has " + ref.digest + ": " + rebuild_action(rebuild_as(ref))};
    }
    return Classified{FindingKind::hard_coded_address, "replace it with " + image_request(ref)};
  }
  return Classified{FindingKind::no_build, rebuild_action(rebuild_as(ref))};
}

Status RebuildQuery::add_reference(std::string_view reference, std::string_view source) {
  auto ref = Reference::parse(reference);
  if (!ref) return fail(std::move(ref.error()).context(std::string(source)));
  if (auto what = classify(*ref, FoundIn::declaration))
    add_elsewhere(ref->str(), std::string(source), std::move(*what));
  return {};
}

void RebuildQuery::add_catalog_entry(std::string_view registry, std::string_view repository, std::string_view tag) {
  if (is_referrer_tag(tag)) return;  // arec's own: an SBOM kept beside a record
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
  std::vector<YAML::Node> pending = load_all(std::string(text));
  // Iterative, so that deep nesting in a hostile file cannot exhaust the stack.
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsSequence()) {
      for (const auto& item : node) pending.push_back(item);
    } else if (node.IsMap()) {
      const YAML::Node registry = node["registry"];
      const YAML::Node repository = node["repository"];
      const YAML::Node tag = node["tag"];
      const bool has_tag = tag && tag.IsScalar() && is_tag(tag.Scalar());
      if (registry && repository && registry.IsScalar() && repository.IsScalar() && registry.Mark().pos >= 0) {
        // The three-key form names one image: registry/repository:tag, met where `registry:` is.
        images.emplace(static_cast<std::size_t>(registry.Mark().pos),
                       HelmImage{repository.Scalar(), has_tag ? tag.Scalar() : std::string(), registry.Scalar()});
      } else if (repository && has_tag && repository.IsScalar() && repository.Mark().pos >= 0) {
        images.emplace(static_cast<std::size_t>(repository.Mark().pos),
                       HelmImage{repository.Scalar(), tag.Scalar(), ""});
      }
      for (const auto& entry : node) pending.push_back(entry.second);
    }
  }
  return images;
}

// Image requests without a record, and requests that compose the registry's address into an image.
// The requests of a text, as scan_requests finds them, each read from a window of its own after its
// scheme: a request left as it is spans its whole word, so reading a run of "arec://arec://…" from the
// text would cost the run's length for each scheme in it, quadratic; a window keeps it linear. No
// request is longer than a window (a repository name, tag and digest are at most 255, 128 and 135).
static std::vector<Request> requests_in(std::string_view text) {
  constexpr std::size_t k_window = 1024;
  std::vector<Request> out;
  for (std::size_t at = text.find(k_request_scheme); at != std::string_view::npos;) {
    auto found = RequestScanner(text.substr(at, k_window)).next();
    if (!found) break;
    Request r = std::move(*found);
    r.offset += at;
    const bool fillable = r.kind != Request::Kind::unknown && r.kind != Request::Kind::malformed;
    at = text.find(k_request_scheme, r.offset + (fillable ? r.length : k_request_scheme.size()));
    out.push_back(std::move(r));
  }
  return out;
}

void RebuildQuery::scan_requests_in(std::string_view text, std::string_view file, const LineIndex& lines) {
  for (auto& request : requests_in(text)) {
    request.line = lines.line(request.offset);
    const std::size_t column = lines.column(request.offset);
    if (request.kind == Request::Kind::image) {
      const std::string repository = std::string(request.module) + "/" + std::string(request.name);
      if (request.digest.empty() ? has_record(repository) : has_digest(repository, request.digest))
        continue;  // compose fills it
      if (has_record(repository)) {
        add(std::string(request.text(text)), file, request.line, column,
            {FindingKind::no_build, "no record of " + repository + " has " + std::string(request.digest) +
                                        ": rebuild it through arec (arec_record), then use " +
                                        std::string(k_request_scheme) + "image/" + repository});
        continue;
      }
      add(std::string(request.text(text)), file, request.line, column,
          {FindingKind::no_build,
           "record " + repository + " with arec (arec_record); compose cannot fill it until then"});
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
    // Bounded as the window of requests_in is: a run of such requests must not be read once for each.
    std::size_t end = at + 1;
    const std::size_t limit = std::min(text.size(), at + 1024);
    while (end < limit && is_reference_char(text[end])) ++end;
    while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == ':' || text[end - 1] == '@')) --end;
    // The path read as it would be at a registry; "localhost" only stands in for the address.
    auto ref = Reference::parse("localhost" + std::string(text.substr(at, end - at)));
    if (!ref) continue;  // not an image: the registry's API, say
    ref->tag.clear();
    ref->digest.clear();
    const std::string written(text.substr(request.offset, end - request.offset));
    if (ref->segments() == 1) {
      add(written, file, request.line, column, {FindingKind::genesis_pinned, rebuild_action(rebuild_as(*ref))});
    } else if (ref->segments() == 2 && has_record(ref->path)) {
      add(written, file, request.line, column,
          {FindingKind::hard_coded_address, "use " + std::string(k_request_scheme) + "image/" + ref->path});
    } else {
      add(written, file, request.line, column, {FindingKind::no_build, rebuild_action(rebuild_as(*ref))});
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
      // Only the registry moves: another service's address stays right, and is said for information.
      if (service->second != k_registry) {
        add(std::string(text.substr(at, end - at)), file, lines.line(at), lines.column(at),
            {FindingKind::other_service, "none: " + service->second +
                                             " does not move with the registry (arec://endpoint/" + service->second +
                                             " would follow it if it did)"});
        continue;
      }
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
  const LineIndex lines(text);
  // References in ${VAR:-...} defaults are read from the text with the defaults in place; each is
  // reported where it starts in the file.
  const auto expanded = expand_defaults(text);
  const std::string_view searched = expanded ? std::string_view(expanded->text) : text;
  for (auto& found : scan_references(searched)) {
    Reference& ref = found.reference;
    const std::size_t offset = expanded ? expanded->origin[found.offset] : found.offset;
    // A quoted value starts one byte after its mark.
    auto image = helm.find(offset);
    if (image == helm.end() && offset > 0) image = helm.find(offset - 1);
    if (image != helm.end() && image->second.registry.empty() && image->second.repository == ref.str() &&
        ref.tag.empty() && ref.digest.empty()) {
      ref.tag = image->second.tag;
    }
    if (is_registry_domain(ref) || names_registry(ref)) reference_domains.insert(offset);
    if (auto what = classify(ref, FoundIn::declaration))
      add(ref.str(), file, lines.line(offset), lines.column(offset), std::move(*what));
  }
  for (const auto& [mark, image] : helm) {
    if (image.registry.empty()) continue;
    auto ref = Reference::parse(image.registry + "/" + image.repository + (image.tag.empty() ? "" : ":" + image.tag));
    if (!ref) continue;
    const std::size_t offset = mark < text.size() && (text[mark] == '"' || text[mark] == '\'') ? mark + 1 : mark;
    if (is_registry_domain(*ref) || names_registry(*ref)) reference_domains.insert(offset);
    if (auto what = classify(*ref, FoundIn::declaration))
      add(ref->str(), file, lines.line(offset), lines.column(offset), std::move(*what));
  }
  scan_requests_in(text, file, lines);
  scan_literal_endpoints(text, file, lines, reference_domains);
  return {};
}

Status RebuildQuery::scan_file(const std::filesystem::path& file, std::string& buffer, std::string_view* read) {
  // Read with one open, fstat and read into a buffer kept across files: a tree of 14,000 files costs
  // what reading them costs, not an allocation and a stat more for each.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail_input("reading " + file.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return fail_input("reading " + file.string() + ": " + std::strerror(error));
  }
  // Too large to be read whole: a declaration of that size is unlikely, but an answer that ignored one
  // without a word could be a false all-clear.
  if (static_cast<std::uintmax_t>(st.st_size) > k_max_declaration_size) {
    ::close(fd);
    m_skipped_for_size.push_back(file);
    return {};
  }
  // Grown, never shrunk: a resize that grows fills the new bytes, which would be a second pass.
  const auto size = static_cast<std::size_t>(st.st_size);
  if (buffer.size() < size) buffer.resize(size);
  std::size_t got = 0;
  while (got < size) {
    const auto n = ::read(fd, buffer.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return fail_input("reading " + file.string() + ": " + std::strerror(error));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  const std::string_view text(buffer.data(), got);
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) return {};  // not text
  ++m_files_read;
  if (read != nullptr) *read = text;
  if (m_scan == External::omit && !is_structured(file.string()) && !may_hold_finding(text)) return {};
  return scan_text(text, file.string());
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
