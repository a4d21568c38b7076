#include "recorder/licences.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "util/ascii.hpp"

namespace arec {

namespace {

using ascii::is_alnum;
using ascii::is_digit;
using ascii::lower;

// The SPDX list's identifiers Debian's copyright files name most (their spelling in the list), matched
// without regard to case: "BSD-3-clause" is BSD-3-Clause.
constexpr std::array k_spdx_ids = {
    "0BSD",
    "AGPL-3.0-only",
    "AGPL-3.0-or-later",
    "Apache-1.0",
    "Apache-1.1",
    "Apache-2.0",
    "Artistic-1.0",
    "Artistic-1.0-Perl",
    "Artistic-2.0",
    "Beerware",
    "blessing",
    "BSD-1-Clause",
    "BSD-2-Clause",
    "BSD-2-Clause-Patent",
    "BSD-3-Clause",
    "BSD-3-Clause-LBNL",
    "BSD-4-Clause",
    "BSD-4-Clause-UC",
    "BSL-1.0",
    "bzip2-1.0.6",
    "CC-BY-3.0",
    "CC-BY-4.0",
    "CC-BY-SA-3.0",
    "CC-BY-SA-4.0",
    "CC0-1.0",
    "CDDL-1.0",
    "CDDL-1.1",
    "CPL-1.0",
    "curl",
    "EPL-1.0",
    "EPL-2.0",
    "FSFAP",
    "FSFUL",
    "FSFULLR",
    "FTL",
    "GFDL-1.1-only",
    "GFDL-1.1-or-later",
    "GFDL-1.2-only",
    "GFDL-1.2-or-later",
    "GFDL-1.3-only",
    "GFDL-1.3-or-later",
    "GPL-1.0-only",
    "GPL-1.0-or-later",
    "GPL-2.0-only",
    "GPL-2.0-or-later",
    "GPL-3.0-only",
    "GPL-3.0-or-later",
    "HPND",
    "ICU",
    "IJG",
    "Info-ZIP",
    "IPL-1.0",
    "ISC",
    "LGPL-2.0-only",
    "LGPL-2.0-or-later",
    "LGPL-2.1-only",
    "LGPL-2.1-or-later",
    "LGPL-3.0-only",
    "LGPL-3.0-or-later",
    "Libpng",
    "libpng-2.0",
    "LPPL-1.3c",
    "MirOS",
    "MIT",
    "MIT-0",
    "MPL-1.0",
    "MPL-1.1",
    "MPL-2.0",
    "NCSA",
    "NTP",
    "OFL-1.1",
    "OLDAP-2.8",
    "OpenSSL",
    "PHP-3.01",
    "PostgreSQL",
    "PSF-2.0",
    "Python-2.0",
    "QPL-1.0",
    "Ruby",
    "SGI-B-2.0",
    "Sleepycat",
    "Spencer-94",
    "Spencer-99",
    "TCL",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "Unlicense",
    "UPL-1.0",
    "Vim",
    "W3C",
    "WTFPL",
    "X11",
    "Zlib",
    "ZPL-2.1",
};

// DEP-5's short names that are not the SPDX identifier (DEP-5 section "License specification"),
// versions written as DEP-5 writes them.
constexpr std::array<std::pair<const char*, const char*>, 14> k_dep5_names = {{
    {"expat", "MIT"},
    {"artistic", "Artistic-1.0"},
    {"perl", "(Artistic-1.0-Perl OR GPL-1.0-or-later)"},
    {"cc0", "CC0-1.0"},
    {"apache-2", "Apache-2.0"},
    {"mpl-2", "MPL-2.0"},
    {"bsd-2", "BSD-2-Clause"},
    {"bsd-3", "BSD-3-Clause"},
    {"bsd-4", "BSD-4-Clause"},
    {"psf", "PSF-2.0"},
    {"python", "Python-2.0"},
    {"zope", "ZPL-2.1"},
    {"bsl", "BSL-1.0"},
    {"isc-license", "ISC"},
}};

// Exceptions as DEP-5 files name them ("with X exception"), lower case, and the SPDX list's name.
constexpr std::array<std::pair<const char*, const char*>, 14> k_exceptions = {{
    {"gcc-exception-3.1", "GCC-exception-3.1"},
    {"gcc-3.1", "GCC-exception-3.1"},
    {"gcc-exception-2.0", "GCC-exception-2.0"},
    {"gcc", "GCC-exception-2.0"},
    {"libtool", "Libtool-exception"},
    {"autoconf", "Autoconf-exception-2.0"},
    {"autoconf-2.0", "Autoconf-exception-2.0"},
    {"autoconf-3.0", "Autoconf-exception-3.0"},
    {"autoconf-data", "Autoconf-exception-generic"},
    {"bison", "Bison-exception-2.2"},
    {"bison-2.2", "Bison-exception-2.2"},
    {"classpath", "Classpath-exception-2.0"},
    {"font", "Font-exception-2.0"},
    {"llvm", "LLVM-exception"},
}};

std::optional<std::string> spdx_id(std::string_view name) {
  const std::string wanted = lower(name);
  for (const char* id : k_spdx_ids) {
    if (lower(id) == wanted) return std::string(id);
  }
  return std::nullopt;
}

// The GNU licences' versions: "GPL-2+" is GPL-2.0-or-later, "LGPL-2.1" LGPL-2.1-only, "GPL" any
// version (GPL-1.0-or-later), "GFDL-NIV-1.3" GFDL-1.3-no-invariants-only.
std::optional<std::string> gnu_licence(std::string_view name) {
  std::string text = lower(name);
  bool later = false;
  if (text.ends_with("+")) {
    later = true;
    text.pop_back();
  }
  bool niv = false;
  std::string family;
  for (const char* f : {"agpl", "lgpl", "gpl", "gfdl-niv", "gfdl"}) {
    if (text == f || text.starts_with(std::string(f) + "-")) {
      family = f;
      break;
    }
  }
  if (family.empty()) return std::nullopt;
  std::string version = text.size() > family.size() ? text.substr(family.size() + 1) : std::string();
  if (family == "gfdl-niv") {
    family = "gfdl";
    niv = true;
  }
  if (version.empty()) {  // no version: any version
    version = family == "agpl" ? "3" : family == "gfdl" ? "1.1" : family == "lgpl" ? "2" : "1";
    later = true;
  }
  if (version.ends_with(".0")) version.resize(version.size() - 2);
  if (!std::all_of(version.begin(), version.end(), [](char c) { return is_digit(c) || c == '.'; })) {
    return std::nullopt;
  }
  if (version.find('.') == std::string::npos) version += ".0";
  std::string upper = family == "agpl" ? "AGPL" : family == "lgpl" ? "LGPL" : family == "gfdl" ? "GFDL" : "GPL";
  std::string id = upper + "-" + version + (niv ? "-no-invariants" : "") + (later ? "-or-later" : "-only");
  if (auto known = spdx_id(id)) return known;
  if (niv && (version == "1.2" || version == "1.3")) return id;  // in the SPDX list, not in the table above
  return std::nullopt;
}

// One licence name as SPDX names it, or its LicenseRef-.
std::string one_licence(std::string_view name) {
  if (auto gnu = gnu_licence(name)) return *gnu;
  const std::string wanted = lower(name);
  for (const auto& [dep5, spdx] : k_dep5_names) {
    if (wanted == dep5) return spdx;
  }
  if (auto id = spdx_id(name)) return *id;
  if (wanted.ends_with("+")) {
    if (auto id = spdx_id(name.substr(0, name.size() - 1))) return *id + "+";
  }
  return licence_ref(name);
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == ',') {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

// The paragraphs of a DEP-5 file: each a list of (field, value) with continuation lines joined by '\n'.
using Paragraph = std::vector<std::pair<std::string, std::string>>;

std::vector<Paragraph> paragraphs_of(std::string_view text) {
  std::vector<Paragraph> out;
  Paragraph current;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool blank = line.find_first_not_of(" \t") == std::string_view::npos;
    if (blank) {
      if (!current.empty()) out.push_back(std::move(current));
      current.clear();
      if (end == text.size()) break;
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') {
      if (!current.empty()) {
        auto rest = line.substr(1);
        current.back().second += "\n" + std::string(rest == "." ? std::string_view() : rest);
      }
    } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
      auto value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      current.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    }
    if (end == text.size()) {
      if (!current.empty()) out.push_back(std::move(current));
      break;
    }
  }
  return out;
}

const std::string* field(const Paragraph& p, std::string_view name) {
  for (const auto& [key, value] : p) {
    if (lower(key) == lower(name)) return &value;
  }
  return nullptr;
}

}  // namespace

