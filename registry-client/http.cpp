#include "registry-client/http.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "registry-client/curl_library.hpp"
#include "util/fs.hpp"

namespace arec::http {

namespace {

constexpr long k_connect_timeout_ms = 10'000;
constexpr long k_download_buffer = 512L * 1024;
constexpr long k_upload_buffer = 2L * 1024 * 1024;  // libcurl's maximum
constexpr const char* k_system_ca_directory = "/etc/ssl/certs";

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

// What the callbacks of one transfer share.
struct Transfer {
  const Request* request = nullptr;
  Response response;
  std::int64_t body_position = 0;  // of the request body, for the read callback
  std::optional<Error> local;      // a failure of ours (sink, file) that aborted the transfer
  bool length_checked = false;     // Request::expected_length, against the response's Content-Length
  std::string wrong_length;        // why a body was refused before its first byte reached the sink
};

std::int64_t body_length(const Body& body) {
  if (const auto* text = std::get_if<std::string_view>(&body)) return static_cast<std::int64_t>(text->size());
  if (const auto* range = std::get_if<FileRange>(&body)) return range->length;
  return 0;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::string_view line = trim(std::string_view(data, size * count));
  if (line.starts_with("HTTP/")) {
    // A new response begins (after a redirect or an interim 1xx): forget the previous one.
    const auto space = line.find(' ');
    t.response.status = space == std::string_view::npos ? 0 : std::atoi(std::string(line.substr(space + 1, 3)).c_str());
    t.response.headers.clear();
    t.response.body.clear();
  } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    t.response.headers.add(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return size * count;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  const bool success = t.response.status >= 200 && t.response.status < 300;
  if (success && t.request->sink != nullptr) {
    if (t.request->expected_length && !t.length_checked) {
      t.length_checked = true;
      const auto announced = t.response.headers.get("Content-Length");
      const auto length = announced ? std::atoll(announced->c_str()) : *t.request->expected_length;
      if (length != *t.request->expected_length) {
        t.wrong_length = "the registry announces " + std::to_string(length) + " bytes for " + t.request->url + ", " +
                         (length > *t.request->expected_length ? "more" : "fewer") + " than the " +
                         std::to_string(*t.request->expected_length) + " its descriptor says";
        return 0;
      }
    }
    if (auto s = t.request->sink->write(std::as_bytes(std::span(data, n))); !s) {
      t.local = s.error();
      return 0;
    }
    return n;
  }
  if (static_cast<std::int64_t>(t.response.body.size() + n) > t.request->max_body) {
    t.local = Error::registry("the response to " + std::string(method_name(t.request->method)) + " " + t.request->url +
                              " is larger than " + std::to_string(t.request->max_body) + " bytes");
    return 0;
  }
  t.response.body.append(data, n);
  return n;
}

std::size_t on_read(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const Body& body = t.request->body;
  const std::int64_t remaining = body_length(body) - t.body_position;
  const auto want =
      static_cast<std::size_t>(std::min<std::int64_t>(remaining, static_cast<std::int64_t>(size * count)));
  if (want == 0) return 0;
  if (const auto* text = std::get_if<std::string_view>(&body)) {
    std::memcpy(data, text->data() + t.body_position, want);
    t.body_position += static_cast<std::int64_t>(want);
    return want;
  }
  const auto& range = std::get<FileRange>(body);
  for (;;) {
    const ssize_t got = ::pread(range.fd, data, want, range.offset + t.body_position);
    if (got > 0) {
      t.body_position += got;
      return static_cast<std::size_t>(got);
    }
    if (got < 0 && errno == EINTR) continue;
    t.local = Error::input(got == 0 ? std::string("reading the request body: the file ended early")
                                    : "reading the request body: " + fs::errno_text(errno));
    return CURL_READFUNC_ABORT;
  }
}

int on_seek(void* user, curl_off_t offset, int origin) {
  auto& t = *static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0 || offset > body_length(t.request->body)) return CURL_SEEKFUNC_FAIL;
  t.body_position = offset;
  return CURL_SEEKFUNC_OK;
}

int on_progress(void* user, curl_off_t download_now, curl_off_t, curl_off_t, curl_off_t upload_now) {
  auto& t = *static_cast<Transfer*>(user);
  const bool uploading = !std::holds_alternative<std::monostate>(t.request->body);
  return t.request->on_progress(uploading ? upload_now : download_now) ? 0 : 1;
}

// At -vv, libcurl's account of the connections it opens, reuses and closes: how transfers share them.
// Only those lines: the rest of what it reports may carry request headers.
int on_debug(CURL*, curl_infotype type, char* data, std::size_t size, void*) {
  if (type != CURLINFO_TEXT) return 0;
  const std::string_view line = trim(std::string_view(data, size));
  for (const std::string_view prefix :
       {"Connected to ", "Re-using existing connection", "Connection #", "Closing connection"}) {
    if (line.starts_with(prefix)) {
      spdlog::trace("{}", line);
      break;
    }
  }
  return 0;
}

bool is_certificate_failure(CURLcode code) {
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS: return true;
    default: return false;
  }
}

bool is_tls_failure(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CRL_BADFILE: return true;
    default: return false;
  }
}

