#pragma once

// Character classes of the grammars arec reads (references, requests, HTTP challenges), ASCII only:
// <cctype>'s answers depend on the locale, and a reference's grammar does not.
#include <string>
#include <string_view>

namespace arec::ascii {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
constexpr bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool is_lower_alnum(char c) { return is_lower(c) || is_digit(c); }
constexpr bool is_alnum(char c) { return is_lower_alnum(c) || is_upper(c); }
constexpr bool is_word(char c) { return is_alnum(c) || c == '_'; }
constexpr bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (is_upper(c)) c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace arec::ascii
