// The OCI distribution API (distribution-spec): ping, blobs (exists, mount, upload, download),
// manifests (put, get, head), tags and catalog. A Registry holds what the workers of a run share
// (address, authorization); a Session is one worker's connection. Every step returns RegistryResult,
// so callers decide about retries from is_temporary(); nothing here retries.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/oci.hpp"
#include "registry-client/auth.hpp"
#include "registry-client/http.hpp"
#include "registry-client/registry_error.hpp"

namespace arec {

struct NodeSettings;

enum class Scheme { http, https };
enum class InsecureRegistry { no, yes };
// Whether a registry that answers HTTPS in plain HTTP is then spoken to in plain HTTP.
enum class PlainHttp { refused, fallback };

// The scheme rule: HTTPS with certificate verification everywhere; a loopback host or a node marked
// insecure_registry falls back to plain HTTP when it answers the TLS handshake in plain HTTP, as docker
// and skopeo do. A certificate that fails verification never falls back.
PlainHttp plain_http_for(std::string_view host, InsecureRegistry insecure);

// How this run speaks to every registry: the command line's settings, since the libraries read no
// environment.
struct ClientSettings {
  std::string ca_file;  // a CA bundle to trust besides the system's (--ca-file, AREC_CA_FILE)
  std::chrono::seconds stall_timeout = http::k_default_stall_timeout;  // AREC_STALL_TIMEOUT
  std::int64_t min_rate = http::k_default_min_rate;                    // AREC_MIN_RATE, bytes a second
  std::vector<fs::Path> credential_files;  // where credentials are looked for, in order (credential_files())
};

// Where a registry is, as read for this run (never kept across runs).
struct RegistryAddress {
  std::string host;  // host[:port] as references write it: "127.0.0.1:5000", "[::1]:5000"
  Scheme scheme = Scheme::https;
  ClientSettings client;
  PlainHttp plain_http = PlainHttp::refused;

  // scheme://host, with Docker Hub's API host for docker.io.
  std::string base_url() const;
};

// The registry the node settings give at this moment (service "registry").
Result<RegistryAddress> registry_from_settings(const NodeSettings& settings, const ClientSettings& client);
// The registry of a reference's domain; an empty domain, or the settings' registry_name, means the node
// settings' registry. A domain that is a node's registry endpoint gets that node's insecure_registry.
Result<RegistryAddress> registry_for_domain(std::string_view domain, const NodeSettings& settings,
                                            const ClientSettings& client);

// What a run asks of repositories, which is what a Bearer token is requested for.
enum class Access { pull, push };

class Registry {
 public:
  Registry(RegistryAddress address, Access access);

  const RegistryAddress& address() const { return m_address; }
  const std::string& host() const { return m_address.host; }
  Authenticator& authenticator() { return m_auth; }
  // "repository:<repository>:pull" or ":pull,push", per the run's access.
  std::string scope(std::string_view repository) const;
  std::string url(std::string_view path) const { return m_address.base_url() + std::string(path); }

  // Decides the scheme once for the run, before the first request (Session::ping does it): HTTPS, or
  // plain HTTP when the address allows falling back and the server answers the handshake in plain HTTP.
  RegistryResult<void> settle_scheme(http::Client& client);

 private:
  RegistryAddress m_address;
  Access m_access;
  Authenticator m_auth;
  std::mutex m_settle_mutex;
  bool m_settled = false;
};

// The tag that lists a manifest's referrers on a registry without the referrers API: "sha256-<hex>"
// (distribution-spec 1.1, "Referrers Tag Schema").
std::string referrers_tag(const Digest& subject);

// The manifest media types arec reads, as an Accept header value.
std::string manifest_accept();

struct ManifestInfo {
  Digest digest;
  std::string media_type;
  std::int64_t size = 0;
};

struct FetchedManifest {
  std::string media_type;
  std::string bytes;
  Digest digest;  // verified: of the bytes, and equal to what was asked for or announced

  Descriptor descriptor() const;
};

// Where a blob upload stands after its first request.
struct UploadStart {
  bool mounted = false;  // the registry linked the blob from another repository: nothing to send
  std::string location;  // otherwise: the upload session's URL
};

// An upload session and how much of its blob the registry holds.
struct OpenUpload {
  std::string location;     // the session's URL, as the registry last gave it
  std::int64_t offset = 0;  // bytes it holds
};

// The bytes an upload session holds by its Range header ("0-<last byte>", "bytes=" allowed before it),
// or nothing when the Range makes no sense: absent, not from 0, a last byte that is not a decimal
// number, or one whose count does not fit.
std::optional<std::int64_t> upload_range_held(std::string_view range);

using Progress = std::function<bool(std::int64_t)>;  // bytes so far; false cancels

class Session {
 public:
  explicit Session(Registry& registry);