std::string licence_ref(std::string_view name) {
  std::string out = "LicenseRef-";
  for (const char c : name) {
    if (c == '+') {
      out += "-plus";
    } else {
      out.push_back(is_alnum(c) || c == '.' || c == '-' ? c : '-');
    }
  }
  return out;
}

std::string spdx_expression(std::string_view dep5) {
  const auto words = words_of(dep5);
  std::string out;
  std::size_t i = 0;
  while (i < words.size()) {
    const std::string word = lower(words[i]);
    if (word == "or" || word == "and") {
      if (!out.empty()) out += word == "or" ? " OR " : " AND ";
      ++i;
      continue;
    }
    std::string name = words[i++];
    // "NAME with X exception": the SPDX exception when the list has one, else one licence of its own.
    if (i < words.size() && lower(words[i]) == "with") {
      std::size_t j = i + 1;
      std::string exception;
      while (j < words.size() && lower(words[j]) != "exception")
        exception += (exception.empty() ? "" : "-") + words[j++];
      const bool closed = j < words.size();
      const std::string wanted = lower(exception);
      const char* known = nullptr;
      for (const auto& [dep5_name, spdx] : k_exceptions) {
        if (wanted == dep5_name) known = spdx;
      }
      const std::string licence = one_licence(name);
      if (known != nullptr && closed && !licence.starts_with("LicenseRef-")) {
        out += licence + " WITH " + known;
      } else {
        out += licence_ref(name + "-with-" + exception + "-exception");
      }
      i = closed ? j + 1 : j;
      continue;
    }
    out += one_licence(name);
  }
  return out;
}

