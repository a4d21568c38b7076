// What push, pull, verify and the catalog share: a run against one registry, its workers, and the
// referrers a registry lists. Private to registry-client/: included by its .cpp files only.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "registry-client/progress.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/retry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"

namespace arec {

// What the steps of a run share: the registry (address, authorization), the first session (whose
// connection the first worker reuses) and the options.
struct Run {
  Registry registry;
  Session session;
  const TransferOptions& options;

  Run(RegistryAddress address, Access access, const TransferOptions& o)
      : registry(std::move(address), access), session(registry), options(o) {}
  Run(const Run&) = delete;
  // The other workers' sessions, kept for the whole run so a later phase (referrers after images)
  // reuses their connections.
  std::vector<std::unique_ptr<Session>> workers;
  Run& operator=(const Run&) = delete;

  const std::string& host() const { return registry.host(); }

  // Blobs a push makes rather than reads from the store (the record artifacts), by digest: push only
  // reads the store. Filled before the blobs move, read-only after.
  std::map<Digest, std::string> made;

  // The manifests and indexes a push put (a tag of one put before is a put of the same bytes again).
  int manifests_put = 0;
  std::int64_t manifest_bytes = 0;

  // A small blob (a manifest): one the push made, else the store's.
  Result<std::string> read_blob(const Store& store, const Descriptor& blob) const {
    if (const auto it = made.find(blob.digest); it != made.end()) return it->second;
    return store.read_blob(blob);
  }
  Result<Manifest> read_manifest(const Store& store, const Descriptor& blob) const {
    if (!made.contains(blob.digest)) return store.read_manifest(blob);
    return parse_document<Manifest>(made.at(blob.digest), "manifest " + blob.digest.str());
  }
  // A blob's file to stream from: the store's, or for a blob the push made, an anonymous file holding it.
  Result<fs::Fd> open_blob(const Store& store, const Digest& digest) const {
    const auto it = made.find(digest);
    if (it == made.end()) return store.open_blob(digest);
    fs::Fd fd(::memfd_create("arec-blob", MFD_CLOEXEC));
    if (!fd) return fail_input("holding blob " + digest.str() + " to push: " + std::strerror(errno));
    for (std::size_t done = 0; done < it->second.size();) {
      const ssize_t n = ::write(fd.get(), it->second.data() + done, it->second.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail_input("holding blob " + digest.str() + " to push: " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    return fd;
  }

  // One step against the registry, retried per the policy; its error says what was being done.
  template <typename F>
  auto step(const std::string& doing, std::stop_token stop, F&& attempt)
      -> Result<typename decltype(attempt())::value_type> {
    auto result = with_retry(options.retry, doing, stop, std::forward<F>(attempt));
    if (!result) return fail(result.error().to_error(doing));
    if constexpr (std::is_void_v<typename decltype(attempt())::value_type>) {
      return {};
    } else {
      return std::move(*result);
    }
  }

  // Puts a manifest or index (retried), counted in manifests_put and manifest_bytes.
  Result<Digest> put_manifest(const std::string& doing, std::string_view repository, std::string_view reference,
                              std::string_view media_type, std::string_view bytes) {
    auto digest = step(doing, {}, [&] { return session.put_manifest(repository, reference, media_type, bytes); });
    if (digest) {
      ++manifests_put;
      manifest_bytes += static_cast<std::int64_t>(bytes.size());
    }
    return digest;
  }

  Status ping(const std::string& context) {
    return step(context + ": checking the registry (GET /v2/)", {}, [&] { return session.ping(); });
  }
};

// Runs work(session, i, stop) for every i < count on up to `jobs` workers, each with a connection of
// its own. After a failure no new item starts and transfers in flight are cancelled; the first
// failure is returned.
Status run_parallel(Run& run, std::size_t count,
                    const std::function<Status(Session&, std::size_t, std::stop_token)>& work);

Progress progress_to(ProgressBoard& board, std::size_t slot, std::stop_token stop);

// An index of more platforms than any build makes is not followed.
inline constexpr std::size_t k_max_index_platforms = 64;

// The referrers the registry lists for `subject`: through the referrers API, else the fallback tag
// (none when that tag does not exist). Entries that are not image manifests are left out.
Result<std::vector<Descriptor>> registry_referrers(Run& run, const std::string& repository, const Digest& subject,
                                                   const std::string& context);

// A small blob downloaded into memory (a record document, an image config, a bundle), verified
// against its descriptor; more than `limit` bytes is refused.
Result<std::string> fetch_text(Run& run, const std::string& repository, const Descriptor& blob, std::size_t limit,
                               const std::string& doing);

// A bundle the registry lists for an image, held in memory until it is judged (signatures.cpp).
struct HeldBundle {
  FetchedManifest fetched;  // the bundle's artifact manifest
  Manifest manifest;
  std::string bytes;  // the bundle
};

// The bundles among `listed` (the referrers of `subject`), read into memory, nothing written. A listed
// referrer that is no bundle of `subject` is passed over.
Result<std::vector<HeldBundle>> read_registry_bundles(Run& run, const std::string& repository, const Digest& subject,
                                                      const std::vector<Descriptor>& listed,
                                                      const std::string& context);
std::vector<std::string> bundle_texts(const std::vector<HeldBundle>& bundles);

// With trusted keys (options.trusted), refuses (exit 3) an image, or its record, that no bundle signed
// by a trusted key vouches for, naming it and why (judge_signatures). Without, admits everything.
Status admit_signed(const TransferOptions& options, const std::vector<HeldBundle>& bundles, const Digest& image,
                    const std::string& repository, const Record* record, const std::string& context);

// Writes the bundles' blobs and manifests into the store, once judged, for fetch_referrer to list.
Status put_held_bundles(Store& store, const std::vector<HeldBundle>& bundles);

}  // namespace arec
