#include "registry-client/auth.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "util/ascii.hpp"
#include "util/process.hpp"

namespace arec {

namespace {

constexpr auto k_helper_timeout = std::chrono::seconds(30);
constexpr std::size_t k_helper_output = 64 * 1024;
constexpr auto k_renew_margin = std::chrono::seconds(10);
constexpr std::string_view k_docker_hub = "index.docker.io";

using ascii::lower;

bool is_token_char(char c) {
  return ascii::is_alnum(c) || std::string_view("!#$%&'*+-.^_`|~/").find(c) != std::string_view::npos;
}

// A cursor over a WWW-Authenticate value (RFC 7235 challenges).
class ChallengeReader {
 public:
  explicit ChallengeReader(std::string_view text) : m_text(text) {}

  bool done() {
    skip(" \t,");
    return m_pos >= m_text.size();
  }
  std::string token() {
    const auto start = m_pos;
    while (m_pos < m_text.size() && is_token_char(m_text[m_pos])) ++m_pos;
    return std::string(m_text.substr(start, m_pos - start));
  }
  // At "name=": true, leaving the cursor on the value.
  bool param_follows() {
    const auto save = m_pos;
    skip(" \t");
    const auto start = m_pos;
    while (m_pos < m_text.size() && is_token_char(m_text[m_pos])) ++m_pos;
    const bool named = m_pos > start;
    skip(" \t");
    const bool is_param = named && m_pos < m_text.size() && m_text[m_pos] == '=';
    m_pos = save;
    return is_param;
  }
  std::pair<std::string, std::string> param() {
    skip(" \t");
    const auto start = m_pos;
    while (m_pos < m_text.size() && is_token_char(m_text[m_pos])) ++m_pos;
    std::string name = lower(m_text.substr(start, m_pos - start));
    skip(" \t");
    ++m_pos;  // '='
    skip(" \t");
    std::string value;
    if (m_pos < m_text.size() && m_text[m_pos] == '"') {
      for (++m_pos; m_pos < m_text.size() && m_text[m_pos] != '"'; ++m_pos) {
        if (m_text[m_pos] == '\\' && m_pos + 1 < m_text.size()) ++m_pos;
        value.push_back(m_text[m_pos]);
      }
      ++m_pos;
    } else {
      while (m_pos < m_text.size() && m_text[m_pos] != ',' && m_text[m_pos] != ' ') value.push_back(m_text[m_pos++]);
    }
    return {std::move(name), std::move(value)};
  }
  void skip(std::string_view chars) {
    while (m_pos < m_text.size() && chars.find(m_text[m_pos]) != std::string_view::npos) ++m_pos;
  }

