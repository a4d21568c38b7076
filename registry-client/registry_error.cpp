#include "registry-client/registry_error.hpp"

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "registry-client/curl_library.hpp"

namespace arec {

namespace {

constexpr std::size_t k_max_text = 200;

// A body that is not the distribution error document, shortened to one line for a message.
std::string one_line(std::string_view body) {
  std::string out;
  for (const char c : body.substr(0, k_max_text)) out.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (body.size() > k_max_text) out += "...";
  return out;
}

}  // namespace

std::string seconds_text(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", static_cast<double>(duration.count()) / 1000.0);
  return buffer;
}

RegistryError RegistryError::from_response(const http::Response& response) {
  RegistryError e;
  e.origin = Origin::response;
  e.status = response.status;
  if (auto value = response.headers.get("Retry-After")) e.retry_after = parse_retry_after(*value);
  const auto read = read_json<nlohmann::json>(response.body);
  const nlohmann::json json = read ? *read : nlohmann::json();
  if (json.is_object() && json.contains("errors") && json["errors"].is_array()) {
    for (const auto& item : json["errors"]) {
      if (!item.is_object()) continue;
      const std::string code = item.contains("code") && item["code"].is_string() ? item["code"].get<std::string>() : "";
      const std::string message =
          item.contains("message") && item["message"].is_string() ? item["message"].get<std::string>() : "";
      if (e.code.empty()) e.code = code;
      if (!e.message.empty()) e.message += "; ";
      e.message += message.empty() ? code : code.empty() ? message : code + ": " + message;
    }
    // What the registry wrote goes into one line of an error, as a body that is not the document does.
    e.message = one_line(e.message);
  } else if (!response.body.empty()) {
    e.message = one_line(response.body);
  }
  return e;
}

RegistryError RegistryError::from_failure(const http::Failure& failure) {
  RegistryError e;
  switch (failure.cause) {
    case http::Failure::Cause::network: e.origin = Origin::network; break;
    case http::Failure::Cause::setup: e.origin = Origin::setup; break;
    case http::Failure::Cause::tls:
    case http::Failure::Cause::certificate: e.origin = Origin::tls; break;
    case http::Failure::Cause::local:
    case http::Failure::Cause::cancelled: e.origin = Origin::local; break;
  }
  e.message = failure.message;
  if (failure.cause == http::Failure::Cause::certificate)
    e.message += " (trust the registry's CA with --ca-file FILE or AREC_CA_FILE)";
  e.local_error = failure.cause == http::Failure::Cause::local ? failure.local : Error::registry(failure.message);
  return e;
}

RegistryError RegistryError::protocol(std::string message) {
  RegistryError e;
  e.origin = Origin::protocol;
  e.message = std::move(message);
  return e;
}

RegistryError RegistryError::local(Error error) {
  RegistryError e;
  e.origin = Origin::local;
  e.message = error.message;
  e.local_error = std::move(error);
  return e;
}

bool RegistryError::is_temporary() const {
  if (origin == Origin::network) return true;
  if (origin != Origin::response) return false;
  if (code == "TOOMANYREQUESTS" || code == "BLOB_UPLOAD_UNKNOWN") return true;
  switch (status) {
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504: return true;
    default: return false;
  }
}

std::string RegistryError::str() const {
  std::string out;
  if (origin == Origin::response) {
    out = std::to_string(status);
    if (const auto reason = http::reason_phrase(status); !reason.empty()) out += " " + std::string(reason);
    if (!message.empty()) out += " (" + message + ")";
  } else {
    out = message;
  }
  if (attempts > 1) {
    out += " (gave up after " + std::to_string(attempts) + " attempts in " + seconds_text(elapsed) +
           (gave_up.empty() ? "" : ": " + gave_up) + ")";
  } else if (!gave_up.empty()) {
    out += " (gave up: " + gave_up + ")";
  }
  return out;
}

Error RegistryError::to_error(std::string_view context) const {
  Error e = origin == Origin::local ? local_error : Error::registry("");
  e.message = std::string(context) + ": " + (origin == Origin::local ? local_error.message : str());
  return e;
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value) {
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos && value.size() < 9) {
    return std::chrono::seconds(std::stol(std::string(value)));
  }
  const std::time_t when = http::libcurl().getdate(std::string(value).c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const std::time_t now = std::time(nullptr);
  return std::chrono::seconds(when > now ? when - now : 0);
}

}  // namespace arec
