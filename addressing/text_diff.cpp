#include "addressing/text_diff.hpp"

#include <algorithm>
#include <vector>

namespace arec {

namespace {

// The lines of a text, without their newlines.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

struct DiffLine {
  char kind;  // ' ' kept, '-' removed, '+' added
  std::string_view text;
};

// A shortest edit from `a` to `b` by longest common subsequence; settings files are small.
std::vector<DiffLine> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..]
  std::vector<std::vector<std::size_t>> common(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::vector<DiffLine> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({' ', a[i++]});
      ++j;
    } else if (i < n && (j == m || common[i + 1][j] >= common[i][j + 1])) {
      out.push_back({'-', a[i++]});  // removals before additions within a change, as diff prints them
    } else {
      out.push_back({'+', b[j++]});
    }
  }
  return out;
}

}  // namespace

std::string unified_diff(std::string_view before, std::string_view after, std::string_view before_name,
                         std::string_view after_name) {
  constexpr std::size_t k_context = 3;
  const auto lines = diff_lines(lines_of(before), lines_of(after));
  std::string out = "--- " + std::string(before_name) + "\n+++ " + std::string(after_name) + "\n";
  std::size_t next = 0;  // the first line not yet shown
  std::size_t old_line = 1;
  std::size_t new_line = 1;
  for (std::size_t pos = 0; pos < lines.size();) {
    if (lines[pos].kind == ' ') {
      ++pos;
      continue;
    }
    // A hunk: from k_context lines before this change to k_context lines after the last change that
    // lies within 2 * k_context kept lines of the one before it.
    const std::size_t begin = pos > next + k_context ? pos - k_context : next;
    std::size_t end = pos;
    for (std::size_t kept = 0, i = pos; i < lines.size() && kept <= 2 * k_context; ++i) {
      if (lines[i].kind == ' ') {
        ++kept;
      } else {
        kept = 0;
        end = i;
      }
    }
    end = std::min(lines.size(), end + 1 + k_context);
    for (std::size_t i = next; i < begin; ++i) {
      if (lines[i].kind != '+') ++old_line;
      if (lines[i].kind != '-') ++new_line;
    }
    std::size_t old_count = 0;
    std::size_t new_count = 0;
    std::string body;
    for (std::size_t i = begin; i < end; ++i) {
      if (lines[i].kind != '+') ++old_count;
      if (lines[i].kind != '-') ++new_count;
      body.push_back(lines[i].kind);
      body.append(lines[i].text).push_back('\n');
    }
    // An empty side is numbered by the line before it, as diff -u does.
    out += "@@ -" + std::to_string(old_count == 0 ? old_line - 1 : old_line) + "," + std::to_string(old_count) + " +" +
           std::to_string(new_count == 0 ? new_line - 1 : new_line) + "," + std::to_string(new_count) + " @@\n" + body;
    old_line += old_count;
    new_line += new_count;
    next = pos = end;
  }
  return out;
}

}  // namespace arec
