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

// How many referrers of one image a read follows, of each kind (record artifacts, bundles, the rest): a
// registry listing more gets the rest passed over, named.
inline constexpr std::size_t k_max_referrers_read = 64;

// What a read does with a listed record artifact that is not what it claims (of another image, a
// document that does not parse): without trust it refuses the image (the only check there is); under
// trust it passes it over, named, since only what a trusted key signed counts anyway.
enum class EntryProblems { refuse, pass_over };

// What the registry says of one image (a manifest read once, by digest): the records its record
// artifacts hold that agree with it, its bundles, its other referrers (SBOMs, fetched when the image
// is written), and the entries passed over, each named with why. Read into memory; nothing written.
struct ImageEvidence {
  FetchedManifest image;
  Manifest manifest;
  std::vector<Record> records;
  std::vector<HeldBundle> bundles;
  std::vector<Descriptor> others;
  std::vector<std::string> passed_over;
};

// Reads `image`'s referrers at the registry: at most k_max_referrers_read of each kind; a bundle that is
// not one, larger than k_max_bundle, absent or of another digest is passed over (warned, named), as is a
// record artifact under EntryProblems::pass_over. Only a registry that cannot be reached is an error.
// With RecordArtifacts::skip (an image pulled as an image, which is no record), record artifacts are
// neither read nor kept.
enum class RecordArtifacts { read, skip };
Result<ImageEvidence> read_evidence(Run& run, const std::string& repository, FetchedManifest image,
                                    EntryProblems problems, RecordArtifacts records, const std::string& context);

std::vector<std::string> bundle_texts(const std::vector<HeldBundle>& bundles);

// The records of `evidence` as the run's trust policy judges them: without trust every record is
// admitted (unchecked); with it, those a trusted key signed, the others refused with their verdict.
struct JudgedRecords {
  std::vector<std::pair<Record, SignatureVerdict>> admitted;
  std::vector<std::pair<Record, SignatureVerdict>> refused;
};
JudgedRecords judge_evidence(const TransferOptions& options, const ImageEvidence& evidence,
                             const std::string& repository);

// The refusal of `what` ("the record M/N@sha256:...") by its verdict: exit 4, naming it and why.
Error refused_error(const std::string& context, const std::string& what, const SignatureVerdict& verdict);

// Writes the bundles' blobs and manifests into the store, once judged, for fetch_referrer to list.
Status put_held_bundles(Store& store, const std::vector<HeldBundle>& bundles);

}  // namespace arec