Licence debian_copyright_licence(std::string_view copyright, std::string_view fallback_text) {
  Licence out;
  const auto paragraphs = paragraphs_of(copyright);
  if (paragraphs.empty()) return out;
  const std::string* format = field(paragraphs.front(), "Format");
  if (format == nullptr || format->find("copyright-format/1.0") == std::string::npos) return out;

  // The texts of the stand-alone License paragraphs, by the name on their first line.
  std::vector<std::pair<std::string, std::string>> texts;
  for (std::size_t i = 1; i < paragraphs.size(); ++i) {
    if (field(paragraphs[i], "Files") != nullptr) continue;
    if (const std::string* licence = field(paragraphs[i], "License")) {
      const auto newline = licence->find('\n');
      if (newline != std::string::npos)
        texts.emplace_back(lower(licence->substr(0, newline)), licence->substr(newline + 1));
    }
  }
  std::vector<std::string> expressions;
  for (std::size_t i = 1; i < paragraphs.size(); ++i) {
    if (field(paragraphs[i], "Files") == nullptr) continue;
    const std::string* licence = field(paragraphs[i], "License");
    if (licence == nullptr) continue;
    const auto newline = licence->find('\n');
    const std::string first = licence->substr(0, newline);
    std::string expression = spdx_expression(first);
    if (expression.empty()) continue;
    if (std::find(expressions.begin(), expressions.end(), expression) != expressions.end()) continue;
    expressions.push_back(expression);
    // Each LicenseRef- once, with the text that defines it.
    std::size_t at = 0;
    while ((at = expression.find("LicenseRef-", at)) != std::string::npos) {
      std::size_t end = expression.find(' ', at);
      if (end == std::string::npos) end = expression.size();
      const std::string id = expression.substr(at, end - at);
      at = end;
      if (std::any_of(out.others.begin(), out.others.end(), [&](const Licence::Other& o) { return o.id == id; })) {
        continue;
      }
      // The DEP-5 name the reference stands for: the words of the line that make it.
      std::string name;
      for (const auto& w : words_of(first)) {
        if (licence_ref(w) == id) name = w;
      }
      if (name.empty()) name = first;
      std::string text;
      for (const auto& [key, body] : texts) {
        if (key == lower(name) || key == lower(first)) text = body;
      }
      if (text.empty() && newline != std::string::npos) text = licence->substr(newline + 1);
      if (text.empty()) text = std::string(fallback_text);
      out.others.push_back({id, name, std::move(text)});
    }
  }
  for (auto& e : expressions) {
    const bool compound = e.find(" OR ") != std::string::npos || e.find(" AND ") != std::string::npos;
    const bool enclosed = e.starts_with('(') && e.ends_with(')') && e.find(')') == e.size() - 1;
    if (compound && !enclosed && expressions.size() > 1) e = "(" + e + ")";
    out.expression += (out.expression.empty() ? "" : " AND ") + e;
  }
  return out;
}

}  // namespace arec
