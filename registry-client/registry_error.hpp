// Registry errors as data: what the registry answered ({status, code, message}), or why no answer came.
// is_temporary() decides retries (ARCHITECTURE.md, "The registry client"; go-containerregistry's transport.Error).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "registry-client/http.hpp"
#include "util/error.hpp"

namespace arec {

struct RegistryError {
  enum class Origin {
    response,  // the registry answered with an error status
    network,   // no answer: refused, reset, stalled
    setup,     // a malformed URL or an unknown host name
    tls,       // TLS handshake or certificate verification
    local,     // our side: a file, the store, a cancelled transfer
    protocol,  // an answer that breaks the distribution API (missing Location, wrong digest)
  };

  Origin origin = Origin::response;
  int status = 0;       // HTTP status of a response; 0 when none arrived
  std::string code;     // the first error code of the body ("BLOB_UNKNOWN"), when there is one
  std::string message;  // the registry's message(s), or what went wrong on the way
  std::optional<std::chrono::milliseconds> retry_after;  // from a Retry-After header
  int attempts = 1;                                      // how many times the step was tried
  std::chrono::milliseconds elapsed{0};                  // from the first try to giving up
  std::string gave_up;  // why the retries stopped before the attempts ran out (the time budget)
  Error local_error;    // for Origin::local: the underlying error, whose kind is kept

  static RegistryError from_response(const http::Response& response);
  static RegistryError from_failure(const http::Failure& failure);
  static RegistryError protocol(std::string message);
  // Our side failed (a file, the store): the error keeps its own kind and message.
  static RegistryError local(Error error);

  // Worth another try: connection failures, 408, 429, 500, 502, 503, 504, TOOMANYREQUESTS, and an
  // upload session the registry forgot (BLOB_UPLOAD_UNKNOWN), which a new session replaces.
  bool is_temporary() const;
  // "500 Internal Server Error (UNKNOWN: unknown error)", plus how often it was tried and why it gave up.
  std::string str() const;
  // An arec Error (exit 3, or the local error's own kind) whose message is `context: str()`.
  Error to_error(std::string_view context) const;
};

template <typename T>
using RegistryResult = std::expected<T, RegistryError>;

// "3.2 s", or "30 s" for whole seconds.
std::string seconds_text(std::chrono::milliseconds duration);

// Retry-After as seconds or an HTTP date, relative to now; nothing when absent or unreadable.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

}  // namespace arec
