#include "registry-client/registry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "addressing/nodes.hpp"
#include "addressing/reference.hpp"
#include "util/ascii.hpp"

namespace arec {

namespace {

constexpr std::int64_t k_max_manifest = std::int64_t{4} << 20;
// Bounds on a paginated list (a catalog, a repository's tags): far above any real registry's, low
// enough that a hostile one cannot hold a run for long or fill its memory.
constexpr std::size_t k_max_list_pages = 10'000;
constexpr std::size_t k_max_list_names = 1'000'000;
constexpr int k_auth_rounds = 2;
constexpr std::string_view k_octet_stream = "Content-Type: application/octet-stream";

// Passes bytes on while hashing and counting them, so a download is verified as it arrives.
class VerifyingSink final : public ByteSink {
 public:
  VerifyingSink(ByteSink& next, const Descriptor& expected)
      : m_next(next), m_expected(expected), m_hasher(expected.digest.algorithm()) {}

  Status write(std::span<const std::byte> data) override {
    m_size += static_cast<std::int64_t>(data.size());
    if (m_size > m_expected.size) {
      return fail(Error::registry("the registry sent more than the " + std::to_string(m_expected.size) + " bytes of " +
                                  m_expected.digest.str()));
    }
    m_hasher.update(data);
    return m_next.write(data);
  }
  Status finish() override { return m_next.finish(); }

  // Fewer bytes than the descriptor says: the transfer ended early, as when a connection drops.
  bool ended_early() const { return m_size < m_expected.size; }

  std::optional<std::string> problem() {
    if (m_size != m_expected.size) {
      return "the registry sent " + std::to_string(m_size) + " of the " + std::to_string(m_expected.size) +
             " bytes of " + m_expected.digest.str();
    }
    if (const auto got = m_hasher.finish(); got != m_expected.digest) {
      return "the content the registry sent for " + m_expected.digest.str() + " has the digest " + got.str();
    }
    return std::nullopt;
  }

