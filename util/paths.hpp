// Paths inside an image, a layer or a bundle: the one reading of "a/./b//c/" every archive reader and
// every destination given on the command line goes through, so ".." is refused the same way everywhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace arec {

// The components of `path`, empty ones and "." dropped; ".." is kept for the caller to decide.
std::vector<std::string> path_components(std::string_view path);

// `parts[0, count)` joined with "/".
std::string join_path(const std::vector<std::string>& parts, std::size_t count);

// The relative normal form of `path` ("/usr//lib/./x/" and "./usr/lib/x" give "usr/lib/x", "/" gives
// ""), or nothing when a component is "..": a name that could climb out of the root it is read into.
std::optional<std::string> normalise_path(std::string_view path);

}  // namespace arec