bool is_setup_failure(CURLcode code) {
  return code == CURLE_URL_MALFORMAT || code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_COULDNT_RESOLVE_HOST ||
         code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_BAD_FUNCTION_ARGUMENT;
}

struct CurlUrl {
  CURLU* handle = libcurl().url();
  ~CurlUrl() { libcurl().url_cleanup(handle); }
  CurlUrl() = default;
  CurlUrl(const CurlUrl&) = delete;
  CurlUrl& operator=(const CurlUrl&) = delete;

  std::optional<std::string> get(CURLUPart part, unsigned flags = 0) const {
    char* out = nullptr;
    if (libcurl().url_get(handle, part, &out, flags) != CURLUE_OK) return std::nullopt;
    std::string text(out);
    libcurl().free(out);
    return text;
  }
};

}  // namespace

std::string curl_version() { return libcurl().version_info(CURLVERSION_NOW)->version; }

std::string_view method_name(Method method) {
  switch (method) {
    case Method::get: return "GET";
    case Method::head: return "HEAD";
    case Method::post: return "POST";
    case Method::put: return "PUT";
    case Method::patch: return "PATCH";
    case Method::del: return "DELETE";
  }
  return "GET";
}

void Headers::add(std::string name, std::string value) { m_entries.emplace_back(std::move(name), std::move(value)); }

std::optional<std::string> Headers::get(std::string_view name) const {
  for (auto it = m_entries.rbegin(); it != m_entries.rend(); ++it) {
    if (iequals(it->first, name)) return it->second;
  }
  return std::nullopt;
}

std::vector<std::string> Headers::get_all(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [key, value] : m_entries) {
    if (iequals(key, name)) out.push_back(value);
  }
  return out;
}

// ---- Client ----------------------------------------------------------------------------------------

