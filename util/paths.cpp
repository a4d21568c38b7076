#include "util/paths.hpp"

#include <algorithm>

namespace arec {

std::vector<std::string> path_components(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const std::size_t end = std::min(path.find('/', pos), path.size());
    const std::string_view part = path.substr(pos, end - pos);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    pos = end + 1;
  }
  return parts;
}

std::string join_path(const std::vector<std::string>& parts, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < std::min(count, parts.size()); ++i) {
    if (i != 0) out.push_back('/');
    out += parts[i];
  }
  return out;
}

std::optional<std::string> normalise_path(std::string_view path) {
  const auto parts = path_components(path);
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) return std::nullopt;
  return join_path(parts, parts.size());
}

}  // namespace arec