 private:
  ByteSink& m_next;
  const Descriptor& m_expected;
  Hasher m_hasher;
  std::int64_t m_size = 0;
};

RegistryResult<http::Response> expect(RegistryResult<http::Response> response, std::initializer_list<int> statuses) {
  if (!response) return response;
  if (std::ranges::find(statuses, response->status) == statuses.end()) {
    return std::unexpected(RegistryError::from_response(*response));
  }
  return response;
}

std::string media_type_of(const http::Response& response) {
  std::string type = response.headers.get("Content-Type").value_or("");
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.pop_back();
  return type;
}

RegistryResult<std::string> location_of(const http::Response& response, std::string_view request_url) {
  const auto location = response.headers.get("Location");
  if (!location || location->empty()) {
    return std::unexpected(RegistryError::protocol("the registry started an upload without a Location"));
  }
  auto url = http::resolve_url(request_url, *location);
  if (!url) return std::unexpected(RegistryError::protocol(url.error().message));
  return *url;
}

// A count of bytes written in decimal digits (no sign, no space), when it is one that fits.
std::optional<std::int64_t> decimal_count(std::string_view text) {
  std::int64_t count = 0;
  if (text.empty() || !std::ranges::all_of(text, ascii::is_digit) ||
      std::from_chars(text.data(), text.data() + text.size(), count).ec != std::errc())
    return std::nullopt;
  return count;
}

// A reported Docker-Content-Digest that contradicts `digest`, as an error; fine when absent.
RegistryResult<void> check_reported_digest(const http::Response& response, const Digest& digest) {
  const auto reported = response.headers.get("Docker-Content-Digest");
  if (reported && *reported != digest.str()) {
    return std::unexpected(RegistryError::protocol("the registry reports Docker-Content-Digest " + *reported +
                                                   " for content whose digest is " + digest.str()));
  }
  return {};
}

}  // namespace

// ---- addresses -------------------------------------------------------------------------------------

PlainHttp plain_http_for(std::string_view host, InsecureRegistry insecure) {
  std::string_view name = host;
  if (name.starts_with('[')) {
    name = name.substr(0, name.find(']') + 1);
  } else if (const auto colon = name.rfind(':'); colon != std::string_view::npos && name.find(':') == colon) {
    name = name.substr(0, colon);
  }
  return insecure == InsecureRegistry::yes || is_loopback_host(name) ? PlainHttp::fallback : PlainHttp::refused;
}

std::string RegistryAddress::base_url() const {
  const std::string api_host = credential_key(host) == "index.docker.io" ? "registry-1.docker.io" : host;
  return (scheme == Scheme::http ? "http://" : "https://") + api_host;
}

Result<RegistryAddress> registry_from_settings(const NodeSettings& settings, const ClientSettings& client) {
  auto resolution = resolve(settings, "registry");
  if (!resolution) return fail(resolution.error());
  auto endpoint = resolution->endpoint();
  if (!endpoint) return fail(endpoint.error());
  RegistryAddress address;
  address.host = *endpoint;
  address.plain_http =
      plain_http_for(*endpoint, resolution->insecure_registry ? InsecureRegistry::yes : InsecureRegistry::no);
  address.client = client;
  return address;
}

Result<RegistryAddress> registry_for_domain(std::string_view domain, const NodeSettings& settings,
                                            const ClientSettings& client) {
  // The registry's name is no host to look up: it means the registry the settings place now.
  const auto is_registry_name = [&] {
    return std::ranges::equal(domain, settings.registry_name, [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
    });
  };
  if (domain.empty() || (!settings.registry_name.empty() && is_registry_name()))
    return registry_from_settings(settings, client);
  InsecureRegistry insecure = InsecureRegistry::no;
  for (const auto& [name, node] : settings.nodes) {
    const auto port = node.ports.find("registry");
    if (!node.insecure_registry || node.address.empty() || port == node.ports.end()) continue;
    if (host_for_port(node.address) + ":" + std::to_string(port->second) == domain) insecure = InsecureRegistry::yes;
  }
  return RegistryAddress{std::string(domain), Scheme::https, client, plain_http_for(domain, insecure)};
}

// ---- Registry --------------------------------------------------------------------------------------

Registry::Registry(RegistryAddress address, Access access)
    : m_address(std::move(address)),
      m_access(access),
      m_auth(m_address.host, http::origin_of(m_address.base_url() + "/"), m_address.client.credential_files) {}

std::string Registry::scope(std::string_view repository) const {
  return "repository:" + std::string(repository) + (m_access == Access::push ? ":pull,push" : ":pull");
}

RegistryResult<void> Registry::settle_scheme(http::Client& client) {
  const std::lock_guard lock(m_settle_mutex);
  if (m_settled || m_address.scheme == Scheme::http || m_address.plain_http == PlainHttp::refused) {
    m_settled = true;
    return {};
  }
  // Whether it speaks TLS at all; every request after this one checks its certificate.
  auto secure = client.perform({.url = m_address.base_url() + "/v2/", .tls_probe = true});
  if (secure) {
    m_settled = true;
    return {};
  }
  // Only a failed handshake may mean a plain HTTP server; an untrusted certificate, a refused
  // connection or an unknown name are reported as they are.
  if (secure.error().cause != http::Failure::Cause::tls)
    return std::unexpected(RegistryError::from_failure(secure.error()));
  RegistryAddress plain = m_address;
  plain.scheme = Scheme::http;
  auto answered = client.perform({.url = plain.base_url() + "/v2/"});
  // A connection that broke is worth another try of both; the step's retries decide.
  if (!answered && answered.error().cause == http::Failure::Cause::network) {
    return std::unexpected(RegistryError::from_failure(answered.error()));
  }
  // A TLS server answers plain HTTP with 400 ("Client sent an HTTP request to an HTTPS server"); a
  // registry's /v2/ never does.
  if (!answered || answered->status == 400) return std::unexpected(RegistryError::from_failure(secure.error()));
  spdlog::debug("{} answers in plain HTTP ({}): using http://", m_address.host, secure.error().message);
  m_address = std::move(plain);
  m_auth.set_origin(http::origin_of(m_address.base_url() + "/"));
  m_settled = true;
  return {};
}

std::string manifest_accept() {
  return "Accept: " + std::string(media_type::k_manifest) + ", " + std::string(media_type::k_index) + ", " +
         std::string(media_type::k_docker_manifest) + ", " + std::string(media_type::k_docker_list);
}

Descriptor FetchedManifest::descriptor() const {
  Descriptor d;
  d.media_type = media_type;
  d.digest = digest;
  d.size = static_cast<std::int64_t>(bytes.size());
  return d;
}

// ---- Session ---------------------------------------------------------------------------------------

Session::Session(Registry& registry)
    : m_registry(registry),
      m_client(http::ClientOptions{registry.address().client.ca_file, registry.address().client.stall_timeout,
                                   registry.address().client.min_rate}) {}

RegistryResult<http::Response> Session::send(const http::Request& request, const std::vector<std::string>& scopes) {
  Authenticator& auth = m_registry.authenticator();
  const bool ours = auth.sends_to(request.url);
  for (int round = 0;; ++round) {
    http::Request attempt = request;
    const std::string sent = ours ? auth.header() : std::string();
    if (!sent.empty()) attempt.headers.push_back("Authorization: " + sent);
    auto response = m_client.perform(attempt);
    if (!response) return std::unexpected(RegistryError::from_failure(response.error()));
    // A 401 from where a redirect led is that host's, not the registry's: its challenge is not
    // answered with the registry's credentials.
    if (response->status != 401 || !ours || !auth.sends_to(response->url) || round == k_auth_rounds)
      return std::move(*response);
    if (auto authorized = auth.authorize(response->headers, sent, scopes, m_client); !authorized) {
      return std::unexpected(authorized.error());
    }
  }
}

RegistryResult<void> Session::ping() {
  if (auto settled = m_registry.settle_scheme(m_client); !settled) return settled;
  auto response = expect(send({.url = m_registry.url("/v2/")}, {}), {200});
  if (!response) return std::unexpected(response.error());
  return {};
}

RegistryResult<std::optional<std::int64_t>> Session::blob_size(std::string_view repository, const Digest& digest) {
  http::Request request{.method = http::Method::head,
                        .url = m_registry.url("/v2/" + std::string(repository) + "/blobs/" + digest.str())};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200, 404});
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::optional<std::int64_t>();
  const auto length = response->headers.get("Content-Length");
  return std::optional<std::int64_t>(length ? decimal_count(*length).value_or(-1) : -1);
}