  Registry& registry() { return m_registry; }

  // GET /v2/: reachable, speaks the API, and authorization (if asked for) works. The first ping of a
  // run settles the registry's scheme.
  RegistryResult<void> ping();
  // HEAD a blob: its size when the repository has it, nothing when it does not.
  RegistryResult<std::optional<std::int64_t>> blob_size(std::string_view repository, const Digest& digest);
  // POST an upload; with `from`, asks to mount `digest` from that repository of the same registry
  // (201: mounted), which a registry may answer with an ordinary upload session instead (202).
  RegistryResult<UploadStart> start_upload(std::string_view repository, const Digest& digest,
                                           std::optional<std::string> from);
  // GET an upload session (distribution-spec: 204 with its Range): what it holds, and where to go on;
  // nothing when the registry no longer has it or will not go on with it (404, 400, 416), or answers
  // what makes no sense (a Range upload_range_held does not read, no Location).
  RegistryResult<std::optional<OpenUpload>> upload_status(std::string_view repository, const std::string& location);
  // DELETE an upload session, so the registry drops what it holds; one already gone is no failure.
  RegistryResult<void> cancel_upload(std::string_view repository, const std::string& location);
  // Sends a blob into an upload session from `upload.offset` on: a blob of at most one chunk from its
  // start in one PUT streamed from the file; else PATCH chunks of `chunk_size` bytes, each moving
  // `upload` on once the registry acknowledges it (and then `acknowledged` is called), and a closing
  // PUT. Never holds the blob in memory.
  RegistryResult<void> upload(OpenUpload& upload, const Descriptor& blob, int fd, std::int64_t chunk_size,
                              const Progress& progress, const std::function<void(const OpenUpload&)>& acknowledged);
  // GET a blob into `sink`, following redirects; its size and digest are verified as it arrives.
  RegistryResult<void> download_blob(std::string_view repository, const Descriptor& blob, ByteSink& sink,
                                     const Progress& progress);
  // PUT manifest bytes as they are, under a digest or a tag; returns the digest the registry reports.
  RegistryResult<Digest> put_manifest(std::string_view repository, std::string_view reference,
                                      std::string_view media_type, std::string_view bytes);
  // GET a manifest or index by tag or digest, digest-verified.
  RegistryResult<FetchedManifest> get_manifest(std::string_view repository, std::string_view reference);
  // GET a manifest or index that may be absent (a referrers fallback tag): nothing on 404.
  RegistryResult<std::optional<FetchedManifest>> find_manifest(std::string_view repository, std::string_view reference);
  // GET /v2/<name>/referrers/<digest> (distribution-spec 1.1): the index of the manifests whose subject
  // is `subject`, or nothing when the registry has no referrers API (404), which then needs the
  // fallback tag (referrers_tag).
  RegistryResult<std::optional<Index>> referrers(std::string_view repository, const Digest& subject);
  // HEAD a manifest: what the registry holds under the reference, or nothing.
  RegistryResult<std::optional<ManifestInfo>> head_manifest(std::string_view repository, std::string_view reference);
  RegistryResult<std::vector<std::string>> tags(std::string_view repository);
  RegistryResult<std::vector<std::string>> catalog();

 private:
  // Sends a request with the registry's authorization, answering 401 challenges for `scopes`.
  RegistryResult<http::Response> send(const http::Request& request, const std::vector<std::string>& scopes);
  RegistryResult<std::vector<std::string>> list(std::string url, const std::string& key,
                                                const std::vector<std::string>& scopes);

  Registry& m_registry;
  http::Client m_client;
};

// The names in one page of a tag list (`key` "tags") or catalog ("repositories"); nothing when the
// page is not a JSON object. Entries that are not strings are passed over.
std::optional<std::vector<std::string>> names_from_list_page(std::string_view body, std::string_view key);

// The next page of a paginated list from a Link header (`<url>; rel="next"`), resolved against the
// URL of the request; nothing on the last page.
std::optional<std::string> next_link(std::string_view link, std::string_view request_url);

}  // namespace arec
