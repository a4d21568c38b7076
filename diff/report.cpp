// The report of a diff, as JSON (schema in docs/diff.md) and as text.
#include <iomanip>
#include <sstream>

#include "diff/image_diff.hpp"

namespace arec {

namespace {

std::string_view kind_name(LayerChange::Kind kind) {
  switch (kind) {
    case LayerChange::Kind::same: return "same";
    case LayerChange::Kind::changed: return "changed";
    case LayerChange::Kind::added: return "added";
    case LayerChange::Kind::removed: return "removed";
  }
  return "same";
}

std::string_view kind_name(FileChange::Kind kind) {
  switch (kind) {
    case FileChange::Kind::added: return "added";
    case FileChange::Kind::removed: return "removed";
    case FileChange::Kind::changed: return "changed";
  }
  return "changed";
}

nlohmann::json field_json(const FieldChange& c) {
  return {{"field", c.field}, {"before", c.before}, {"after", c.after}};
}

nlohmann::json fields_json(const std::vector<FieldChange>& changes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : changes) out.push_back(field_json(c));
  return out;
}

nlohmann::json entry_json(const std::optional<LayerFile>& f, const std::string& digest) {
  if (!f) return nullptr;
  nlohmann::json out = to_json(*f);
  out["uid"] = f->uid;
  out["gid"] = f->gid;
  out["mtime"] = f->mtime;
  out["digest"] = digest.empty() ? nlohmann::json(nullptr) : nlohmann::json("sha256:" + digest);
  return out;
}

nlohmann::json side_json(const DiffSide& side) {
  return {{"name", side.name},
          {"manifest", side.manifest.digest.str()},
          {"record", side.record ? to_json(*side.record) : nlohmann::json(nullptr)}};
}

nlohmann::json optional_size(const std::optional<std::uint64_t>& size) {
  return size ? nlohmann::json(*size) : nlohmann::json(nullptr);
}

nlohmann::json elf_json(const ElfChange& e) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : e.sections)
    sections.push_back({{"name", s.name}, {"before", optional_size(s.before)}, {"after", optional_size(s.after)}});
  nlohmann::json strings = nlohmann::json::array();
  for (const auto& s : e.strings) strings.push_back({{"section", s.section}, {"before", s.before}, {"after", s.after}});
  return {{"fields", fields_json(e.fields)},
          {"sections", sections},
          {"sectionsLeftOut", e.sections_left_out},
          {"strings", strings},
          {"note", e.note}};
}

nlohmann::json file_json(const FileChange& f) {
  nlohmann::json out = {{"path", f.path},
                        {"status", kind_name(f.kind)},
                        {"changes", f.changes},
                        {"before", entry_json(f.before, f.before_digest)},
                        {"after", entry_json(f.after, f.after_digest)},
                        {"elf", f.elf ? elf_json(*f.elf) : nlohmann::json(nullptr)},
                        {"textDiff", f.text_diff.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.text_diff)},
                        {"textDiffTruncated", f.text_diff_truncated},
                        {"note", f.note}};
  return out;
}

nlohmann::json descriptor_or_null(const std::optional<Descriptor>& d) {
  if (!d) return nullptr;
  return {{"digest", d->digest.str()}, {"size", d->size}, {"mediaType", d->media_type}};
}

nlohmann::json origin_or_null(const std::string& origin) {
  return origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(origin);
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "(none)";
  if (v.is_string()) return printable(v.get<std::string>());
  return printable(v.dump());
}

std::string size_text(std::int64_t bytes) {
  std::ostringstream out;
  if (bytes >= (std::int64_t{1} << 20)) {
    out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1 << 20) << " MiB";
  } else if (bytes >= 1024) {
    out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / 1024 << " KiB";
  } else {
    out << bytes << " B";
  }
  return out.str();
}

std::string origin_text(const LayerChange& l) {
  if (l.kind == LayerChange::Kind::added) return l.after_origin.empty() ? l.key : l.after_origin;
  if (l.kind == LayerChange::Kind::removed) return l.before_origin.empty() ? l.key : l.before_origin;
  if (l.before_origin == l.after_origin) return l.after_origin.empty() ? l.key : l.after_origin;
  return (l.before_origin.empty() ? "(none)" : l.before_origin) + " -> " +
         (l.after_origin.empty() ? "(none)" : l.after_origin);
}