RegistryResult<UploadStart> Session::start_upload(std::string_view repository, const Digest& digest,
                                                  std::optional<std::string> from) {
  std::string url = m_registry.url("/v2/" + std::string(repository) + "/blobs/uploads/");
  std::vector<std::string> scopes{m_registry.scope(repository)};
  if (from) {
    // distribution 2.8 mounts only when both mount and from are given.
    url += "?mount=" + digest.str() + "&from=" + http::url_encode(*from);
    scopes.push_back("repository:" + *from + ":pull");
  }
  auto response = expect(send({.method = http::Method::post, .url = url}, scopes), {201, 202});
  if (!response) return std::unexpected(response.error());
  if (response->status == 201) return UploadStart{true, {}};
  auto location = location_of(*response, url);
  if (!location) return std::unexpected(location.error());
  return UploadStart{false, *location};
}

std::optional<std::int64_t> upload_range_held(std::string_view range) {
  if (range.starts_with("bytes=")) range.remove_prefix(6);
  if (!range.starts_with("0-")) return std::nullopt;
  // Digits only: from_chars alone would take a sign ("0--5").
  const auto last = decimal_count(range.substr(2));
  // The last byte's offset plus one is the count held: the largest offset has no count.
  if (!last || *last == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  // distribution writes "0-0" for an empty session too, which is taken as empty: a registry holding
  // one byte then refuses the next chunk, where the other reading would skip one.
  return *last == 0 ? 0 : *last + 1;
}

RegistryResult<std::optional<OpenUpload>> Session::upload_status(std::string_view repository,
                                                                 const std::string& location) {
  auto response = expect(send({.method = http::Method::get, .url = location}, {m_registry.scope(repository)}),
                         {204, 400, 404, 416});
  if (!response) return std::unexpected(response.error());
  if (response->status != 204) return std::optional<OpenUpload>();
  // An answer that makes no sense is no session to go on with: the blob is sent whole in a new one.
  const std::string range = response->headers.get("Range").value_or("");
  const auto held = upload_range_held(range);
  auto next = location_of(*response, location);
  if (!held || !next) {
    spdlog::info("the registry reports an upload session {}: taking it as gone",
                 next ? "with the Range \"" + printable(range) + "\" (not 0-<last byte>)" : "without a Location");
    return std::optional<OpenUpload>();
  }
  return std::optional<OpenUpload>(OpenUpload{*next, *held});
}

RegistryResult<void> Session::cancel_upload(std::string_view repository, const std::string& location) {
  auto response = expect(send({.method = http::Method::del, .url = location}, {m_registry.scope(repository)}),
                         {200, 202, 204, 400, 404});
  if (!response) return std::unexpected(response.error());
  return {};
}

RegistryResult<void> Session::upload(OpenUpload& upload, const Descriptor& blob, int fd, std::int64_t chunk_size,
                                     const Progress& progress,
                                     const std::function<void(const OpenUpload&)>& acknowledged) {
  const std::vector<std::string> scopes;  // the upload URL is already authorized for the repository's scope
  // A token about to expire is renewed before the body goes out, rather than refused after it.
  if (auto renewed = m_registry.authenticator().renew_if_expiring(m_client); !renewed) return renewed;
  const bool whole = upload.offset == 0 && (chunk_size <= 0 || blob.size <= chunk_size);
  while (!whole && upload.offset < blob.size) {
    const std::int64_t offset = upload.offset;
    const std::int64_t length = chunk_size > 0 ? std::min(chunk_size, blob.size - offset) : blob.size - offset;
    http::Request patch{.method = http::Method::patch,
                        .url = upload.location,
                        .headers = {std::string(k_octet_stream), "Content-Range: " + std::to_string(offset) + "-" +
                                                                     std::to_string(offset + length - 1)},
                        .body = http::FileRange{fd, offset, length}};
    if (progress) patch.on_progress = [&progress, offset](std::int64_t now) { return progress(offset + now); };
    auto response = expect(send(patch, scopes), {202});
    if (!response) return std::unexpected(response.error());
    auto next = location_of(*response, upload.location);
    if (!next) return std::unexpected(next.error());
    upload = {*next, offset + length};
    if (acknowledged) acknowledged(upload);
  }
  auto put_url = http::add_query(upload.location, "digest", blob.digest.str());
  if (!put_url) return std::unexpected(RegistryError::protocol(put_url.error().message));
  http::Request put{.method = http::Method::put, .url = *put_url, .headers = {std::string(k_octet_stream)}};
  if (whole) {
    put.body = http::FileRange{fd, 0, blob.size};
    put.on_progress = progress;
  }
  auto response = expect(send(put, scopes), {201});
  if (!response) return std::unexpected(response.error());
  return check_reported_digest(*response, blob.digest);
}

RegistryResult<void> Session::download_blob(std::string_view repository, const Descriptor& blob, ByteSink& sink,
                                            const Progress& progress) {
  VerifyingSink verifying(sink, blob);
  http::Request request{.url = m_registry.url("/v2/" + std::string(repository) + "/blobs/" + blob.digest.str()),
                        .sink = &verifying,
                        .redirects = http::Redirects::follow,
                        .on_progress = progress,
                        .expected_length = blob.size};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200});
  if (!response) return std::unexpected(response.error());
  if (auto problem = verifying.problem()) {
    auto error = RegistryError::protocol(*problem);
    // An answer cut short without a Content-Length to tell: another try may get all of it.
    if (verifying.ended_early()) error.origin = RegistryError::Origin::network;
    return std::unexpected(std::move(error));
  }
  if (auto s = verifying.finish(); !s) return std::unexpected(RegistryError::local(s.error()));
  return {};
}

