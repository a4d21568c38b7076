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
};

struct Error {
  ErrorKind kind = ErrorKind::input;
  std::string message;

  static Error input(std::string message) { return {ErrorKind::input, std::move(message)}; }
  static Error registry(std::string message) { return {ErrorKind::registry, std::move(message)}; }

  // Prefixes what was being done, go-containerregistry style: "reading x: <cause>".
  Error context(std::string_view doing) && {
    message = std::string(doing) + ": " + message;
    return std::move(*this);
  }
};

template <typename T>
using Result = std::expected<T, Error>;

using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(Error e) { return std::unexpected<Error>(std::move(e)); }
inline std::unexpected<Error> fail_input(std::string message) { return fail(Error::input(std::move(message))); }

}  // namespace arec