namespace {
// Every connection closes with a reset (SO_LINGER 0), also when the kernel closes it for a process
// killed mid-upload: what the socket had not yet sent is dropped, rather than sent after the process
// is gone. The chunk in flight then arrives cut short, and a front that buffers requests (nginx, by
// default) drops it, so the upload session stays where the store's note says it is; sent whole, it
// would move the session on past the note, and distribution then refuses to go on with it.
int reset_on_close(void*, curl_socket_t socket, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) {
    const linger reset{1, 0};
    (void)::setsockopt(socket, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  return CURL_SOCKOPT_OK;
}
}  // namespace

struct Client::Impl {
  CURL* curl = nullptr;
  ClientOptions options;
  std::array<char, CURL_ERROR_SIZE> error{};
};

Client::Client(ClientOptions options) : m_impl(std::make_unique<Impl>()) {
  m_impl->curl = libcurl().easy_init();
  m_impl->options = std::move(options);
}

Client::~Client() {
  if (m_impl && m_impl->curl != nullptr) libcurl().easy_cleanup(m_impl->curl);
}

Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

std::expected<Response, Failure> Client::perform(const Request& request) {
  CURL* curl = m_impl->curl;
  const CurlLibrary& lib = libcurl();
  if (curl == nullptr) return std::unexpected(Failure{Failure::Cause::local, "libcurl could not create a handle", {}});
  // Reset clears the options of the previous request but keeps its open connections.
  lib.easy_reset(curl);
  Transfer t;
  t.request = &request;
  m_impl->error[0] = '\0';

  lib.easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  lib.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  lib.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  lib.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(curl, CURLOPT_ERRORBUFFER, m_impl->error.data());
  lib.easy_setopt(curl, CURLOPT_USERAGENT, "arec");
  lib.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, k_connect_timeout_ms);
  lib.easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(m_impl->options.min_rate));
  lib.easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(m_impl->options.stall_timeout.count()));
  lib.easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  lib.easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, reset_on_close);
  lib.easy_setopt(curl, CURLOPT_BUFFERSIZE, k_download_buffer);
  lib.easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, k_upload_buffer);
  if (spdlog::should_log(spdlog::level::trace)) {
    lib.easy_setopt(curl, CURLOPT_DEBUGFUNCTION, on_debug);
    lib.easy_setopt(curl, CURLOPT_VERBOSE, 1L);
  }
  if (request.tls_probe) {
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    lib.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
    lib.easy_setopt(curl, CURLOPT_CAINFO, nullptr);
    lib.easy_setopt(curl, CURLOPT_CAPATH, nullptr);
  } else if (!m_impl->options.ca_file.empty()) {
    // The given bundle replaces libcurl's default one; the system's directory keeps its CAs trusted too.
    lib.easy_setopt(curl, CURLOPT_CAINFO, m_impl->options.ca_file.c_str());
    lib.easy_setopt(curl, CURLOPT_CAPATH, k_system_ca_directory);
  }
  if (request.redirects == Redirects::follow) {
    // libcurl drops a custom Authorization header when a redirect leaves the original host and port.
    lib.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    lib.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
  }
  lib.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  lib.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  lib.easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  if (request.on_progress) {
    lib.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    lib.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    lib.easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  }

  const std::int64_t length = body_length(request.body);
  const bool has_body = !std::holds_alternative<std::monostate>(request.body);
  if (has_body || request.method == Method::put || request.method == Method::patch) {
    lib.easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    lib.easy_setopt(curl, CURLOPT_READDATA, &t);
    lib.easy_setopt(curl, CURLOPT_SEEKFUNCTION, on_seek);
    lib.easy_setopt(curl, CURLOPT_SEEKDATA, &t);
  }
  switch (request.method) {
    case Method::get: lib.easy_setopt(curl, CURLOPT_HTTPGET, 1L); break;
    case Method::head: lib.easy_setopt(curl, CURLOPT_NOBODY, 1L); break;
    case Method::post:
      lib.easy_setopt(curl, CURLOPT_POST, 1L);
      lib.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(length));
      if (!has_body) lib.easy_setopt(curl, CURLOPT_POSTFIELDS, "");
      break;
    case Method::put:
    case Method::patch:
      lib.easy_setopt(curl, CURLOPT_UPLOAD, 1L);
      lib.easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(length));
      if (request.method == Method::patch) lib.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PATCH");
      break;
    case Method::del: lib.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "DELETE"); break;
  }

  // A value with CR or LF would end the header and start another: whatever put it there (a token, a
  // Location), the request is not sent.
  for (const auto& h : request.headers) {
    if (std::ranges::any_of(h,
                            [](char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; })) {
      const std::string name = h.substr(0, h.find(':'));
      return std::unexpected(Failure{
          Failure::Cause::setup, "refusing to send the header " + name + ": its value holds control characters", {}});
    }
  }
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = lib.slist_append(headers, h.c_str());
  // The body follows at once: waiting for "100 Continue" costs a round trip per upload.
  headers = lib.slist_append(headers, "Expect:");
  lib.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

  spdlog::debug("{} {}", method_name(request.method), request.url);
  const CURLcode code = lib.easy_perform(curl);
  lib.slist_free_all(headers);
  if (code != CURLE_OK) {
    Failure failure;
    failure.message =
        m_impl->error[0] != '\0' ? std::string(m_impl->error.data()) : std::string(lib.easy_strerror(code));
    if (!t.wrong_length.empty()) {
      // Like an answer cut short: a connection may have been confused, so it is worth another try
      // (within the retry budget); what matters is that nothing of it was written.
      failure.cause = Failure::Cause::network;
      failure.message = t.wrong_length;
    } else if (t.local) {
      failure.cause = Failure::Cause::local;
      failure.local = *t.local;
      failure.message = t.local->message;
    } else if (code == CURLE_ABORTED_BY_CALLBACK) {
      failure.cause = Failure::Cause::cancelled;
    } else if (is_certificate_failure(code)) {
      failure.cause = Failure::Cause::certificate;
    } else if (is_tls_failure(code)) {
      failure.cause = Failure::Cause::tls;
    } else if (is_setup_failure(code)) {
      failure.cause = Failure::Cause::setup;
    }
    spdlog::debug("{} {}: {}", method_name(request.method), request.url, failure.message);
    return std::unexpected(std::move(failure));
  }
  char* effective = nullptr;
  if (lib.easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective != nullptr)
    t.response.url = effective;
  spdlog::trace("{} {}: {}", method_name(request.method), request.url, t.response.status);
  return std::move(t.response);
}