RegistryResult<Digest> Session::put_manifest(std::string_view repository, std::string_view reference,
                                             std::string_view media_type, std::string_view bytes) {
  http::Request request{
      .method = http::Method::put,
      .url = m_registry.url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference)),
      .headers = {"Content-Type: " + std::string(media_type)},
      .body = bytes};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200, 201});
  if (!response) return std::unexpected(response.error());
  const Digest digest = digest_of(bytes);
  if (auto checked = check_reported_digest(*response, digest); !checked) return std::unexpected(checked.error());
  return digest;
}

namespace {

// A manifest response, digest-verified against what was asked for and what the registry reports.
RegistryResult<FetchedManifest> fetched_manifest(http::Response& response, std::string_view reference) {
  FetchedManifest out;
  out.bytes = std::move(response.body);
  out.media_type = media_type_of(response);
  if (out.media_type.empty() || out.media_type == "application/json" || out.media_type == "text/plain") {
    const auto json = read_json<nlohmann::json>(out.bytes);
    if (json && json->is_object() && json->contains("mediaType") && (*json)["mediaType"].is_string()) {
      out.media_type = (*json)["mediaType"].get<std::string>();
    }
  }
  auto asked = Digest::parse(reference);
  out.digest = digest_of(out.bytes, asked ? asked->algorithm() : DigestAlgorithm::sha256);
  if (asked && *asked != out.digest) {
    return std::unexpected(RegistryError::protocol("the manifest the registry sent for " + std::string(reference) +
                                                   " has the digest " + out.digest.str()));
  }
  if (auto checked = check_reported_digest(response, out.digest); !checked) return std::unexpected(checked.error());
  return out;
}

}  // namespace

