// needs-rebuild over trees of declarations: the files found under the paths given, less those excluded,
// and the composed outputs among them told apart from what someone wrote.
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>

#include "addressing/needs_rebuild.hpp"
#include "util/fs.hpp"

namespace arec {

namespace {

// Whether `glob` matches `path` or a tail of it starting at a component ("generated" matches
// "deploy/generated", "deploy/*.yaml" matches "./deploy/x.yaml").
bool matches(const std::string& glob, const std::string& path) {
  for (std::size_t at = 0;;) {
    if (::fnmatch(glob.c_str(), path.c_str() + at, FNM_PATHNAME) == 0) return true;
    const auto slash = path.find('/', at);
    if (slash == std::string::npos) return false;
    at = slash + 1;
  }
}

bool excluded(const std::vector<std::string>& excludes, const std::filesystem::path& path) {
  const std::string text = path.generic_string();
  return std::ranges::any_of(excludes, [&](const std::string& glob) { return matches(glob, text); });
}

std::string absolute_text(const std::filesystem::path& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  return (ec ? path : absolute).lexically_normal().string();
}

// The line and column of an offset's line start, found by counting: a file's findings are few.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> out{0};
  for (std::size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1))
    out.push_back(at + 1);
  return out;
}

}  // namespace

Status RebuildQuery::scan_path(const std::filesystem::path& path) { return scan_paths({path}); }

Status RebuildQuery::scan_paths(const std::vector<std::filesystem::path>& paths,
                                const std::vector<std::string>& excludes) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::filesystem::path> found;
      for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        const bool directory = it->is_directory();
        if (directory && it->path().filename().string().starts_with(".")) {
          it.disable_recursion_pending();  // .git and the like hold no declarations
        } else if (!excludes.empty() && excluded(excludes, it->path())) {
          if (directory) it.disable_recursion_pending();  // counted as one: what it holds is not looked at
          ++m_files_excluded;
        } else if (it->is_regular_file()) {
          found.push_back(it->path());
        }
      }
      if (ec) return fail_input("reading " + path.string() + ": " + ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(path, ec)) {
      if (!excludes.empty() && excluded(excludes, path)) {
        ++m_files_excluded;
      } else {
        files.push_back(path);
      }
    } else {
      return fail_input(path.string() + ": no such file or directory");
    }
  }
  // What compose says it wrote: the depfiles among the files (as arec_compose keeps them, *.d).
  std::map<std::string, std::filesystem::path> composed_from;  // absolute output -> template
  for (const auto& file : files) {
    if (file.extension() != ".d") continue;
    auto text = fs::read_file(file, 64 * 1024);
    if (!text) continue;  // not a depfile of compose's (those are one short line)
    if (auto rule = read_compose_depfile(*text)) composed_from.emplace(rule->output, rule->template_path);
  }
  std::set<std::string> read;  // absolute paths of the files read
  for (const auto& file : files) read.insert(absolute_text(file));
  std::vector<std::filesystem::path> templates_to_read;
  std::string buffer;
  for (const auto& file : files) {
    const std::size_t first_finding = m_findings.size();
    std::string_view text;
    if (auto s = scan_file(file, buffer, &text); !s) return s;
    if (text.empty()) continue;
    // Its template: the one a depfile names, else FILE.in beside it.
    std::filesystem::path template_path;
    if (const auto found = composed_from.find(absolute_text(file)); found != composed_from.end()) {
      template_path = found->second;
    } else if (std::error_code ec; std::filesystem::is_regular_file(file.string() + ".in", ec)) {
      template_path = file.string() + ".in";
    }
    const bool holds_requests = text.find(k_request_scheme) != std::string_view::npos;
    if (template_path.empty()) {
      if (holds_requests) m_templates.push_back(file);
      continue;
    }
    const std::size_t before = m_composed.size();
    mark_composed(file.string(), text, template_path, first_finding);
    if (m_composed.size() == before) {
      if (holds_requests) m_templates.push_back(file);
    } else if (!read.contains(absolute_text(template_path)) && !excluded(excludes, template_path)) {
      templates_to_read.push_back(template_path);
      read.insert(absolute_text(template_path));
    }
  }
  // The template of a composed output is what will be composed again: its own requests are checked.
  for (const auto& file : templates_to_read) {
    if (auto s = scan_file(file, buffer); !s) return s;
  }
  // A template whose output was recognised is listed with it, not again on its own.
  std::set<std::string> with_output;
  for (const auto& c : m_composed) with_output.insert(absolute_text(c.template_path));
  std::erase_if(m_templates, [&](const std::filesystem::path& t) { return with_output.contains(absolute_text(t)); });
  return {};
}

void RebuildQuery::mark_composed(const std::string& output, std::string_view text,
                                 const std::filesystem::path& template_path, std::size_t first_finding) {
  auto template_text = fs::read_file(template_path, k_max_declaration_size);
  if (!template_text) return;
  const auto spans = filled_spans(*template_text, text, format_of(template_path.string()));
  if (!spans) return;  // not what compose writes from it: what it holds is what someone wrote
  m_composed.push_back({output, template_path.string()});
  const auto starts = line_starts(text);
  const std::string action = "compose again after the move: arec compose " + template_path.string() + " -o " + output;
  for (std::size_t i = first_finding; i < m_findings.size(); ++i) {
    Finding& f = m_findings[i];
    if (f.file != output || f.line == 0 || f.line > starts.size() || !breaks(f.kind)) continue;
    const std::size_t offset = starts[f.line - 1] + f.column - 1;
    // Wholly inside what compose filled: a value that composing again writes anew. Text beside a value
    // ("/agent:1" after arec://endpoint/registry) is the template's, and breaks as it is written there.
    const bool filled =
        std::ranges::any_of(*spans, [&](const FilledSpan& span) { return span.contains(offset, f.reference.size()); });
    if (!filled) continue;
    f.kind = FindingKind::composed;
    f.action = action;
  }
}

}  // namespace arec