 private:
  std::string_view m_text;
  std::size_t m_pos = 0;
};

std::string json_string(const nlohmann::json& object, const char* key) {
  return object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : std::string();
}

// The auths entry for `key`, comparing keys by credential_key().
const nlohmann::json* find_auths_entry(const nlohmann::json& config, const std::string& key) {
  if (!config.contains("auths") || !config["auths"].is_object()) return nullptr;
  for (const auto& [name, entry] : config["auths"].items()) {
    if (credential_key(name) == key && entry.is_object()) return &entry;
  }
  return nullptr;
}

Result<std::optional<Credential>> credential_from_entry(const nlohmann::json& entry, std::string_view path,
                                                        const std::string& key) {
  Credential c;
  c.source = std::string(path);
  const std::string auth = json_string(entry, "auth");
  if (!auth.empty()) {
    auto decoded = base64_decode(auth);
    const auto colon = decoded ? decoded->find(':') : std::string::npos;
    if (colon == std::string::npos) {
      return fail_input(std::string(path) + ": .auths[\"" + key + "\"].auth is not base64 of user:password");
    }
    c.username = decoded->substr(0, colon);
    c.password = decoded->substr(colon + 1);
  } else {
    c.username = json_string(entry, "username");
    c.password = json_string(entry, "password");
  }
  c.identity_token = json_string(entry, "identitytoken");
  if (c.username.empty() && c.password.empty() && c.identity_token.empty()) return std::optional<Credential>();
  return std::optional<Credential>(std::move(c));
}

// The server URL a credential helper knows a registry by (what `docker login` stored).
std::string helper_server(const std::string& key) { return key == k_docker_hub ? "https://index.docker.io/v1/" : key; }

}  // namespace

// ---- challenges ------------------------------------------------------------------------------------

std::string Challenge::param(const std::string& name) const {
  const auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::vector<std::string> Challenge::scopes() const {
  std::vector<std::string> out;
  const std::string all = param("scope");
  for (std::size_t pos = 0; pos < all.size();) {
    const auto end = std::min(all.find(' ', pos), all.size());
    if (end > pos) out.push_back(all.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::vector<Challenge> parse_challenges(std::string_view header) {
  std::vector<Challenge> out;
  ChallengeReader reader(header);
  while (!reader.done()) {
    if (!out.empty() && reader.param_follows()) {
      out.back().params.insert(reader.param());
      continue;
    }
    const std::string scheme = reader.token();
    if (scheme.empty()) break;
    out.push_back(Challenge{lower(scheme), {}});
  }
  return out;
}

// ---- credentials -----------------------------------------------------------------------------------

std::string credential_key(std::string_view registry) {
  std::string key = lower(registry);
  for (std::string_view scheme : {"https://", "http://"}) {
    if (key.starts_with(scheme)) key.erase(0, scheme.size());
  }
  key = key.substr(0, key.find('/'));
  if (key == "docker.io" || key == "registry-1.docker.io" || key == "index.docker.io") return std::string(k_docker_hub);
  return key;
}

Result<ConfigAnswer> lookup_config(std::string_view text, std::string_view path, std::string_view registry) {
  auto config = parse_json(text, path);
  if (!config) return fail(config.error());
  if (!config->is_object()) return fail_input(std::string(path) + ": must be a JSON object");
  const std::string key = credential_key(registry);
  ConfigAnswer answer;
  if (config->contains("credHelpers") && (*config)["credHelpers"].is_object()) {
    for (const auto& [name, helper] : (*config)["credHelpers"].items()) {
      if (credential_key(name) == key && helper.is_string()) {
        answer.helper = helper.get<std::string>();
        return answer;
      }
    }
  }
  answer.helper = json_string(*config, "credsStore");
  if (!answer.helper.empty()) return answer;
  if (const nlohmann::json* entry = find_auths_entry(*config, key)) {
    auto credential = credential_from_entry(*entry, path, key);
    if (!credential) return fail(credential.error());
    answer.credential = std::move(*credential);
  }
  return answer;
}

std::vector<fs::Path> credential_files(const CredentialPlaces& places) {
  std::vector<fs::Path> files;
  if (!places.docker_config.empty()) {
    files.push_back(fs::Path(places.docker_config) / "config.json");
  } else if (!places.home.empty()) {
    files.push_back(fs::Path(places.home) / ".docker" / "config.json");
  }
  if (!places.registry_auth_file.empty()) files.emplace_back(places.registry_auth_file);
  if (!places.xdg_runtime_dir.empty()) files.push_back(fs::Path(places.xdg_runtime_dir) / "containers" / "auth.json");
  return files;
}

Result<std::optional<Credential>> run_credential_helper(std::string_view helper, std::string_view server) {
  const std::string program = "docker-credential-" + std::string(helper);
  if (helper.empty() || helper.find('/') != std::string_view::npos) {
    return fail_input("credential helper \"" + std::string(helper) + "\" is not a helper name");
  }
  auto run = run_process({program, "get"}, server, k_helper_timeout, k_helper_output);
  if (!run) return fail(run.error());
  if (run->exit_code != 0) {
    // The protocol's way of saying "nothing stored for this server".
    if (run->out.find("credentials not found") != std::string::npos) return std::optional<Credential>();
    std::string said = run->out.substr(0, run->out.find('\n')).substr(0, 200);
    return fail_input(
        program + " get: " +
        (run->exit_code < 0 ? std::string("killed or timed out") : "exit " + std::to_string(run->exit_code)) +
        (said.empty() ? "" : ": " + said));
  }
  const auto read = read_json<nlohmann::json>(run->out);
  if (!read || !read->is_object()) return fail_input(program + " get: the answer is not a JSON object");
  const nlohmann::json& answer = *read;
  Credential c;
  c.source = program;
  c.username = json_string(answer, "Username");
  const std::string secret = json_string(answer, "Secret");
  if (c.username == "<token>") {
    c.username.clear();
    c.identity_token = secret;
  } else {
    c.password = secret;
  }
  if (c.username.empty() && c.password.empty() && c.identity_token.empty()) return std::optional<Credential>();
  return std::optional<Credential>(std::move(c));
}

Result<std::optional<Credential>> find_credential(std::string_view registry, const std::vector<fs::Path>& files) {
  const std::string key = credential_key(registry);
  for (const auto& path : files) {
    auto text = fs::read_file(path);
    if (!text) continue;  // an absent file is simply not a source
    auto answer = lookup_config(*text, path.string(), key);
    if (!answer) return fail(answer.error());
    if (!answer->helper.empty()) {
      auto credential = run_credential_helper(answer->helper, helper_server(key));
      if (!credential)
        return fail(
            std::move(credential.error()).context("finding credentials for " + key + " (" + path.string() + ")"));
      if (*credential) return credential;
    } else if (answer->credential) {
      return answer->credential;
    }
  }
  return std::optional<Credential>();
}

Result<Token> parse_token_response(std::string_view body, std::chrono::steady_clock::time_point now) {
  const auto read = read_json<nlohmann::json>(body);
  if (!read || !read->is_object()) return fail(Error::registry("the token service's answer is not a JSON object"));
  const nlohmann::json& answer = *read;
  Token token;
  token.value = json_string(answer, "token");
  if (token.value.empty()) token.value = json_string(answer, "access_token");
  if (token.value.empty()) return fail(Error::registry("the token service's answer holds no token"));
  // It goes into a header of every later request: a CR or LF would add headers of the service's choosing.
  if (std::ranges::any_of(token.value, [](char c) {
        return static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f;
      })) {
    return fail(Error::registry(
        "the token service's answer holds a token with control characters, spaces or bytes outside ASCII; refused"));
  }
  std::int64_t seconds = 60;
  if (answer.contains("expires_in") && answer["expires_in"].is_number_integer() &&
      answer["expires_in"].get<std::int64_t>() > 0) {
    // At most a day: a token service's figure, however large, must not overflow the clock.
    seconds = std::min<std::int64_t>(answer["expires_in"].get<std::int64_t>(), 24 * 60 * 60);
  }
  token.expires = now + std::chrono::seconds(seconds);
  const std::chrono::steady_clock::duration life = std::chrono::seconds(seconds);
  token.renew = token.expires - std::min<std::chrono::steady_clock::duration>(k_renew_margin, life / 2);
  return token;
}

// ---- base64 ----------------------------------------------------------------------------------------

std::string base64_encode(std::string_view bytes) {
  static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t group = static_cast<std::uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<std::uint8_t>(bytes[i + 2]);
    out.push_back(k_alphabet[(group >> 18) & 63]);
    out.push_back(k_alphabet[(group >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? k_alphabet[(group >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? k_alphabet[group & 63] : '=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  std::uint32_t group = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = value(c);
    if (v < 0) return std::nullopt;
    group = (group << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((group >> bits) & 0xff));
    }
  }
  return out;
}

// ---- Authenticator ---------------------------------------------------------------------------------

Authenticator::Authenticator(std::string registry, std::string origin, std::vector<fs::Path> credential_files)
    : m_registry(std::move(registry)), m_origin(std::move(origin)), m_credential_files(std::move(credential_files)) {}

std::string Authenticator::header() const {
  std::lock_guard lock(m_mutex);
  return m_header;
}

bool Authenticator::sends_to(std::string_view url) const { return http::origin_of(url) == m_origin; }

void Authenticator::set_origin(std::string origin) {
  const std::lock_guard lock(m_mutex);
  m_origin = std::move(origin);
}

RegistryError Authenticator::refused(std::string_view what) const {
  RegistryError e;
  e.status = 401;
  e.code = "UNAUTHORIZED";
  e.message = std::string(what);
  return e;
}

RegistryResult<void> Authenticator::load_credential() {
  if (m_credential_loaded) return {};
  auto found = find_credential(m_registry, m_credential_files);
  if (!found) return std::unexpected(RegistryError::local(found.error()));
  m_credential = std::move(*found);
  m_credential_loaded = true;
  if (m_credential) spdlog::debug("using credentials for {} from {}", m_registry, m_credential->source);
  return {};
}

RegistryResult<void> Authenticator::authorize(const http::Headers& response, std::string_view sent,
                                              const std::vector<std::string>& scopes, http::Client& client) {
  std::lock_guard lock(m_mutex);
  std::vector<Challenge> challenges;
  for (const auto& value : response.get_all("WWW-Authenticate")) {
    for (auto& c : parse_challenges(value)) challenges.push_back(std::move(c));
  }
  const auto bearer = std::ranges::find(challenges, std::string("bearer"), &Challenge::scheme);
  const auto basic = std::ranges::find(challenges, std::string("basic"), &Challenge::scheme);
  if (bearer == challenges.end() && basic == challenges.end()) {
    return std::unexpected(refused("authentication required, with no Basic or Bearer challenge arec can answer"));
  }
  if (auto loaded = load_credential(); !loaded) return loaded;

  if (bearer != challenges.end()) {
    const std::size_t known = m_scopes.size();
    m_scopes.insert(scopes.begin(), scopes.end());
    for (auto& scope : bearer->scopes()) m_scopes.insert(std::move(scope));
    // Another worker renewed the token since this request went out: just send it again.
    if (!m_header.empty() && sent != m_header && m_scopes.size() == known) return {};
    m_bearer = *bearer;
    return fetch_token(*bearer, client);
  }
  if (!m_credential || m_credential->username.empty()) {
    return std::unexpected(refused("authentication required, and no credentials for " + m_registry +
                                   " were found (docker config.json, REGISTRY_AUTH_FILE, containers auth.json)"));
  }
  const std::string header = "Basic " + base64_encode(m_credential->username + ":" + m_credential->password);
  if (sent == header) {
    return std::unexpected(
        refused("the registry refused the credentials for " + m_registry + " from " + m_credential->source));
  }
  m_header = header;
  return {};
}

RegistryResult<void> Authenticator::renew_if_expiring(http::Client& client) {
  std::lock_guard lock(m_mutex);
  if (!m_bearer || m_header.empty() || std::chrono::steady_clock::now() < m_renew) return {};
  return fetch_token(*m_bearer, client);
}

RegistryResult<void> Authenticator::fetch_token(const Challenge& challenge, http::Client& client) {
  const std::string realm = challenge.param("realm");
  if (realm.empty()) return std::unexpected(refused("the Bearer challenge names no realm to get a token from"));
  // Credentials go to the token service only over TLS, or when it is the registry's own origin (scheme,
  // host and port): another port of the same host is another server, which may be anyone's.
  const bool may_send = m_credential && (realm.starts_with("https://") || http::origin_of(realm) == m_origin);
  http::Request request;
  std::string form;
  const std::string service = challenge.param("service");
  if (may_send && !m_credential->identity_token.empty()) {
    // OAuth2 refresh-token grant, as docker does with an identity token.
    std::string scope_list;
    for (const auto& s : m_scopes) scope_list += (scope_list.empty() ? "" : " ") + s;
    request.method = http::Method::post;
    request.url = realm;
    form = "grant_type=refresh_token&client_id=arec&service=" + http::url_encode(service) +
           "&scope=" + http::url_encode(scope_list) +
           "&refresh_token=" + http::url_encode(m_credential->identity_token);
    request.body = std::string_view(form);
    request.headers.push_back("Content-Type: application/x-www-form-urlencoded");
  } else {
    std::string url = realm;
    if (!service.empty()) {
      auto with = http::add_query(url, "service", service);
      if (!with) return std::unexpected(RegistryError::protocol(with.error().message));
      url = *with;
    }
    for (const auto& s : m_scopes) {
      auto with = http::add_query(url, "scope", s);
      if (!with) return std::unexpected(RegistryError::protocol(with.error().message));
      url = *with;
    }
    request.url = url;
    if (may_send && !m_credential->username.empty()) {
      request.headers.push_back("Authorization: Basic " +
                                base64_encode(m_credential->username + ":" + m_credential->password));
    }
  }
  auto response = client.perform(request);
  if (!response) return std::unexpected(RegistryError::from_failure(response.error()));
  if (response->status == 401 || response->status == 403) {
    return std::unexpected(
        refused(m_credential ? "the token service " + http::origin_of(realm) + " refused the credentials for " +
                                   m_registry + " from " + m_credential->source
                             : "the token service " + http::origin_of(realm) + " wants credentials for " + m_registry +
                                   ", and none were found"));
  }
  if (response->status != 200) {
    auto e = RegistryError::from_response(*response);
    e.message = "getting a token from " + http::origin_of(realm) + (e.message.empty() ? "" : ": " + e.message);
    return std::unexpected(e);
  }
  auto token = parse_token_response(response->body, std::chrono::steady_clock::now());
  if (!token) return std::unexpected(RegistryError::protocol(token.error().message));
  m_header = "Bearer " + token->value;
  m_renew = token->renew;
  return {};
}

}  // namespace arec
