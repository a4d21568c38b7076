// A unified diff of two texts, as `diff -u` prints it: for showing a change to a small file (the node
// settings) before it is made. Pure.
#pragma once

#include <string>
#include <string_view>

namespace arec {

// The change from `before` to `after`: the headers `--- before_name` and `+++ after_name`, then hunks of
// three lines of context, changes within six kept lines of each other in one hunk, a removed line
// before the line that replaces it. Texts are compared by longest common subsequence, so they are
// meant to be small (both whole in memory, their line counts multiplied).
std::string unified_diff(std::string_view before, std::string_view after, std::string_view before_name,
                         std::string_view after_name);

}  // namespace arec
