#include "diff/file_diff.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "addressing/text_diff.hpp"
#include "recorder/elf.hpp"
#include "recorder/sbom.hpp"

namespace arec {

nlohmann::json text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

namespace {

// At most this many changed files of one layer are looked into; the others are compared by digest.
constexpr std::size_t k_max_files_looked_into = 256;

bool is_status_file(std::string_view path) { return path == "/var/lib/dpkg/status"; }

// What was kept of one side's changed file once it was read: never its bytes beyond the caps.
struct Captured {
  std::optional<ElfDetails> elf;
  std::optional<std::string> text;  // a text file within k_max_text_bytes
  std::vector<DebianPackage> packages;
  std::string note;
};

bool looks_like_text(std::string_view bytes) { return bytes.find('\0') == std::string_view::npos; }

Captured capture(const std::string& path, std::string_view bytes, bool complete) {
  Captured out;
  if (!complete) {
    out.note = "larger than the cap of what is read of a file: compared by digest";
    return out;
  }
  if (is_status_file(path)) {
    out.packages = installed_packages(bytes);
    return out;
  }
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "\177ELF", 4) == 0) {
    auto details = read_elf_details(std::as_bytes(std::span(bytes.data(), bytes.size())), path);
    if (!details) {
      out.note = details.error().message;
    } else if (*details) {
      out.elf = std::move(**details);
    }
    return out;
  }
  if (static_cast<std::int64_t>(bytes.size()) <= k_max_text_bytes && looks_like_text(bytes)) out.text = bytes;
  return out;
}

// What a capture holds in memory, about: its strings and section names, or its text.
std::size_t captured_bytes(const Captured& c) {
  std::size_t out = c.note.size() + c.packages.size() * 64 + (c.text ? c.text->size() : 0);
  if (!c.elf) return out;
  for (const auto& section : c.elf->sections) out += section.name.size() + section.digest.size() + 64;
  for (const auto& [section, strings] : c.elf->strings) {
    for (const auto& text : strings) out += text.size() + 32;
  }
  for (const auto& text : c.elf->comment) out += text.size() + 32;
  for (const auto& text : c.elf->producers) out += text.size() + 32;
  return out + c.elf->file.needed.size() * 64 + 1024;
}

// Reads the files of `paths` from one side's layer, one at a time, each up to what may be looked into,
// and gives each to `visit` (which keeps what it needs: the bytes are gone once it returns).
Status capture_side(const Layout& layout, const Descriptor& layer, const std::set<std::string>& paths,
                    const std::function<Status(const std::string& path, Captured&& captured)>& visit) {
  return for_each_layer_file(layout, layer, [&](const LayerFile& f, const NextBlock& next) -> Status {
    if (f.type != LayerFile::Type::file || !paths.contains(f.path)) return {};
    const std::int64_t cap = is_status_file(f.path) ? k_max_status_bytes : k_max_elf_bytes;
    std::string bytes;
    bool complete = f.size <= cap;
    if (complete) bytes.reserve(static_cast<std::size_t>(f.size));
    while (complete) {
      auto block = next();
      if (!block) return fail(block.error());
      if (block->empty()) break;
      if (static_cast<std::int64_t>(bytes.size() + block->size()) > cap) {
        complete = false;
        break;
      }
      bytes.append(reinterpret_cast<const char*>(block->data()), block->size());
      // A file that is neither ELF nor the status file is kept only while it may still be text.
      if (bytes.size() >= 4 && !is_status_file(f.path) && std::memcmp(bytes.data(), "\177ELF", 4) != 0 &&
          (f.size > k_max_text_bytes || !looks_like_text(bytes))) {
        return {};
      }
    }
    return visit(f.path, capture(f.path, bytes, complete));
  });
}

nlohmann::json optional_text(const std::optional<std::string>& text) {
  return text ? nlohmann::json(*text) : nlohmann::json(nullptr);
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

bool looks_like_time(const std::string& text) {
  // What __DATE__, __TIME__, date(1) and ISO 8601 write: "Dec  4 2026", "17:38:33", "2026-12-04".
  static const std::regex k_time(
      R"(\b\d{2}:\d{2}:\d{2}\b|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-3]\d \d{4}\b|\b(19|20)\d{2}-[01]\d-[0-3]\d\b)");
  return std::regex_search(text, k_time);
}

bool looks_like_path(const std::string& text) { return text.size() > 1 && text.front() == '/'; }

// The strings only one side has, of two sorted lists.
StringsChange strings_change(const std::string& section, const std::vector<std::string>& a,
                             const std::vector<std::string>& b) {
  StringsChange out{section, {}, {}};
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out.before));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(out.after));
  return out;
}

