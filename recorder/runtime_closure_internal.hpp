// What the closure's search (runtime_closure.cpp) and the reading of what the loader reads
// (loader_paths.cpp) share: the lexical forms of a search path's entries. Private to recorder/: included
// by its .cpp files only.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "util/paths.hpp"

namespace arec {

// Joins a directory and a name as an absolute, lexically normal image path ("/a/./b/../c" -> "/a/c").
inline std::string normal_path(std::string_view path) {
  std::vector<std::string> parts;
  for (auto& part : path_components(path)) {
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else {
      parts.push_back(std::move(part));
    }
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

inline std::vector<std::string> split_search_path(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(':', pos), text.size());
    if (end > pos) out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

inline bool mentions_origin(std::string_view entry) {
  return entry.find("$ORIGIN") != std::string_view::npos || entry.find("${ORIGIN}") != std::string_view::npos;
}

}  // namespace arec
