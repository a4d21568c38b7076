#include "registry-client/needs_rebuild.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

#include "recorder/fs.hpp"
#include "registry-client/compose.hpp"
#include "registry-client/reference.hpp"

namespace arec {

namespace {

constexpr std::uintmax_t k_max_declaration_size = 16u << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string strip_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::string(host);
}

std::string host_for_text(const std::string& address) {
  return address.find(':') != std::string::npos ? "[" + address + "]" : address;
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

}  // namespace

std::string_view kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::genesis_pinned: return "genesis-pinned";
    case FindingKind::no_build: return "no-build";
    case FindingKind::hard_coded_address: return "hard-coded-address";
    case FindingKind::external: break;
  }
  return "external";
}

RebuildQuery::RebuildQuery(const NodeSettings& settings, const std::vector<Record>& records) {
  std::map<std::uint16_t, std::string> loopback_ports;
  // The composing node's own ports first: on loopback, a port means what this node was given.
  if (const auto self = settings.nodes.find(settings.self); self != settings.nodes.end()) {
    for (const auto& [service, port] : self->second.ports) loopback_ports.emplace(port, service);
  }
  for (const auto& [name, node] : settings.nodes) {
    m_mesh_hosts.insert(lower(name));
    for (const auto& [service, port] : node.ports) loopback_ports.emplace(port, service);
    if (node.address.empty()) continue;
    m_mesh_hosts.insert(lower(node.address));
    for (const auto& [service, port] : node.ports) m_endpoints[host_for_text(node.address)].emplace(port, service);
  }
  for (const char* loopback : {"127.0.0.1", "localhost", "[::1]"}) m_endpoints[loopback] = loopback_ports;
  for (const auto& r : records) m_recorded.insert(r.repository());
}

bool RebuildQuery::is_mesh_host(std::string_view host) const {
  const std::string bare = lower(strip_brackets(host));
  return m_mesh_hosts.contains(bare) || is_loopback_host(bare);
}

bool RebuildQuery::has_record(std::string_view repository) const { return m_recorded.contains(std::string(repository)); }

void RebuildQuery::add(Finding finding) {
  auto [it, inserted] = m_findings.try_emplace(finding.reference, finding);
  if (inserted) {
    m_order.push_back(finding.reference);
  } else if (finding.kind < it->second.kind) {
    it->second = std::move(finding);
  }
}

void RebuildQuery::classify(std::string_view text, const std::string& source, bool from_catalog) {
  auto ref = Reference::parse(text);
  if (!ref) return;
  if (ref->domain.empty() || !is_mesh_host(ref->host())) {
    add({ref->str(), source, FindingKind::external, "none: it does not name the mesh's registry"});
    return;
  }
  const std::string request = "arec://image/" + ref->path + (ref->tag.empty() ? "" : ":" + ref->tag) +
                              (ref->digest.empty() ? "" : "@" + ref->digest);
  if (ref->segments() == 1) {
    add({ref->str(), source, FindingKind::genesis_pinned,
         "rebuild it through arec (arec_record) as <module>/" + ref->path + ", then refer to it as arec://image/<module>/" +
             ref->path});
  } else if (ref->segments() == 2 && has_record(ref->path)) {
    if (!from_catalog) add({ref->str(), source, FindingKind::hard_coded_address, "replace it with " + request});
  } else {
    add({ref->str(), source, FindingKind::no_build,
         "rebuild it through arec (arec_record) as <module>/<name>, then refer to it as arec://image/<module>/<name>"});
  }
}

Status RebuildQuery::add_reference(std::string_view reference, std::string_view source) {
  auto ref = Reference::parse(reference);
  if (!ref) return fail(std::move(ref.error()).context(std::string(source)));
  classify(reference, std::string(source), false);
  return {};
}

void RebuildQuery::add_catalog_entry(std::string_view registry, std::string_view repository, std::string_view tag) {
  std::string reference = std::string(registry) + "/" + std::string(repository);
  if (!tag.empty()) reference += ":" + std::string(tag);
  classify(reference, "catalog", true);
}

void RebuildQuery::scan_image_keys(std::string_view text, std::string_view file, std::vector<Place>& image_lines) {
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
      for (const auto& entry : node) {
        const YAML::Node& value = entry.second;
        if (entry.first.IsScalar() && entry.first.Scalar() == "image" && value.IsScalar()) {
          const std::string& reference = value.Scalar();
          if (reference.starts_with(k_request_scheme)) continue;  // a request: scanned as text
          const std::size_t line = static_cast<std::size_t>(value.Mark().line) + 1;
          image_lines.push_back({std::string(file), line});
          classify(reference, place(file, line), false);
        } else {
          pending.push_back(value);
        }
      }
    }
  }
}

void RebuildQuery::scan_literal_endpoints(std::string_view text, std::string_view file,
                                          const std::vector<Place>& image_lines) {
  for (const auto& [host, ports] : m_endpoints) {
    const std::string needle = host + ":";
    for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
      if (at > 0 && (is_host_char(text[at - 1]) || text[at - 1] == ':')) continue;
      std::size_t end = at + needle.size();
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
      if (end == at + needle.size() || end - at - needle.size() > 5) continue;
      const auto port = std::stoul(std::string(text.substr(at + needle.size(), end - at - needle.size())));
      const auto service = ports.find(static_cast<std::uint16_t>(port));
      if (port > 65535 || service == ports.end()) continue;
      const std::size_t line = line_at(text, at);
      // An image reference's registry is reported with the image, not again on its own.
      if (std::any_of(image_lines.begin(), image_lines.end(), [&](const Place& p) { return p.file == file && p.line == line; })) {
        continue;
      }
      add({std::string(text.substr(at, end - at)), place(file, line), FindingKind::hard_coded_address,
           "replace it with arec://endpoint/" + service->second});
    }
  }
}

Status RebuildQuery::scan_text(std::string_view text, std::string_view file) {
  std::vector<Place> image_lines;
  if (is_structured(file)) {
    try {
      scan_image_keys(text, file, image_lines);
    } catch (const YAML::Exception& e) {
      // Marks are 0-based. At the end of the input the mark is past the last newline, a line the file
      // does not have: name the last line with content instead.
      const std::size_t last = line_at(text, std::min(text.find_last_not_of(" \t\r\n"), text.size()));
      const std::size_t line = std::min(static_cast<std::size_t>(std::max(e.mark.line, 0)) + 1, last);
      return fail_input(place(file, line) + ": malformed YAML: " + e.msg);
    }
  }
  for (const auto& request : scan_requests(text)) {
    if (request.kind != Request::Kind::image) continue;
    const std::string repository = std::string(request.module) + "/" + std::string(request.name);
    if (has_record(repository)) continue;  // fine: compose fills it from the record
    add({std::string(request.text(text)), place(file, request.line), FindingKind::no_build,
         "record " + repository + " with arec (arec_record); compose cannot fill it until then"});
  }
  scan_literal_endpoints(text, file, image_lines);
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

std::vector<Finding> RebuildQuery::findings(bool include_external) const {
  std::vector<Finding> out;
  for (const auto& reference : m_order) {
    const Finding& f = m_findings.at(reference);
    if (include_external || f.kind != FindingKind::external) out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) { return a.kind < b.kind; });
  return out;
}

}  // namespace arec