// ---- URLs ------------------------------------------------------------------------------------------

Result<std::string> resolve_url(std::string_view base, std::string_view location) {
  if (has_control_characters(location) || location.find(' ') != std::string_view::npos) {
    return fail(
        Error::registry("the registry answered with a Location or Link holding control characters or spaces: \"" +
                        printable(location) + "\""));
  }
  CurlUrl url;
  if (libcurl().url_set(url.handle, CURLUPART_URL, std::string(base).c_str(), 0) != CURLUE_OK ||
      libcurl().url_set(url.handle, CURLUPART_URL, std::string(location).c_str(), 0) != CURLUE_OK) {
    return fail(Error::registry("the registry answered with an unusable Location \"" + std::string(location) + "\""));
  }
  auto out = url.get(CURLUPART_URL);
  if (!out)
    return fail(Error::registry("the registry answered with an unusable Location \"" + std::string(location) + "\""));
  return *out;
}

Result<std::string> add_query(std::string_view base, std::string_view name, std::string_view value) {
  CurlUrl url;
  const std::string pair = std::string(name) + "=" + std::string(value);
  if (libcurl().url_set(url.handle, CURLUPART_URL, std::string(base).c_str(), 0) != CURLUE_OK ||
      libcurl().url_set(url.handle, CURLUPART_QUERY, pair.c_str(), CURLU_APPENDQUERY | CURLU_URLENCODE) != CURLUE_OK) {
    return fail(Error::registry("cannot add " + std::string(name) + " to the URL " + std::string(base)));
  }
  auto out = url.get(CURLUPART_URL);
  if (!out) return fail(Error::registry("cannot add " + std::string(name) + " to the URL " + std::string(base)));
  return *out;
}

std::string url_encode(std::string_view text) {
  char* encoded = libcurl().easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (encoded == nullptr) return {};
  std::string out(encoded);
  libcurl().free(encoded);
  return out;
}

std::string origin_of(std::string_view text) {
  CurlUrl url;
  if (libcurl().url_set(url.handle, CURLUPART_URL, std::string(text).c_str(), 0) != CURLUE_OK) return {};
  auto scheme = url.get(CURLUPART_SCHEME);
  auto host = url.get(CURLUPART_HOST);
  auto port = url.get(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!scheme || !host || !port) return {};
  std::string out = *scheme + "://" + *host + ":" + *port;
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 307: return "Temporary Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return {};
  }
}

}  // namespace arec::http