std::string referrers_tag(const Digest& subject) { return std::string(subject.algorithm_name()) + "-" + subject.hex(); }

RegistryResult<FetchedManifest> Session::get_manifest(std::string_view repository, std::string_view reference) {
  http::Request request{
      .url = m_registry.url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference)),
      .headers = {manifest_accept()},
      .max_body = k_max_manifest};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200});
  if (!response) return std::unexpected(response.error());
  return fetched_manifest(*response, reference);
}

RegistryResult<std::optional<FetchedManifest>> Session::find_manifest(std::string_view repository,
                                                                      std::string_view reference) {
  http::Request request{
      .url = m_registry.url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference)),
      .headers = {manifest_accept()},
      .max_body = k_max_manifest};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200, 404});
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::optional<FetchedManifest>();
  auto fetched = fetched_manifest(*response, reference);
  if (!fetched) return std::unexpected(fetched.error());
  return std::optional<FetchedManifest>(std::move(*fetched));
}

RegistryResult<std::optional<Index>> Session::referrers(std::string_view repository, const Digest& subject) {
  const std::string url = m_registry.url("/v2/" + std::string(repository) + "/referrers/" + subject.str());
  http::Request request{
      .url = url, .headers = {"Accept: " + std::string(media_type::k_index)}, .max_body = k_max_manifest};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200, 404});
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::optional<Index>();
  auto index = parse_document<Index>(response->body, url);
  if (!index) return std::unexpected(RegistryError::protocol(index.error().message));
  return std::optional<Index>(std::move(*index));
}

RegistryResult<std::optional<ManifestInfo>> Session::head_manifest(std::string_view repository,
                                                                   std::string_view reference) {
  http::Request request{
      .method = http::Method::head,
      .url = m_registry.url("/v2/" + std::string(repository) + "/manifests/" + std::string(reference)),
      .headers = {manifest_accept()}};
  auto response = expect(send(request, {m_registry.scope(repository)}), {200, 404});
  if (!response) return std::unexpected(response.error());
  if (response->status == 404) return std::optional<ManifestInfo>();
  ManifestInfo info;
  info.media_type = media_type_of(*response);
  info.size = std::atoll(response->headers.get("Content-Length").value_or("0").c_str());
  const auto reported = response->headers.get("Docker-Content-Digest");
  auto digest = reported ? Digest::parse(*reported) : Digest::parse(reference);
  if (!digest)
    return std::unexpected(
        RegistryError::protocol("the registry reports no usable digest for " + std::string(reference)));
  info.digest = *digest;
  return std::optional<ManifestInfo>(std::move(info));
}