// A list field as its items, one change line each ("- A=1", "+ A=2"); other values as before -> after.
void print_field(std::ostream& out, const FieldChange& c, std::string_view indent) {
  if ((c.before.is_array() || c.before.is_null()) && (c.after.is_array() || c.after.is_null()) &&
      (c.before.is_array() || c.after.is_array()) && c.field != "Entrypoint" && c.field != "Cmd" &&
      c.field != "needed") {
    out << indent << printable(c.field) << ":\n";
    const auto has = [](const nlohmann::json& list, const nlohmann::json& item) {
      return list.is_array() && std::find(list.begin(), list.end(), item) != list.end();
    };
    if (c.before.is_array())
      for (const auto& item : c.before)
        if (!has(c.after, item)) out << indent << "  - " << value_text(item) << '\n';
    if (c.after.is_array())
      for (const auto& item : c.after)
        if (!has(c.before, item)) out << indent << "  + " << value_text(item) << '\n';
    return;
  }
  out << indent << printable(c.field) << ": " << value_text(c.before) << " -> " << value_text(c.after) << '\n';
}

void print_file(std::ostream& out, const FileChange& f) {
  const char mark = f.kind == FileChange::Kind::added ? '+' : f.kind == FileChange::Kind::removed ? '-' : '~';
  out << "    " << mark << ' ' << printable(f.path);
  const LayerFile& shown = f.after ? *f.after : *f.before;
  if (f.kind != FileChange::Kind::changed) {
    out << " (" << mode_string(shown) << ' ' << size_text(shown.size) << ")\n";
    return;
  }
  const LayerFile& a = *f.before;
  const LayerFile& b = *f.after;
  std::string what;
  for (const auto& c : f.changes) {
    std::string detail = c;
    if (c == "size") detail = "size " + size_text(a.size) + " -> " + size_text(b.size);
    if (c == "mode") detail = "mode " + mode_string(a) + " -> " + mode_string(b);
    if (c == "owner")
      detail = "owner " + std::to_string(a.uid) + ":" + std::to_string(a.gid) + " -> " + std::to_string(b.uid) + ":" +
               std::to_string(b.gid);
    if (c == "link") detail = "link " + printable(a.link_target) + " -> " + printable(b.link_target);
    if (c == "mtime") detail = "mtime " + std::to_string(a.mtime) + " -> " + std::to_string(b.mtime);
    if (c == "content")
      detail = "content sha256:" + f.before_digest.substr(0, 12) + " -> sha256:" + f.after_digest.substr(0, 12);
    what += (what.empty() ? "" : ", ") + detail;
  }
  out << ": " << what << '\n';
  if (!f.note.empty()) out << "        " << printable(f.note) << '\n';
  if (f.elf) {
    for (const auto& c : f.elf->fields) print_field(out, c, "        ");
    std::string sections;
    for (const auto& s : f.elf->sections) {
      sections += (sections.empty() ? "" : ", ") + printable(s.name);
      if (!s.before) sections += " (added)";
      if (!s.after) sections += " (removed)";
    }
    if (f.elf->sections_left_out > 0) sections += " and " + std::to_string(f.elf->sections_left_out) + " more";
    if (!sections.empty()) out << "        sections whose bytes differ: " << sections << '\n';
    for (const auto& s : f.elf->strings) {
      out << "        strings of " << printable(s.section) << ":\n";
      for (const auto& t : s.before) out << "          - \"" << printable(t) << "\"\n";
      for (const auto& t : s.after) out << "          + \"" << printable(t) << "\"\n";
    }
  }
  if (!f.text_diff.empty()) {
    std::istringstream lines(f.text_diff);
    for (std::string line; std::getline(lines, line);) out << "        " << printable(line) << '\n';
    if (f.text_diff_truncated)
      out << "        (diff cut at " << k_max_diff_lines << " lines or " << (k_max_diff_bytes >> 10) << " KiB)\n";
  }
}

// The text report, its lines counted: past `per_file` lines of one file, and past `in_all` lines, what
// follows is left out and said to be, with how to see it.
class CappedReport {
 public:
  CappedReport(std::size_t per_file, std::size_t in_all) : m_per_file(per_file), m_in_all(in_all) {}
  void line(const std::string& text) {
    if (m_lines < m_in_all) {
      m_out << text << '\n';
    } else {
      ++m_left_out;
    }
    ++m_lines;
  }
  // Each line of `text`, the first `per_file` of them.
  void file(const std::string& text) {
    std::istringstream lines(text);
    std::size_t n = 0;
    for (std::string l; std::getline(lines, l); ++n) {
      if (n < m_per_file) line(l);
    }
    if (n > m_per_file) {
      line("        ... " + std::to_string(n - m_per_file) + " more lines about this file (arec diff --json has them)");
    }
  }
  std::string finish(const std::string& tail) {
    if (m_left_out > 0) {
      m_out << "... " << m_left_out
            << " more lines left out: --stat gives each layer's counts, --files-only the files alone, --path GLOB "
               "those it matches, --json all of it\n";
    }
    return m_out.str() + tail;
  }

 private:
  std::ostringstream m_out;
  std::size_t m_per_file, m_in_all;
  std::size_t m_lines = 0, m_left_out = 0;
};

}  // namespace

