// Errors as values: every fallible leaf returns Result<T>; only main maps them to exit codes.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace arec {

// Which exit code an error becomes (ARCHITECTURE.md, "The command line"). Ordered by how it is reported, not severity.
enum class ErrorKind {
  input,     // bad input or usage: exit 2
  registry,  // registry or network failure: exit 3
  trust,     // a record or image refused by the trust policy (oci/trust): exit 4, in every command
};

struct Error {
  ErrorKind kind = ErrorKind::input;
  std::string message;

  static Error input(std::string message) { return {ErrorKind::input, std::move(message)}; }
  static Error registry(std::string message) { return {ErrorKind::registry, std::move(message)}; }
  static Error trust(std::string message) { return {ErrorKind::trust, std::move(message)}; }

  // Prefixes what was being done, go-containerregistry style: "reading x: <cause>".
  Error context(std::string_view doing) && {
    message = std::string(doing) + ": " + message;
    return std::move(*this);
  }
};

template <typename T>
using Result = std::expected<T, Error>;

using Status = std::expected<void, Error>;

// `text` with every control character written as text: "\n", "\r", "\t", and "\xNN" for the others
// (ESC is "\x1b"), C1 controls (U+0080-U+009F) as "\u0080"-"\u009f". What came from outside (a
// registry's answer, a record's field, an entry name, a file name) is printed through it, so that it
// cannot move the cursor, recolour the terminal, set its title or forge a line of arec's own output.
inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  static constexpr char k_hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 15]);
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      const auto next = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out.push_back(k_hex[next >> 4]);
      out.push_back(k_hex[next & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

// Whether `text` holds a control character (what printable escapes).
inline bool has_control_characters(std::string_view text) { return printable(text).size() != text.size(); }

inline std::unexpected<Error> fail(Error e) { return std::unexpected<Error>(std::move(e)); }
inline std::unexpected<Error> fail_input(std::string message) { return fail(Error::input(std::move(message))); }

}  // namespace arec
