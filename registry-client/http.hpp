// A thin libcurl wrapper: one easy handle per Client, reused so connections stay alive; request
// bodies streamed from a file range or a small buffer; response bodies streamed into a ByteSink or
// kept (capped) in memory; response headers captured. Nothing here knows the distribution API.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/byte_sink.hpp"
#include "util/error.hpp"

namespace arec::http {

enum class Method { get, head, post, put, patch, del };

std::string_view method_name(Method method);

// The version of libcurl requests go through, as `arec --version` shows it (this loads libcurl).
std::string curl_version();

// Response headers, in arrival order. Lookup ignores case; the last value of a name wins.
class Headers {
 public:
  void add(std::string name, std::string value);
  void clear() { m_entries.clear(); }
  std::optional<std::string> get(std::string_view name) const;
  std::vector<std::string> get_all(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> m_entries;
};

// A request body read from `length` bytes of an open file at `offset`, never loaded whole.
struct FileRange {
  int fd = -1;
  std::int64_t offset = 0;
  std::int64_t length = 0;
};

// No body, a small body in memory (a manifest, a form), or a range of a file (a blob or a chunk of one).
using Body = std::variant<std::monostate, std::string_view, FileRange>;

enum class Redirects { stop, follow };

struct Request {
  Method method = Method::get;
  std::string url;
  std::vector<std::string> headers{};  // "Name: value"; Authorization is never logged
  Body body{};
  // Where the body of a 2xx response goes; without a sink it is kept in Response::body.
  ByteSink* sink = nullptr;
  std::int64_t max_body = std::int64_t{1} << 20;  // cap on a body kept in memory
  Redirects redirects = Redirects::stop;
  // Bytes moved so far (sent for uploads, received for downloads); returning false cancels.
  std::function<bool(std::int64_t)> on_progress{};
  // Only asks whether the server speaks TLS at all: its certificate is not checked, so no CA bundle is
  // loaded (40 ms of CPU), and the answer must be used for nothing else. libcurl never reuses such a
  // connection for a request that checks certificates.
  bool tls_probe = false;
  // For a download into `sink`: the size the body must have. A 2xx response announcing another
  // Content-Length is abandoned before its first byte reaches the sink.
  std::optional<std::int64_t> expected_length{};
};

struct Response {
  std::string url;  // the URL that answered: another than the request's after a redirect
  int status = 0;
  Headers headers;
  std::string body;
};

// Why a request got no response.
struct Failure {
  enum class Cause {
    network,      // connection refused, reset or stalled: worth another try
    setup,        // a malformed URL or a name that does not resolve: another try will not help
    tls,          // the TLS handshake failed (as it does when the server speaks plain HTTP)
    certificate,  // the server's certificate was not verified (unknown CA, wrong name, expired)
    local,        // our side failed: the sink or the file the body is read from
    cancelled,    // on_progress asked to stop
  };
  Cause cause = Cause::network;
  std::string message;
  Error local;  // for Cause::local: the sink's error
};

// An attempt that moves less than min_rate bytes a second for this long is abandoned (and perhaps retried).
inline constexpr std::chrono::seconds k_default_stall_timeout{60};
// 1 KiB/s: a server trickling a byte now and then to keep a transfer alive is cut off all the same.
inline constexpr std::int64_t k_default_min_rate = 1024;

struct ClientOptions {
  std::string ca_file;  // extra CA bundle to trust; empty: the system's
  // A server that accepts and then says nothing, or trickles, holds each attempt this long, whatever
  // the retry budget.
  std::chrono::seconds stall_timeout = k_default_stall_timeout;
  std::int64_t min_rate = k_default_min_rate;  // bytes a second, averaged over stall_timeout
};

// One connection context, for one thread at a time. Requests on it reuse open connections.
class Client {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  std::expected<Response, Failure> perform(const Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// The URL a `Location` header names, resolved against the URL of the request that returned it
// (Location may be absolute or relative, and may carry a query of its own).
Result<std::string> resolve_url(std::string_view base, std::string_view location);
// `url` with name=value added to its query: after '&' when it already has one, else after '?'.
Result<std::string> add_query(std::string_view url, std::string_view name, std::string_view value);
// Percent-encodes everything but unreserved characters, for query values and forms.
std::string url_encode(std::string_view text);
// scheme://host[:port] of a URL, lowercased, for comparing where requests go.
std::string origin_of(std::string_view url);

// The reason phrase of an HTTP status ("Not Found"), or empty for codes it does not know.
std::string_view reason_phrase(int status);

}  // namespace arec::http