namespace {

// The value of `last` in a list page's URL (the name the page starts after), or empty.
std::string last_of(std::string_view url) {
  const auto query = url.find('?');
  if (query == std::string_view::npos) return {};
  std::string_view rest = url.substr(query + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    if (pair.starts_with("last=")) return std::string(pair.substr(5));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return {};
}

}  // namespace

RegistryResult<std::vector<std::string>> Session::list(std::string url, const std::string& key,
                                                       const std::vector<std::string>& scopes) {
  const std::string first = url;
  std::vector<std::string> out;
  // A registry whose Link goes round in circles, or on forever, is cut off: a page URL or a `last`
  // seen before, more than k_max_list_pages pages or more than k_max_list_names names.
  std::set<std::string> seen_urls{url};
  std::set<std::string> seen_lasts;
  for (std::size_t pages = 1;; ++pages) {
    auto response = expect(send({.url = url}, scopes), {200});
    if (!response) return std::unexpected(response.error());
    auto names = names_from_list_page(response->body, key);
    if (!names) return std::unexpected(RegistryError::protocol("the list at " + url + " is not a JSON object"));
    if (out.size() + names->size() > k_max_list_names) {
      return std::unexpected(RegistryError::protocol("the list at " + first + " holds more than " +
                                                     std::to_string(k_max_list_names) + " names; arec reads no more"));
    }
    out.insert(out.end(), std::make_move_iterator(names->begin()), std::make_move_iterator(names->end()));
    const auto link = response->headers.get("Link");
    const auto next = link ? next_link(*link, url) : std::nullopt;
    if (!next) return out;
    if (pages >= k_max_list_pages) {
      return std::unexpected(RegistryError::protocol("the list at " + first + " goes on past " +
                                                     std::to_string(k_max_list_pages) + " pages; arec reads no more"));
    }
    const std::string last = last_of(*next);
    if (!seen_urls.insert(*next).second || (!last.empty() && !seen_lasts.insert(last).second)) {
      return std::unexpected(RegistryError::protocol("the list at " + first +
                                                     " links back to a page it already sent (" + *next +
                                                     "); its paging goes round in circles"));
    }
    url = *next;
  }
}

namespace {

// A name a registry lists is used as a path of the next request and printed: one outside the grammar
// ("../../etc", a name holding escapes) is the registry's failure, said escaped, never followed.
RegistryResult<std::vector<std::string>> checked_names(RegistryResult<std::vector<std::string>> names,
                                                       bool (*valid)(std::string_view), std::string_view listed_as,
                                                       std::string_view noun, std::string_view grammar) {
  if (!names) return names;
  for (const auto& name : *names) {
    if (!valid(name)) {
      return std::unexpected(RegistryError::protocol("the registry lists " + std::string(listed_as) + "\"" +
                                                     printable(name) + "\", which is not " + std::string(noun) + " (" +
                                                     std::string(grammar) + ")"));
    }
  }
  return names;
}

}  // namespace

RegistryResult<std::vector<std::string>> Session::tags(std::string_view repository) {
  return checked_names(
      list(m_registry.url("/v2/" + std::string(repository) + "/tags/list"), "tags", {m_registry.scope(repository)}),
      is_tag, "the tag ", "a tag", k_tag_grammar);
}

RegistryResult<std::vector<std::string>> Session::catalog() {
  return checked_names(list(m_registry.url("/v2/_catalog"), "repositories", {"registry:catalog:*"}), is_repository_path,
                       "", "a repository name", k_repository_path_grammar);
}

std::optional<std::vector<std::string>> names_from_list_page(std::string_view body, std::string_view key) {
  const auto json = read_json<nlohmann::json>(body);
  if (!json || !json->is_object()) return std::nullopt;
  std::vector<std::string> names;
  const auto found = json->find(key);
  if (found != json->end() && found->is_array()) {
    for (const auto& item : *found) {
      if (item.is_string()) names.push_back(item.get<std::string>());
    }
  }
  return names;
}

std::optional<std::string> next_link(std::string_view link, std::string_view request_url) {
  // Link: <url>; rel="next"[, <url>; rel="..."]
  std::size_t pos = 0;
  while ((pos = link.find('<', pos)) != std::string_view::npos) {
    const auto close = link.find('>', pos);
    if (close == std::string_view::npos) return std::nullopt;
    const auto target = link.substr(pos + 1, close - pos - 1);
    const auto end = link.find('<', close);
    const auto params =
        link.substr(close + 1, end == std::string_view::npos ? std::string_view::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string_view::npos || params.find("rel=next") != std::string_view::npos) {
      auto url = http::resolve_url(request_url, target);
      return url ? std::optional<std::string>(*url) : std::nullopt;
    }
    pos = close;
  }
  return std::nullopt;
}

}  // namespace arec
