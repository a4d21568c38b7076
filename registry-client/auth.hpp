// Registry authentication: credentials from docker's config.json (auths, credHelpers, credsStore via
// the docker-credential-* protocol) and containers' auth.json, and the answer to a 401 challenge
// (Basic, or a Bearer token fetched for the scopes needed and renewed on a new 401).
//
// Credentials never appear in a message or a log, and are sent only to the registry they belong to.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "registry-client/http.hpp"
#include "registry-client/registry_error.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec {

struct Credential {
  std::string username;
  std::string password;
  std::string identity_token;  // an OAuth2 refresh token (docker's "identitytoken"), instead of a password
  std::string source;          // where it was found, for messages: a file or a helper's name
};

// One challenge of a WWW-Authenticate header: scheme lowercased, parameter names lowercased.
struct Challenge {
  std::string scheme;
  std::map<std::string, std::string> params;

  std::string param(const std::string& name) const;
  // The scopes a Bearer challenge names: its scope parameter separates them by spaces (a mount asks
  // for "repository:a:pull,push repository:b:pull"), and each goes to the token service on its own.
  std::vector<std::string> scopes() const;
};

// Parses a WWW-Authenticate value, which may hold several challenges:
//   Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull,push"
std::vector<Challenge> parse_challenges(std::string_view header);

// The key credentials are stored under for a registry host[:port]: scheme and path dropped,
// lowercased; Docker Hub's names all become "index.docker.io".
std::string credential_key(std::string_view registry);

// What one config file says about a registry: nothing, a credential, or a helper to ask.
struct ConfigAnswer {
  std::optional<Credential> credential;
  std::string helper;  // "pass" for docker-credential-pass
};

// Reads docker's config.json format (also containers' auth.json): credHelpers[host], else credsStore,
// else auths[host] (auth = base64(user:password), or username/password, or identitytoken).
Result<ConfigAnswer> lookup_config(std::string_view text, std::string_view path, std::string_view registry);

// The environment variables that say where credentials are (read by the command line; empty: unset).
struct CredentialPlaces {
  std::string docker_config;       // DOCKER_CONFIG
  std::string home;                // HOME
  std::string registry_auth_file;  // REGISTRY_AUTH_FILE
  std::string xdg_runtime_dir;     // XDG_RUNTIME_DIR
};

// The files looked in, in order: $DOCKER_CONFIG/config.json or ~/.docker/config.json, then
// $REGISTRY_AUTH_FILE, then $XDG_RUNTIME_DIR/containers/auth.json.
std::vector<fs::Path> credential_files(const CredentialPlaces& places);

// Runs `docker-credential-<helper> get` with the server URL on its standard input (never on its
// command line) and reads {"ServerURL","Username","Secret"}; nothing when it knows no credential.
Result<std::optional<Credential>> run_credential_helper(std::string_view helper, std::string_view server);

// The credential for a registry host[:port] from the first of `files` that has one; nothing: anonymous.
Result<std::optional<Credential>> find_credential(std::string_view registry, const std::vector<fs::Path>& files);

// A token endpoint's answer: {"token"|"access_token", "expires_in" (default 60)}.
struct Token {
  std::string value;
  std::chrono::steady_clock::time_point expires;
  // When to fetch a new one before a long upload: a few seconds before it expires, or halfway through
  // a shorter life, so that a token just fetched is used rather than fetched again for every upload.
  std::chrono::steady_clock::time_point renew;
};
Result<Token> parse_token_response(std::string_view body, std::chrono::steady_clock::time_point now);

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

// The authorization state for one registry, shared by the workers of a run.
class Authenticator {
 public:
  // `registry` is host[:port] (for finding credentials and in messages); `origin` is scheme://host:port,
  // the only place Authorization is sent; credentials are looked for in `credential_files`.
  Authenticator(std::string registry, std::string origin, std::vector<fs::Path> credential_files = {});

  // The Authorization header value for the registry, or empty while anonymous.
  std::string header() const;
  // True when `url` goes to the registry itself, so it may carry the Authorization header.
  bool sends_to(std::string_view url) const;
  // The registry's origin once its scheme is settled; called before any worker sends a request.
  void set_origin(std::string origin);

  // Answers a 401 to a request sent with Authorization `sent` (empty: none) that needs `scopes`
  // ("repository:mesh/app:pull,push"). Ok: send it again with header(). An error: the registry
  // refuses, with why (no credentials, credentials refused, the token service failing).
  RegistryResult<void> authorize(const http::Headers& response, std::string_view sent,
                                 const std::vector<std::string>& scopes, http::Client& client);
  // Fetches a new Bearer token when the current one expires within a few seconds, so that a long
  // upload does not start with a token about to be refused.
  RegistryResult<void> renew_if_expiring(http::Client& client);

 private:
  RegistryResult<void> load_credential();
  RegistryResult<void> fetch_token(const Challenge& challenge, http::Client& client);
  RegistryError refused(std::string_view what) const;

  std::string m_registry;
  std::string m_origin;
  std::vector<fs::Path> m_credential_files;
  mutable std::mutex m_mutex;
  std::string m_header;
  bool m_credential_loaded = false;
  std::optional<Credential> m_credential;
  std::set<std::string> m_scopes;     // every scope asked for so far: a new token covers them all
  std::optional<Challenge> m_bearer;  // the Bearer challenge tokens are fetched for
  std::chrono::steady_clock::time_point m_renew{};
};

}  // namespace arec