void add_hint(std::vector<Hint>& hints, Hint hint) {
  for (const auto& h : hints)
    if (h.cause == hint.cause && h.path == hint.path) return;
  hints.push_back(std::move(hint));
}

std::string first_of(const std::vector<std::string>& items, bool (*keep)(const std::string&)) {
  for (const auto& item : items)
    if (keep(item)) return item;
  return "";
}

// The flags of GCC's DW_AT_producer strings ("GNU C++17 12.2.0 -mtune=generic -g -O2": "-g", "-O2", ...).
std::set<std::string> producer_flags(const std::vector<std::string>& producers) {
  std::set<std::string> out;
  for (const auto& producer : producers) {
    std::size_t at = 0;
    while ((at = producer.find(" -", at)) != std::string::npos) {
      const std::size_t end = std::min(producer.find(' ', at + 1), producer.size());
      out.insert(producer.substr(at + 1, end - at - 1));
      at = end;
    }
  }
  return out;
}

std::string words(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

// Compiled with other flags (Debug against Release), as the compiler wrote them into the debug info.
void flags_hint(const std::string& path, const ElfDetails& a, const ElfDetails& b, std::vector<Hint>& hints) {
  const auto x = producer_flags(a.producers);
  const auto y = producer_flags(b.producers);
  if (x == y) return;
  const auto has_debug_info = [](const ElfDetails& d) {
    return std::ranges::any_of(d.sections, [](const ElfSection& s) { return s.name == ".debug_info"; });
  };
  // Debug info without GCC's producer (another compiler's): the compiler hint says it.
  if ((a.producers.empty() && has_debug_info(a)) || (b.producers.empty() && has_debug_info(b))) return;
  std::set<std::string> only_a, only_b;
  std::ranges::set_difference(x, y, std::inserter(only_a, only_a.end()));
  std::ranges::set_difference(y, x, std::inserter(only_b, only_b.end()));
  std::string text;
  if (a.producers.empty() || b.producers.empty()) {
    const bool before = !a.producers.empty();
    text = std::string("compiled with other flags: only the file ") + (before ? "before" : "after") +
           " has debug info, compiled with " + words(before ? x : y) + " (DW_AT_producer \"" +
           (before ? a.producers : b.producers).front() + "\"); the other was compiled without -g";
  } else {
    text = "compiled with other flags (DW_AT_producer): " + (only_a.empty() ? std::string("none") : words(only_a)) +
           " before, " + (only_b.empty() ? std::string("none") : words(only_b)) + " after";
  }
  add_hint(hints, {"flags", path, text});
}

ElfChange compare_elf(const std::string& path, const ElfDetails& a, const ElfDetails& b, std::vector<Hint>& hints) {
  ElfChange out;
  auto field = [&out](std::string name, nlohmann::json x, nlohmann::json y) {
    if (x != y) out.fields.push_back({std::move(name), std::move(x), std::move(y)});
  };
  field("build-id", text_or_null(a.build_id), text_or_null(b.build_id));
  field("comment", nlohmann::json(a.comment), nlohmann::json(b.comment));
  field("soname", text_or_null(a.file.soname), text_or_null(b.file.soname));
  field("interpreter", text_or_null(a.file.interpreter), text_or_null(b.file.interpreter));
  field("needed", nlohmann::json(a.file.needed), nlohmann::json(b.file.needed));
  field("rpath", optional_text(a.file.rpath), optional_text(b.file.rpath));
  field("runpath", optional_text(a.file.runpath), optional_text(b.file.runpath));

  // Sections by name, in the order of the side after (then those only before had).
  std::map<std::string, const ElfSection*> by_name;
  for (const auto& s : a.sections) by_name.emplace(s.name, &s);
  std::set<std::string> seen;
  bool debug_differs = false;
  for (const auto& s : b.sections) {
    seen.insert(s.name);
    auto x = by_name.find(s.name);
    if (x != by_name.end() && x->second->digest == s.digest && x->second->size == s.size) continue;
    out.sections.push_back({s.name, x == by_name.end() ? std::nullopt : std::optional(x->second->size), s.size});
    debug_differs = debug_differs || s.name.starts_with(".debug_");
  }
  for (const auto& s : a.sections) {
    if (!seen.contains(s.name)) out.sections.push_back({s.name, s.size, std::nullopt});
  }
  for (const auto& section : out.sections) {
    // A section only one side has is listed as added or removed: its strings (all of .debug_str of a
    // build with -g against one without) would say nothing more.
    if (!is_string_section(section.name) || !section.before || !section.after) continue;
    const auto x = a.strings.find(section.name);
    const auto y = b.strings.find(section.name);
    static const std::vector<std::string> k_none;
    auto change = strings_change(section.name, x == a.strings.end() ? k_none : x->second,
                                 y == b.strings.end() ? k_none : y->second);
    if (change.before.empty() && change.after.empty()) continue;
    const std::string path_before = first_of(change.before, looks_like_path);
    const std::string path_after = first_of(change.after, looks_like_path);
    // Another compiler has other include paths: that is the compiler's hint, not a build path's.
    if (!path_before.empty() && !path_after.empty() && section.name != ".comment" && a.comment == b.comment) {
      const bool debug = section.name.starts_with(".debug_");
      add_hint(hints,
               {"build-path", path,
                std::string(debug ? "a build path is in the debug info" : "a build path is in the program's data") +
                    " (" + section.name + ": \"" + path_before + "\" before, \"" + path_after +
                    "\" after): compile with -ffile-prefix-map=DIR=. for the source and build directories "
                    "(CMake: add_compile_options(-ffile-prefix-map=${CMAKE_SOURCE_DIR}=. "
                    "-ffile-prefix-map=${CMAKE_BINARY_DIR}=.))"});
    }
    if (section.name == ".rodata" && (std::any_of(change.before.begin(), change.before.end(), looks_like_time) ||
                                      std::any_of(change.after.begin(), change.after.end(), looks_like_time))) {
      add_hint(hints, {"timestamp", path,
                       "a time is in the program's data (__DATE__, __TIME__ or a generated header): build with "
                       "SOURCE_DATE_EPOCH set to the source's commit time, which GCC uses for __DATE__ and __TIME__"});
    }
    if (change.before.size() > k_max_strings_shown) change.before.resize(k_max_strings_shown);
    if (change.after.size() > k_max_strings_shown) change.after.resize(k_max_strings_shown);
    out.strings.push_back(std::move(change));
  }
  // Debug info that differs while code and data do not: the build's paths, not its source, changed.
  const bool code_differs = std::any_of(out.sections.begin(), out.sections.end(), [](const SectionChange& s) {
    return s.name == ".text" || s.name == ".rodata" || s.name == ".data";
  });
  if (debug_differs && !code_differs &&
      std::none_of(hints.begin(), hints.end(), [&](const Hint& h) { return h.path == path; })) {
    add_hint(hints, {"build-path", path,
                     "the debug info (.debug_*) differs: a build path is the usual cause; compile with "
                     "-ffile-prefix-map=DIR=. for the source and build directories"});
  }
  flags_hint(path, a, b, hints);
  if (out.sections.size() > k_max_sections_shown) {
    out.sections_left_out = out.sections.size() - k_max_sections_shown;
    out.sections.resize(k_max_sections_shown);
  }
  if (a.comment != b.comment) {
    add_hint(hints, {"compiler", path,
                     "built by another compiler (.comment: \"" + joined(a.comment, "; ") + "\" before, \"" +
                         joined(b.comment, "; ") + "\" after): build both with the same toolchain"});
  }
  const auto absolute = [](const std::optional<std::string>& p) {
    return p && (p->starts_with("/") || p->find(":/") != std::string::npos);
  };
  if ((a.file.rpath != b.file.rpath && (absolute(a.file.rpath) || absolute(b.file.rpath))) ||
      (a.file.runpath != b.file.runpath && (absolute(a.file.runpath) || absolute(b.file.runpath)))) {
    add_hint(hints, {"build-path", path,
                     "a build path is in RPATH/RUNPATH: link with an $ORIGIN-relative one (CMake: "
                     "set_target_properties(T PROPERTIES BUILD_RPATH_USE_ORIGIN ON), or INSTALL_RPATH)"});
  }
  return out;
}

void compare_text(FileChange& change, const std::string& a, const std::string& b, std::vector<Hint>& hints) {
  const auto lines = [](const std::string& t) {
    return static_cast<std::size_t>(std::count(t.begin(), t.end(), '\n'));
  };
  if (lines(a) > k_max_text_lines || lines(b) > k_max_text_lines) {
    change.note = "more than " + std::to_string(k_max_text_lines) + " lines: no text diff";
    return;
  }
  // The labels are a path of the image, escaped: a name holding a newline must not make a line of its own.
  std::string diff = unified_diff(a, b, "a" + printable(change.path), "b" + printable(change.path));
  std::size_t at = 0;
  for (std::size_t n = 0; n < k_max_diff_lines && at != std::string::npos; ++n) {
    at = diff.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at != std::string::npos && at < diff.size()) {
    diff.resize(at);
    change.text_diff_truncated = true;
  }
  if (diff.size() > k_max_diff_bytes) {
    // At a line's end within the cap, or the cap itself for a line longer than that.
    const auto end = diff.rfind('\n', k_max_diff_bytes);
    diff.resize(end == std::string::npos ? k_max_diff_bytes : end + 1);
    change.text_diff_truncated = true;
  }
  // A changed line holding a time is what a build stamping its date into a file leaves.
  std::size_t pos = 0;
  while (pos < diff.size()) {
    const auto end = std::min(diff.find('\n', pos), diff.size());
    const std::string line = diff.substr(pos, end - pos);
    if ((line.starts_with("+") || line.starts_with("-")) && !line.starts_with("+++") && !line.starts_with("---") &&
        looks_like_time(line)) {
      add_hint(hints, {"timestamp", change.path,
                       "a time is written into this file: make the step that writes it use SOURCE_DATE_EPOCH"});
      break;
    }
    pos = end + 1;
  }
  change.text_diff = std::move(diff);
}

std::vector<PackageChange> package_changes(const std::vector<DebianPackage>& a, const std::vector<DebianPackage>& b) {
  std::map<std::string, std::pair<std::string, std::string>> versions;
  for (const auto& p : a) versions[p.name + ":" + p.architecture].first = p.version;
  for (const auto& p : b) versions[p.name + ":" + p.architecture].second = p.version;
  std::vector<PackageChange> out;
  for (const auto& [name, v] : versions) {
    if (v.first != v.second) out.push_back({name, v.first, v.second});
  }
  return out;
}

}  // namespace