nlohmann::json to_json(const ImageDiff& diff) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : diff.layers) {
    nlohmann::json packages = nlohmann::json::array();
    for (const auto& p : l.packages)
      packages.push_back({{"name", p.name}, {"before", origin_or_null(p.before)}, {"after", origin_or_null(p.after)}});
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : l.files) files.push_back(file_json(f));
    nlohmann::json stat = nullptr;
    if (l.stat) {
      stat = {{"added", l.stat->added},
              {"removed", l.stat->removed},
              {"changed", l.stat->changed},
              {"same", l.stat->same},
              {"bytes", l.stat->bytes}};
    }
    layers.push_back({{"key", l.key},
                      {"status", kind_name(l.kind)},
                      {"before", descriptor_or_null(l.before)},
                      {"after", descriptor_or_null(l.after)},
                      {"originBefore", origin_or_null(l.before_origin)},
                      {"originAfter", origin_or_null(l.after_origin)},
                      {"packages", packages},
                      {"stat", stat},
                      {"files", files},
                      {"filesLeftOut", l.files_left_out},
                      {"note", l.note}});
  }
  nlohmann::json hints = nlohmann::json::array();
  for (const auto& h : diff.hints)
    hints.push_back({{"cause", h.cause}, {"path", origin_or_null(h.path)}, {"text", h.text}});
  return {{"schemaVersion", k_diff_schema_version},
          {"before", side_json(diff.before)},
          {"after", side_json(diff.after)},
          {"same", !diff.differs()},
          {"record", fields_json(diff.record)},
          {"config", fields_json(diff.config)},
          {"layers", layers},
          {"hints", hints}};
}

std::string text_report(const ImageDiff& diff, ReportStyle style) {
  CappedReport out(k_max_report_lines_per_file, k_max_report_lines);
  out.line("--- " + printable(diff.before.name));
  out.line("+++ " + printable(diff.after.name));
  if (!diff.differs()) {
    out.line("same: " + diff.after.manifest.digest.str());
    return out.finish("");
  }
  const auto field_lines = [](const FieldChange& c, std::string_view indent) {
    std::ostringstream text;
    print_field(text, c, indent);
    return text.str();
  };
  if (style == ReportStyle::full) {
    if (!diff.record.empty()) out.line("record:");
    for (const auto& c : diff.record) out.file(field_lines(c, "  "));
    if (!diff.config.empty()) out.line("config:");
    for (const auto& c : diff.config) out.file(field_lines(c, "  "));
  }
  out.line("layers:");
  for (const auto& l : diff.layers) {
    const auto size = (l.after ? l.after : l.before)->size;
    std::ostringstream head;
    head << "  " << std::left << std::setw(8) << kind_name(l.kind) << ' ' << printable(origin_text(l));
    if (l.kind != LayerChange::Kind::same || style == ReportStyle::stat) head << " (" << size_text(size) << ")";
    out.line(head.str());
    for (const auto& p : l.packages) {
      out.line("    package " + printable(p.name) + ": " + (p.before.empty() ? "(none)" : printable(p.before)) +
               " -> " + (p.after.empty() ? "(none)" : printable(p.after)));
    }
    if (!l.note.empty()) out.line("    " + printable(l.note));
    if (l.stat && style == ReportStyle::stat) {
      out.line("    " + std::to_string(l.stat->added) + " added, " + std::to_string(l.stat->removed) + " removed, " +
               std::to_string(l.stat->changed) + " changed, " + std::to_string(l.stat->same) + " same; " +
               size_text(l.stat->bytes) + " in the files that differ");
    }
    if (style != ReportStyle::full) continue;
    for (const auto& f : l.files) {
      std::ostringstream text;
      print_file(text, f);
      out.file(text.str());
    }
    if (l.files_left_out > 0) {
      out.line("    ... and " + std::to_string(l.files_left_out) + " more changed files, counted but not listed (" +
               std::to_string(k_max_files_listed) +
               " are listed in all): --stat counts them, --path GLOB lists "
               "those it matches");
    }
  }
  // The hints last, always: the causes are what the report is for.
  std::ostringstream hints;
  if (!diff.hints.empty()) hints << "hints:\n";
  std::size_t shown = 0;
  for (const auto& h : diff.hints) {
    if (++shown > k_max_hints_shown) break;
    hints << "  " << h.cause << (h.path.empty() ? "" : " (" + printable(h.path) + ")") << ": " << printable(h.text)
          << '\n';
  }
  if (diff.hints.size() > k_max_hints_shown) {
    hints << "  ... and " << diff.hints.size() - k_max_hints_shown << " more hints (arec diff --json has them all)\n";
  }
  return out.finish(hints.str());
}

}  // namespace arec