void header_hints(const LayerChange& layer, std::vector<Hint>& hints) {
  std::size_t times = 0;
  for (const auto& f : layer.files) times += std::count(f.changes.begin(), f.changes.end(), "mtime");
  if (times > 0) {
    add_hint(hints, {"timestamp", "",
                     std::to_string(times) + " file" + (times == 1 ? "'s" : "s'") + " mtime differ in layer " +
                         layer.key + ": record both with the same SOURCE_DATE_EPOCH (every entry's mtime)"});
  }
}

Status look_into_files(const DiffSide& before, const DiffSide& after, LayerChange& layer, std::vector<Hint>& hints,
                       std::size_t& text_diffs) {
  std::set<std::string> wanted;
  for (auto& f : layer.files) {
    if (f.kind != FileChange::Kind::changed || f.before->type != LayerFile::Type::file ||
        f.after->type != LayerFile::Type::file || f.before_digest == f.after_digest) {
      continue;
    }
    if (wanted.size() == k_max_files_looked_into) {
      f.note = "not looked into: more than " + std::to_string(k_max_files_looked_into) +
               " changed files in the layer (--path GLOB looks into those it matches)";
      continue;
    }
    wanted.insert(f.path);
  }
  if (wanted.empty()) return {};
  // The side before first, keeping what its files hold within the budget; those past it are not looked
  // into, and the side after is read only for the others.
  std::map<std::string, Captured> kept;
  std::size_t held = 0;
  std::set<std::string> over_budget;
  auto a = capture_side(*before.layout, *layer.before, wanted, [&](const std::string& path, Captured&& c) -> Status {
    const std::size_t size = captured_bytes(c);
    if (held + size > k_max_captured_bytes) {
      over_budget.insert(path);
      return {};
    }
    held += size;
    kept.emplace(path, std::move(c));
    return {};
  });
  if (!a) return fail(a.error());
  std::map<std::string, FileChange*> by_path;
  for (auto& f : layer.files) by_path.emplace(f.path, &f);
  for (const auto& path : over_budget) {
    by_path[path]->note =
        "not looked into: what arec diff holds of a layer's changed files is spent "
        "(--path GLOB looks into those it matches)";
    wanted.erase(path);
  }
  auto b = capture_side(*after.layout, *layer.after, wanted, [&](const std::string& path, Captured&& q) -> Status {
    const auto x = kept.find(path);
    if (x == kept.end()) return {};
    FileChange& f = *by_path.at(path);
    const Captured& p = x->second;
    if (is_status_file(f.path)) {
      if (layer.packages.empty()) layer.packages = package_changes(p.packages, q.packages);
    } else if (!p.note.empty() || !q.note.empty()) {
      f.note = !p.note.empty() ? p.note : q.note;
    } else if (p.elf && q.elf) {
      f.elf = compare_elf(f.path, *p.elf, *q.elf, hints);
    } else if (p.elf || q.elf) {
      f.note = std::string("an ELF file only ") + (p.elf ? "before" : "after");
    } else if (p.text && q.text && text_diffs < k_max_text_diffs) {
      ++text_diffs;
      compare_text(f, *p.text, *q.text, hints);
    }
    kept.erase(x);  // compared: its memory goes back
    return {};
  });
  if (!b) return fail(b.error());
  return {};
}

}  // namespace arec
