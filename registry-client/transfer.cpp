#include "registry-client/transfer.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility>

namespace arec {

namespace {

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

  // A small blob (a manifest): one the push made, else the store's.
  Result<std::string> read_blob(const Store& store, const Descriptor& blob) const {
    if (const auto it = made.find(blob.digest); it != made.end()) return it->second;
    return store.read_blob(blob);
  }
  Result<Manifest> read_manifest(const Store& store, const Descriptor& blob) const {
    if (!made.contains(blob.digest)) return store.read_manifest(blob);
    const std::string what = "manifest " + blob.digest.str();
    auto json = parse_json(made.at(blob.digest), what);
    if (!json) return fail(json.error());
    return manifest_from_json(*json, what);
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
  auto step(const std::string& doing, std::stop_token stop, F&& attempt) -> Result<typename decltype(attempt())::value_type> {
    auto result = with_retry(options.retry, doing, stop, std::forward<F>(attempt));
    if (!result) return fail(result.error().to_error(doing));
    if constexpr (std::is_void_v<typename decltype(attempt())::value_type>) {
      return {};
    } else {
      return std::move(*result);
    }
  }

  Status ping(const std::string& context) {
    return step(context + ": checking the registry (GET /v2/)", {}, [&] { return session.ping(); });
  }
};

// Runs work(session, i, stop) for every i < count on up to `jobs` workers, each with a connection of
// its own. After a failure no new item starts and transfers in flight are cancelled; the first
// failure is returned.
Status run_parallel(Run& run, std::size_t count, const std::function<Status(Session&, std::size_t, std::stop_token)>& work) {
  if (count == 0) return {};
  std::stop_source stop;
  std::atomic<std::size_t> next{0};
  std::optional<Error> failure;
  auto worker = [&](Session& session) {
    while (!stop.stop_requested()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      if (auto s = work(session, i, stop.get_token()); !s && stop.request_stop()) failure = s.error();
    }
  };
  const auto workers = static_cast<unsigned>(std::clamp<std::size_t>(run.options.jobs, 1, count));
  while (run.workers.size() + 1 < workers) run.workers.push_back(std::make_unique<Session>(run.registry));
  {
    std::vector<std::jthread> threads;
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back([&worker, s = run.workers[w - 1].get()] { worker(*s); });
    worker(run.session);
  }
  if (failure) return fail(*failure);
  return {};
}

Progress progress_to(ProgressBoard& board, std::size_t slot, std::stop_token stop) {
  return [&board, slot, stop](std::int64_t bytes) {
    board.set_bytes(slot, bytes);
    return !stop.stop_requested();
  };
}

// ---- push ------------------------------------------------------------------------------------------

struct RecordPlan {
  Record record;
  std::string bytes;       // the manifest, exactly as stored
  std::string media_type;  // its Content-Type
  std::vector<Descriptor> blobs;
  bool present = false;
  std::vector<std::string> tags;
};

// The tags of each record: the store's latest record of each configuration of a module/name (by its
// history) gets `latest` (the default configuration's, or the only one's) or `latest-<config>` (the
// others', so that a Debug build never moves `latest`); the newest pushed of each module/name among those
// of the default configuration (any, where none is) gets the extra tags.
Result<std::vector<std::vector<std::string>>> tags_of(const Store& store, const std::vector<Record>& records, const PushTags& tags) {
  std::vector<std::vector<std::string>> out(records.size());
  if (tags.latest == LatestTag::no && tags.extra.empty()) return out;
  // Each module/name's own history orders its records: the store's whole history is never read.
  std::map<std::string, std::size_t> position;                 // identity -> place in its module/name's history
  std::map<std::string, std::string> latest_of_config;         // repository + " " + config -> identity of its newest
  std::map<std::string, std::vector<std::string>> configs;     // repository -> the configurations it has records of
  for (const auto& r : records) {
    if (configs.contains(r.repository())) continue;
    auto history = store.history_of(r.module, r.name);
    if (!history) return fail(history.error());
    for (std::size_t i = 0; i < history->size(); ++i) {
      const auto& h = (*history)[i];
      position[h.identity()] = i;
      latest_of_config[h.repository() + " " + h.config] = h.identity();
    }
    configs[r.repository()] = configs_of(*history);
  }
  const auto latest_tag_of = [&](const Record& r) { return latest_tag(r.config, configs[r.repository()], tags.default_config); };
  std::map<std::string, std::size_t> newest;  // repository -> index into records
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (tags.latest == LatestTag::yes && latest_of_config[r.repository() + " " + r.config] == r.identity()) {
      out[i].push_back(latest_tag_of(r));
    }
    auto [it, added] = newest.try_emplace(r.repository(), i);
    if (added) continue;
    // A record of the default configuration is preferred to another's, then the newer.
    const bool default_now = latest_tag_of(r) == "latest";
    const bool default_then = latest_tag_of(records[it->second]) == "latest";
    if (default_now != default_then ? default_now : position[r.identity()] > position[records[it->second].identity()]) it->second = i;
  }
  for (const auto& [repository, i] : newest) {
    for (const auto& tag : tags.extra) {
      if (std::ranges::find(out[i], tag) == out[i].end()) out[i].push_back(tag);
    }
  }
  return out;
}

struct BlobOutcome {
  int uploaded = 0, mounted = 0, skipped = 0;
  std::int64_t bytes = 0;
};

Result<RecordPlan> plan_record(Run& run, const Store& store, const Record& record) {
  RecordPlan plan{record, {}, record.manifest.media_type, {}, false, {}};
  // The manifest goes up exactly as stored: its bytes, and what they say.
  auto bytes = run.read_blob(store, record.manifest);
  if (!bytes) return fail(std::move(bytes.error()).context("pushing " + record.identity()));
  auto manifest = run.read_manifest(store, record.manifest);
  if (!manifest) return fail(std::move(manifest.error()).context("pushing " + record.identity()));
  plan.bytes = std::move(*bytes);
  if (!manifest->media_type.empty()) plan.media_type = manifest->media_type;
  plan.blobs = blobs_of(*manifest);
  const std::string doing = "pushing " + record.repository() + " to " + run.host() + ": checking manifest " + record.manifest.digest.str();
  auto found = run.step(doing, {}, [&] { return run.session.head_manifest(record.repository(), record.manifest.digest.str()); });
  if (!found) return fail(found.error());
  plan.present = found->has_value() && (*found)->digest == record.manifest.digest;
  return plan;
}

// How many repositories a blob's mount is looked for in before it is uploaded: a HEAD each.
constexpr std::size_t k_mount_candidates = 3;

// Where `job`'s blob may be mounted into `repository` from: the repository of this job that has it by
// now (certain), else the sources' candidates. With one candidate the mount is simply asked for, since
// a registry that refuses it opens the upload in the same answer. With several, each is asked whether
// it holds the blob (HEAD) until one does, so that the mount asked for is one that works; a candidate
// that does not answer yes (absent, or not readable with these credentials) is passed over.
Result<std::optional<std::string>> mount_source(Run& run, Session& session, const MountSources& sources, const BlobToPush& job,
                                                const std::string& repository, const std::optional<std::string>& holder,
                                                std::stop_token stop) {
  if (holder) return holder;
  auto candidates = sources.candidates(job.blob.digest, repository, k_mount_candidates);
  if (candidates.size() <= 1) return candidates.empty() ? std::nullopt : std::optional(std::move(candidates.front()));
  for (auto& candidate : candidates) {
    const std::string doing = "pushing " + repository + " to " + run.host() + ": looking for blob " + job.blob.digest.str() + " in " + candidate;
    auto size = with_retry(run.options.retry, doing, stop, [&]() -> RegistryResult<std::optional<std::int64_t>> {
      auto found = session.blob_size(candidate, job.blob.digest);
      // A repository these credentials may not read is no source, not a failure of the push.
      if (!found && (found.error().status == 401 || found.error().status == 403)) return std::nullopt;
      return found;
    });
    if (!size) return fail(size.error().to_error(doing));
    if (size->has_value()) return std::optional(std::move(candidate));
  }
  return std::nullopt;
}

// One blob into every repository that needs it: skipped where present; the first repository that
// lacks it gets it mounted from a repository that may have it (mount_source), else uploaded; the
// others mount it from a repository that has it by then. Each repository that has it in the end is
// noted in the store, for later pushes to mount from.
Status push_blob(Run& run, Session& session, Store& store, const MountSources& sources, const BlobToPush& job,
                 std::size_t slot, ProgressBoard& board, BlobOutcome& outcome, std::stop_token stop) {
  const std::string digest = job.blob.digest.str();
  std::optional<std::string> holder;
  for (const auto& repository : job.repositories) {
    const std::string context = "pushing " + repository + " to " + run.host();
    board.set_state(slot, "checking");
    auto size = run.step(context + ": checking blob " + digest, stop, [&] { return session.blob_size(repository, job.blob.digest); });
    if (!size) return fail(size.error());
    if (size->has_value()) {
      ++outcome.skipped;
      holder = repository;
      store.note_repository(job.blob.digest, repository);
      continue;
    }
    auto from = mount_source(run, session, sources, job, repository, holder, stop);
    if (!from) return fail(from.error());
    auto fd = run.open_blob(store, job.blob.digest);
    if (!fd) return fail(std::move(fd.error()).context(context));
    bool mounted = false;
    auto sent = run.step(context + ": uploading blob " + digest, stop, [&]() -> RegistryResult<void> {
      // Each attempt is a new upload session: a failed one is never resumed.
      board.set_state(slot, *from ? "mounting" : "starting");
      board.set_bytes(slot, 0);
      auto start = session.start_upload(repository, job.blob.digest, *from);
      // A mount these credentials may not make (no pull access to the source) is an upload instead.
      if (!start && *from && (start.error().status == 401 || start.error().status == 403)) {
        spdlog::debug("mounting {} into {} from {} refused ({}): uploading it", digest, repository, **from, start.error().status);
        start = session.start_upload(repository, job.blob.digest, std::nullopt);
      }
      if (!start) return std::unexpected(start.error());
      if ((mounted = start->mounted)) return {};
      board.set_state(slot, "uploading");
      return session.upload(start->location, job.blob, fd->get(), run.options.chunk_size, progress_to(board, slot, stop));
    });
    if (!sent) return fail(sent.error());
    spdlog::debug("{} {} in {}{}", mounted ? "mounted" : "uploaded", digest, repository, mounted ? " from " + **from : "");
    if (mounted) {
      ++outcome.mounted;
    } else {
      ++outcome.uploaded;
      outcome.bytes += job.blob.size;
    }
    holder = repository;
    store.note_repository(job.blob.digest, repository);
  }
  board.finish(slot, outcome.uploaded > 0 ? "uploaded" : outcome.mounted > 0 ? "mounted" : "present");
  return {};
}

Status put_manifests(Run& run, const std::vector<RecordPlan>& plans) {
  for (const auto& plan : plans) {
    const std::string repository = plan.record.repository();
    const std::string context = "pushing " + repository + " to " + run.host();
    std::vector<std::string> references;
    if (!plan.present) references.push_back(plan.record.manifest.digest.str());
    for (const auto& tag : plan.tags) {
      // A tag that names this digest already costs no write. Where the manifest was not, no tag names it.
      if (!plan.present) {
        references.push_back(tag);
        continue;
      }
      const std::string doing = context + ": checking tag " + tag;
      auto found = run.step(doing, {}, [&] { return run.session.head_manifest(repository, tag); });
      if (!found) return fail(found.error());
      if (found->has_value() && (*found)->digest == plan.record.manifest.digest) continue;
      references.push_back(tag);
    }
    for (const auto& reference : references) {
      const std::string doing = context + ": putting manifest " + plan.record.manifest.digest.str() +
                                (reference.starts_with("sha256:") ? "" : " as tag " + reference);
      auto digest = run.step(doing, {}, [&] { return run.session.put_manifest(repository, reference, plan.media_type, plan.bytes); });
      if (!digest) return fail(digest.error());
      if (*digest != plan.record.manifest.digest) {
        return fail(Error::registry(doing + ": the registry stored it as " + digest->str()));
      }
    }
  }
  return {};
}

// The referrers the registry lists for `subject`: through the referrers API, else the fallback tag
// (none when that tag does not exist). Entries that are not image manifests are left out.
Result<std::vector<Descriptor>> registry_referrers(Run& run, const std::string& repository, const Digest& subject,
                                                   const std::string& context) {
  auto api = run.step(context + ": asking for the referrers of " + subject.str(), {},
                      [&] { return run.session.referrers(repository, subject); });
  if (!api) return fail(api.error());
  Index index;
  if (api->has_value()) {
    index = std::move(**api);
  } else {
    const std::string tag = referrers_tag(subject);
    auto held = run.step(context + ": getting the referrers tag " + tag, {}, [&] { return run.session.find_manifest(repository, tag); });
    if (!held) return fail(held.error());
    if (!held->has_value()) return std::vector<Descriptor>{};
    auto json = parse_json((*held)->bytes, tag);
    if (!json) return fail(Error::registry(context + ": " + json.error().message));
    auto parsed = index_from_json(*json, tag);
    if (!parsed) return fail(Error::registry(context + ": " + parsed.error().message));
    index = std::move(*parsed);
  }
  std::vector<Descriptor> out;
  for (auto& d : index.manifests) {
    if (d.media_type == media_type::k_manifest) out.push_back(std::move(d));
  }
  return out;
}

// The descriptor a referrers index lists for a referrer: its artifactType (or, for an image
// manifest without one, its config's media type) and its manifest's annotations (distribution-spec 1.1).
Result<Descriptor> referrer_entry(const Run& run, const Store& store, const Descriptor& referrer) {
  auto manifest = run.read_manifest(store, referrer);
  if (!manifest) return fail(manifest.error());
  Descriptor entry{referrer.media_type, referrer.digest, referrer.size, {}, {}, manifest->annotations, {}};
  entry.artifact_type = !manifest->artifact_type.empty() ? manifest->artifact_type : manifest->config.media_type;
  return entry;
}

// Makes the registry list `record`'s referrers, whose manifests it holds already. A registry with the
// referrers API lists them itself from their subject. Otherwise the fallback tag sha256-<hex> holds an
// image index of them: what it holds is read and kept (other tools add their own entries there), the
// missing entries are added, and it is written only when something was missing. Returns how many
// entries were added, of each kind.
struct Listed {
  int sboms = 0;    // entries added for referrers the store keeps (SBOMs)
  int records = 0;  // entries added for record artifacts
};

Result<Listed> list_referrers(Run& run, const Store& store, const Record& record, const std::vector<Descriptor>& referrers) {
  const std::string repository = record.repository();
  const std::string context = "pushing the referrers of " + record.identity() + " to " + run.host();
  auto api = run.step(context + ": asking for its referrers", {},
                      [&] { return run.session.referrers(repository, record.manifest.digest); });
  if (!api) return fail(api.error());
  if (api->has_value()) return Listed{};

  const std::string tag = referrers_tag(record.manifest.digest);
  auto held = run.step(context + ": getting the referrers tag " + tag, {}, [&] { return run.session.find_manifest(repository, tag); });
  if (!held) return fail(held.error());
  nlohmann::json index = {{"schemaVersion", 2}, {"mediaType", media_type::k_index}, {"manifests", nlohmann::json::array()}};
  if (held->has_value()) {
    auto json = parse_json((*held)->bytes, tag);
    bool is_index = false;
    if (json && json->is_object() && index_from_json(*json, tag).has_value()) {
      const auto media = json->find("mediaType");  // compared as JSON: value() would throw on a non-string
      is_index = media == json->end() || *media == media_type::k_index;
    }
    if (!is_index) {
      return fail(Error::registry(context + ": the tag " + tag + " holds something other than an OCI image index; not overwriting it"));
    }
    index = std::move(*json);
    index["mediaType"] = media_type::k_index;
  }
  auto& listed = index["manifests"];
  Listed added;
  for (const auto& referrer : referrers) {
    const std::string digest = referrer.digest.str();
    const bool present = std::ranges::any_of(listed, [&](const nlohmann::json& d) {
      const auto listed_digest = d.find("digest");  // compared as JSON: value() would throw on a non-string
      return listed_digest != d.end() && *listed_digest == digest;
    });
    if (present) continue;
    auto entry = referrer_entry(run, store, referrer);
    if (!entry) return fail(std::move(entry.error()).context(context));
    listed.push_back(to_json(*entry));
    ++(entry->artifact_type == media_type::k_arec_record ? added.records : added.sboms);
  }
  if (added.sboms + added.records == 0) return added;
  auto bytes = canonical_json(index);
  if (!bytes) return fail(std::move(bytes.error()).context(context));
  auto put = run.step(context + ": putting the referrers tag " + tag, {},
                      [&] { return run.session.put_manifest(repository, tag, media_type::k_index, *bytes); });
  if (!put) return fail(put.error());
  return added;
}

// ---- pull ------------------------------------------------------------------------------------------

// A manifest or index the registry sent that does not parse is the registry's failure (exit 3), not the
// user's, and is not kept. By a tag with no Docker-Content-Digest, this is all that can be checked.
Status check_fetched_manifest(const FetchedManifest& fetched, const std::string& what) {
  auto json = parse_json(fetched.bytes, what);
  if (!json) return fail(Error::registry(json.error().message));
  const bool is_index = media_type::is_index(fetched.media_type);
  if (is_index) {
    if (auto index = index_from_json(*json, what); !index) return fail(Error::registry(index.error().message));
  } else if (auto manifest = manifest_from_json(*json, what); !manifest) {
    return fail(Error::registry(manifest.error().message));
  }
  return {};
}

Result<Descriptor> store_manifest(Run& run, Store& store, const std::string& repository, const std::string& reference,
                                  const std::string& context) {
  const std::string doing = context + ": getting manifest " + reference;
  auto fetched = run.step(doing, {}, [&] { return run.session.get_manifest(repository, reference); });
  if (!fetched) return fail(fetched.error());
  if (auto s = check_fetched_manifest(*fetched, "the manifest the registry sent"); !s) {
    return fail(std::move(s.error()).context(doing));
  }
  auto stored = store.put_blob(fetched->bytes, fetched->media_type);
  if (!stored) return fail(std::move(stored.error()).context(context));
  return fetched->descriptor();
}

Status download_blob(Run& run, Session& session, Store& store, const std::string& repository, const Descriptor& blob,
                     std::size_t slot, ProgressBoard& board, std::stop_token stop, const std::string& context) {
  board.set_state(slot, "downloading");
  auto got = run.step(context + ": downloading blob " + blob.digest.str(), stop, [&]() -> RegistryResult<void> {
    // A fresh temporary each attempt; dropped unless the whole blob arrived and verified.
    auto writer = store.begin_blob(Hashing::no);
    if (!writer) return std::unexpected(RegistryError::local(writer.error()));
    if (auto fetched = session.download_blob(repository, blob, *writer, progress_to(board, slot, stop)); !fetched) return fetched;
    if (auto committed = writer->commit(blob.media_type, blob.digest); !committed) {
      return std::unexpected(RegistryError::local(committed.error()));
    }
    return {};
  });
  if (!got) return fail(got.error());
  board.finish(slot, "downloaded");
  return {};
}

// Downloads the blobs of `blobs` the store lacks (each once), in parallel, counting them in `outcome`,
// and notes the repository as holding each (a push of an image built on it mounts them from there).
Status download_blobs(Run& run, Store& store, const std::string& repository, const std::vector<Descriptor>& blobs,
                      const std::string& context, PullOutcome& outcome) {
  std::vector<Descriptor> missing;
  for (const auto& blob : blobs) {
    if (store.has_blob(blob) || std::ranges::find(missing, blob.digest, &Descriptor::digest) != missing.end()) {
      ++outcome.present;
    } else {
      missing.push_back(blob);
    }
  }
  // A manifest declaring more than the disk holds (a hostile registry's 1 TB layer) fails here, before
  // a byte is written, rather than after filling the disk.
  std::int64_t declared = 0;
  for (const auto& blob : missing) declared += std::max<std::int64_t>(blob.size, 0);
  if (const auto room = fs::free_bytes(store.dir()); room && declared > *room) {
    return fail(Error::registry(context + ": the manifest declares " + std::to_string(declared) + " bytes of blobs to download, more than the " +
                                std::to_string(*room) + " bytes free for the store " + store.dir().string() + "; nothing downloaded"));
  }
  ProgressBoard board(run.options.progress, "pulling from " + run.host());
  std::vector<std::size_t> slots;
  for (const auto& blob : missing) slots.push_back(board.add(blob.digest.str().substr(0, 19), blob.size));
  auto pulled = run_parallel(run, missing.size(), [&](Session& session, std::size_t i, std::stop_token stop) {
    return download_blob(run, session, store, repository, missing[i], slots[i], board, stop, context);
  });
  if (!pulled) return fail(pulled.error());
  outcome.downloaded += static_cast<int>(missing.size());
  for (const auto& blob : missing) outcome.bytes += blob.size;
  for (const auto& blob : blobs) store.note_repository(blob.digest, repository);
  return {};
}

// Fetches a referrer the registry lists for `subject` (an SBOM) into the store: its manifest, which must
// name `subject`, and its blobs. Returns its index.json entry, for the caller to list.
Result<Descriptor> fetch_referrer(Run& run, Store& store, const std::string& repository, const Digest& subject,
                                  const Descriptor& referrer, const std::string& context) {
  if (!store.has_blob(referrer)) {
    auto fetched = store_manifest(run, store, repository, referrer.digest.str(), context);
    if (!fetched) return fail(fetched.error());
  }
  auto referrer_manifest = store.read_manifest(referrer);
  if (!referrer_manifest) return fail(std::move(referrer_manifest.error()).context(context));
  if (!referrer_manifest->subject || referrer_manifest->subject->digest != subject) {
    return fail(Error::registry(context + ": the registry lists " + referrer.digest.str() + " as a referrer of " + subject.str() +
                                ", but that is not its subject"));
  }
  for (const auto& blob : blobs_of(*referrer_manifest)) {
    if (store.has_blob(blob)) continue;
    ProgressBoard quiet(ProgressDisplay::none, "");
    if (auto s = download_blob(run, run.session, store, repository, blob, quiet.add("", blob.size), quiet, {}, context); !s) {
      return fail(s.error());
    }
  }
  Descriptor entry{referrer.media_type, referrer.digest, referrer.size, referrer.artifact_type, {}, referrer.annotations, {}};
  entry.annotations[std::string(annotation::k_subject)] = subject.str();
  return entry;
}

// The manifest for this platform behind an image in the store, when the store holds all its blobs.
std::optional<Descriptor> complete_local_image(const Store& store, const Digest& digest) {
  auto index = store.read_index();
  if (!index) return std::nullopt;
  const auto listed = std::ranges::find(index->manifests, digest, &Descriptor::digest);
  if (listed == index->manifests.end() || !store.has_blob(*listed)) return std::nullopt;
  auto manifest = select_platform_manifest(store, *listed, digest.str());
  if (!manifest || !store.holds_image(*manifest)) return std::nullopt;
  return *manifest;
}

}  // namespace

// ---- push ------------------------------------------------------------------------------------------

BlobPlan plan_blobs(const std::vector<ImageToPush>& images) {
  BlobPlan plan;
  std::map<Digest, std::size_t> position;
  for (const auto& image : images) {
    if (image.present) {
      plan.skipped += static_cast<int>(image.blobs.size());
      continue;
    }
    for (const auto& blob : image.blobs) {
      auto [it, added] = position.emplace(blob.digest, plan.blobs.size());
      if (added) plan.blobs.push_back(BlobToPush{blob, {}});
      auto& repositories = plan.blobs[it->second].repositories;
      if (std::ranges::find(repositories, image.repository) == repositories.end()) repositories.push_back(image.repository);
    }
  }
  std::ranges::stable_sort(plan.blobs, std::greater{}, [](const BlobToPush& b) { return b.blob.size; });
  return plan;
}

MountSources MountSources::of(const Store& store, const std::vector<Digest>& blobs) {
  MountSources sources;
  for (const auto& digest : blobs) {
    for (const auto& repository : store.repositories_holding(digest)) sources.add_noted(digest, repository);
  }
  // The latest of each module/name: what a registry holds under each repository, at a cost that does
  // not grow with the store's history.
  auto records = store.records(History::latest);
  if (!records) return sources;
  for (auto r = records->rbegin(); r != records->rend(); ++r) {
    if (auto manifest = store.read_manifest(r->manifest)) sources.add(r->repository(), *manifest);
  }
  return sources;
}

void MountSources::add(const std::string& repository, const Manifest& manifest) {
  for (const auto& blob : blobs_of(manifest)) {
    auto& repositories = m_repositories[blob.digest];
    if (std::ranges::find(repositories, repository) == repositories.end()) repositories.push_back(repository);
  }
}

void MountSources::add_noted(const Digest& digest, const std::string& repository) {
  auto& repositories = m_noted[digest];
  if (std::ranges::find(repositories, repository) == repositories.end()) repositories.push_back(repository);
}

std::vector<std::string> MountSources::candidates(const Digest& digest, std::string_view repository, std::size_t limit) const {
  std::vector<std::string> out;
  for (const auto* from : {&m_noted, &m_repositories}) {
    const auto it = from->find(digest);
    if (it == from->end()) continue;
    for (const auto& r : it->second) {
      if (out.size() == limit) return out;
      if (r != repository && std::ranges::find(out, r) == out.end()) out.push_back(r);
    }
  }
  return out;
}

std::optional<std::string> MountSources::candidate(const Digest& digest, std::string_view repository) const {
  auto found = candidates(digest, repository, 1);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

nlohmann::json to_json(const PushSummary& summary) {
  nlohmann::json images = nlohmann::json::array();
  for (const auto& image : summary.images) {
    images.push_back({{"repository", image.repository},
                      {"digest", image.digest.str()},
                      {"tags", image.tags},
                      {"present", image.was_present}});
  }
  return {{"registry", summary.registry}, {"images", std::move(images)}, {"uploaded", summary.uploaded},
          {"mounted", summary.mounted},   {"skipped", summary.skipped},  {"bytes", summary.bytes},
          {"referrers",
           {{"pushed", summary.referrers.pushed},
            {"blobs", summary.referrers.uploaded},
            {"bytes", summary.referrers.bytes},
            {"listed", summary.referrers.listed}}},
          {"records",
           {{"pushed", summary.records.pushed},
            {"blobs", summary.records.uploaded},
            {"bytes", summary.records.bytes},
            {"listed", summary.records.listed}}}};
}

namespace {

struct BlobCounts {
  int uploaded = 0, mounted = 0, skipped = 0;
  std::int64_t bytes = 0;
};

// The record artifact of `record` (record_artifact), its blobs made for the run (Run::made): it goes up
// as the SBOM does. The same record always gives the same blobs: a push of a record whose artifact the
// registry holds writes nothing there.
Result<Descriptor> make_record_artifact(Run& run, const Record& record) {
  auto artifact = record_artifact(record);
  if (!artifact) return fail(artifact.error());
  run.made.emplace(artifact->layer.digest, artifact->document);
  run.made.emplace(digest_of("{}"), "{}");
  run.made.emplace(artifact->descriptor.digest, artifact->manifest);
  return artifact->descriptor;
}

// Sends the blobs plan_blobs picks from the plans, then puts the manifests and their tags.
Status push_plans(Run& run, Store& store, const std::vector<RecordPlan>& plans, BlobCounts& counts) {
  std::vector<ImageToPush> images;
  for (const auto& plan : plans) images.push_back({plan.record.repository(), plan.blobs, plan.present});
  const BlobPlan planned = plan_blobs(images);
  counts.skipped += planned.skipped;
  const auto& jobs = planned.blobs;
  ProgressBoard board(run.options.progress, "pushing to " + run.host());
  std::vector<std::size_t> slots;
  for (const auto& job : jobs) slots.push_back(board.add(job.blob.digest.str().substr(0, 19), job.blob.size));
  // Read only when some blob is missing: a push of what is there already reads no other manifest.
  std::vector<Digest> missing;
  for (const auto& job : jobs) missing.push_back(job.blob.digest);
  const MountSources sources = jobs.empty() ? MountSources() : MountSources::of(store, missing);
  std::vector<BlobOutcome> outcomes(jobs.size());
  auto pushed = run_parallel(run, jobs.size(), [&](Session& session, std::size_t i, std::stop_token stop) {
    return push_blob(run, session, store, sources, jobs[i], slots[i], board, outcomes[i], stop);
  });
  if (!pushed) return fail(pushed.error());
  for (const auto& o : outcomes) {
    counts.uploaded += o.uploaded;
    counts.mounted += o.mounted;
    counts.skipped += o.skipped;
    counts.bytes += o.bytes;
  }
  return put_manifests(run, plans);
}

}  // namespace

Result<PushSummary> push_records(Store& store, const std::vector<Record>& records, const PushTags& tags,
                                 const RegistryAddress& address, const TransferOptions& options) {
  Run run(address, Access::push, options);
  PushSummary summary;
  summary.registry = address.host;
  if (records.empty()) return summary;
  const std::string context = "pushing " + (records.size() == 1 ? records.front().repository() : "records") + " to " + run.host();
  auto record_tags = tags_of(store, records, tags);
  if (!record_tags) return fail(record_tags.error());
  // Where the latest of a module/name is an index over several platforms, that index gets the latest's
  // tags, after the newest record of each platform (the registry accepts an index only over manifests
  // it holds).
  auto of_records = store.indexes_of(records);
  if (!of_records) return fail(of_records.error());
  std::vector<Record> all = records;
  std::vector<std::pair<Store::LatestImage, std::vector<std::string>>> indexes;
  for (auto& image : *of_records) {
    // The record tagged `latest` (none with --no-latest: then it goes alone, as any record).
    const auto repository = image.platforms.front().repository();
    std::size_t r = 0;
    while (r < records.size() && (records[r].repository() != repository ||
                                  std::ranges::find((*record_tags)[r], "latest") == (*record_tags)[r].end())) {
      ++r;
    }
    if (r == records.size()) continue;
    auto index_tags = std::exchange((*record_tags)[r], {});
    for (const auto& platform : image.platforms) {
      if (std::ranges::none_of(all, [&](const Record& x) { return x.identity() == platform.identity(); })) {
        all.push_back(platform);
        record_tags->emplace_back();
      }
    }
    indexes.emplace_back(std::move(image), std::move(index_tags));
  }
  // A blob replaced by a link would go up with another file's bytes: refused before the registry is asked.
  for (const auto& record : all) {
    if (auto files = store.check_image_files(record.manifest); !files) return fail(std::move(files.error()).context("pushing " + record.identity()));
  }
  if (auto s = run.ping(context); !s) return fail(s.error());

  // Records whose manifest the registry holds already have all their blobs there.
  std::vector<RecordPlan> plans;
  std::vector<std::pair<Record, std::vector<Descriptor>>> referrers_of;
  for (std::size_t r = 0; r < all.size(); ++r) {
    const Record& record = all[r];
    auto plan = plan_record(run, store, record);
    if (!plan) return fail(plan.error());
    plan->tags = (*record_tags)[r];
    summary.images.push_back({record.repository(), record.manifest.digest, plan->tags, plan->present});
    plans.push_back(std::move(*plan));
    auto referrers = store.referrers(record.manifest.digest);
    if (!referrers) return fail(referrers.error());
    // The record itself goes with its image, so that a machine that did not build it can pull it.
    auto artifact = make_record_artifact(run, record);
    if (!artifact) return fail(std::move(artifact.error()).context("pushing " + record.identity()));
    referrers->push_back(std::move(*artifact));
    referrers_of.emplace_back(record, std::move(*referrers));
  }
  for (auto& [image, index_tags] : indexes) {
    Record carrier = image.platforms.front();
    carrier.manifest = image.descriptor;
    const std::string doing = "pushing " + carrier.repository() + " to " + run.host() + ": checking index " + carrier.manifest.digest.str();
    auto found = run.step(doing, {}, [&] { return run.session.head_manifest(carrier.repository(), carrier.manifest.digest.str()); });
    if (!found) return fail(found.error());
    const bool present = found->has_value() && (*found)->digest == carrier.manifest.digest;
    summary.images.push_back({carrier.repository(), carrier.manifest.digest, index_tags, present});
    plans.push_back({carrier, image.index, std::string(media_type::k_index), {}, present, std::move(index_tags)});
  }
  BlobCounts images;
  if (auto s = push_plans(run, store, plans, images); !s) return fail(s.error());
  summary.uploaded = images.uploaded;
  summary.mounted = images.mounted;
  summary.skipped = images.skipped;
  summary.bytes = images.bytes;

  // Then each record's referrers (its SBOM), whose subject the registry now holds: their manifests
  // by digest into the record's repository, then listed for the subject.
  // The record artifacts are counted apart from the SBOMs.
  std::vector<RecordPlan> referrer_plans, record_plans;
  for (const auto& [record, referrers] : referrers_of) {
    for (const auto& referrer : referrers) {
      Record carrier = record;
      carrier.manifest = Descriptor{referrer.media_type, referrer.digest, referrer.size, {}, {}, {}, {}};
      auto plan = plan_record(run, store, carrier);
      if (!plan) return fail(plan.error());
      const bool is_record = referrer.artifact_type == media_type::k_arec_record;
      if (!plan->present) ++(is_record ? summary.records.pushed : summary.referrers.pushed);
      (is_record ? record_plans : referrer_plans).push_back(std::move(*plan));
    }
  }
  for (auto [artifact_plans, counted] : {std::pair{&referrer_plans, &summary.referrers}, {&record_plans, &summary.records}}) {
    BlobCounts blobs;
    if (auto s = push_plans(run, store, *artifact_plans, blobs); !s) return fail(s.error());
    counted->uploaded = blobs.uploaded + blobs.mounted;
    counted->bytes = blobs.bytes;
  }
  for (const auto& [record, referrers] : referrers_of) {
    auto listed = list_referrers(run, store, record, referrers);
    if (!listed) return fail(listed.error());
    summary.referrers.listed += listed->sboms;
    summary.records.listed += listed->records;
  }
  return summary;
}

// ---- pull ------------------------------------------------------------------------------------------

nlohmann::json to_json(const PullOutcome& outcome) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& r : outcome.records) records.push_back(to_json(r));
  return {{"registry", outcome.registry},     {"repository", outcome.repository},
          {"digest", outcome.image.digest.str()}, {"mediaType", outcome.image.media_type},
          {"manifest", outcome.manifest.digest.str()}, {"downloaded", outcome.downloaded},
          {"present", outcome.present},       {"bytes", outcome.bytes},
          {"referrers", outcome.referrers}, {"records", std::move(records)},
          {"records_present", outcome.records_present}};
}


Result<PullOutcome> pull_image(Store& store, const Reference& reference, const RegistryAddress& address,
                               const TransferOptions& options) {
  Run run(address, Access::pull, options);
  const std::string repository = reference.path;
  const std::string wanted = !reference.digest.empty() ? reference.digest : !reference.tag.empty() ? reference.tag : "latest";
  const std::string context = "pulling " + repository + (wanted.starts_with("sha256:") ? "@" : ":") + wanted + " from " + run.host();
  if (auto s = run.ping(context); !s) return fail(s.error());

  PullOutcome outcome;
  outcome.registry = address.host;
  outcome.repository = repository;
  auto image = store_manifest(run, store, repository, wanted, context);
  if (!image) return fail(image.error());
  outcome.image = *image;
  auto platform = select_platform_manifest(store, outcome.image, context, options.platform);
  if (!platform) return fail(platform.error());
  outcome.manifest = *platform;
  if (outcome.manifest.digest != outcome.image.digest) {
    auto child = store_manifest(run, store, repository, outcome.manifest.digest.str(), context);
    if (!child) return fail(child.error());
    outcome.manifest.media_type = child->media_type;
  }
  auto manifest = store.read_manifest(outcome.manifest);
  if (!manifest) return fail(std::move(manifest.error()).context(context));

  if (auto s = download_blobs(run, store, repository, blobs_of(*manifest), context, outcome); !s) return fail(s.error());

  Descriptor listed = outcome.image;
  listed.annotations.emplace(k_pulled_annotation, "true");
  if (auto kept = store.with_writer([&](StoreWriter& writer) { return writer.keep(listed); }); !kept) return fail(kept.error());

  // Its referrers (an SBOM) come along, each listed in index.json as the referrer of the image.
  auto referrers = registry_referrers(run, repository, outcome.image.digest, context);
  if (!referrers) return fail(referrers.error());
  for (const auto& referrer : *referrers) {
    // A record artifact is read by pull_records; a pulled image is no record (and the store keeps none).
    if (referrer.artifact_type == media_type::k_arec_record) continue;
    auto entry = fetch_referrer(run, store, repository, outcome.image.digest, referrer, context);
    if (!entry) return fail(entry.error());
    auto kept = store.with_writer([&](StoreWriter& writer) { return writer.keep(*entry); });
    if (!kept) return fail(kept.error());
    outcome.referrers += *kept ? 1 : 0;
  }
  return outcome;
}


// ---- pull of records --------------------------------------------------------------------------------

namespace {

// A blob held in memory (a record document, an image config), never more than `limit` bytes.
class TextSink final : public ByteSink {
 public:
  explicit TextSink(std::size_t limit) : m_limit(limit) {}
  Status write(std::span<const std::byte> data) override {
    if (m_text.size() + data.size() > m_limit) return fail(Error::registry("more than " + std::to_string(m_limit) + " bytes"));
    m_text.append(reinterpret_cast<const char*>(data.data()), data.size());
    return {};
  }
  Status finish() override { return {}; }
  std::string take() { return std::move(m_text); }
  void clear() { m_text.clear(); }

 private:
  std::size_t m_limit;
  std::string m_text;
};

// An image config is rarely above a few kilobytes; a larger one is not read into memory.
constexpr std::size_t k_max_config = std::size_t{4} << 20;
// An index of more platforms than any build makes is not followed.
constexpr std::size_t k_max_platforms = 64;

// A small blob downloaded into memory, verified against its descriptor.
Result<std::string> fetch_text(Run& run, const std::string& repository, const Descriptor& blob, std::size_t limit,
                               const std::string& doing) {
  if (blob.size < 0 || static_cast<std::uint64_t>(blob.size) > limit) {
    return fail(Error::registry(doing + ": declared as " + std::to_string(blob.size) + " bytes, more than " + std::to_string(limit)));
  }
  TextSink sink(limit);
  auto got = run.step(doing, {}, [&]() -> RegistryResult<void> {
    sink.clear();
    return run.session.download_blob(repository, blob, sink, [](std::int64_t) { return true; });
  });
  if (!got) return fail(got.error());
  return sink.take();
}

// One image of a pull of records (an index has one per platform): its manifest's bytes, config and the
// records the registry lists for it.
struct PulledImage {
  FetchedManifest fetched;
  Manifest manifest;
  std::string config;
  std::vector<Record> records;
  std::vector<Descriptor> sboms;  // the other referrers, fetched as pull_image fetches them
};

// Reads and checks the record artifact `listed` of `image` in `repository`: an artifact manifest of
// arec's record type whose subject is the image, one document layer, a document that parses, names
// this repository and this image, and is byte for byte what arec writes for that record.
Result<Record> read_record_artifact(Run& run, const std::string& repository, const FetchedManifest& image, const Descriptor& listed,
                                    const std::string& context) {
  const std::string what = "the record artifact " + listed.digest.str() + " of " + repository + "@" + image.digest.str();
  const auto refused = [&](const std::string& why) { return Error::registry(context + ": " + what + ": " + why + "; nothing written"); };
  auto fetched = run.step(context + ": getting " + what, {}, [&] { return run.session.get_manifest(repository, listed.digest.str()); });
  if (!fetched) return fail(fetched.error());
  auto json = parse_json(fetched->bytes, "its manifest");
  if (!json) return fail(refused(json.error().message));
  auto manifest = manifest_from_json(*json, "its manifest");
  if (!manifest) return fail(refused(manifest.error().message));
  if (manifest->artifact_type != media_type::k_arec_record) {
    return fail(refused("its artifactType is \"" + printable(manifest->artifact_type) + "\", not " + std::string(media_type::k_arec_record)));
  }
  if (!manifest->subject || manifest->subject->digest != image.digest) {
    return fail(refused("its subject is " + (manifest->subject ? manifest->subject->digest.str() : std::string("missing")) +
                        ", not the image"));
  }
  if (manifest->layers.size() != 1 || manifest->layers.front().media_type != media_type::k_arec_record) {
    return fail(refused("expected one layer of type " + std::string(media_type::k_arec_record)));
  }
  auto document = fetch_text(run, repository, manifest->layers.front(), k_max_record_document, context + ": getting the document of " + what);
  if (!document) return fail(document.error());
  auto record = parse_record_document(*document, "its document");
  if (!record) return fail(refused(record.error().message));
  if (record->repository() != repository) return fail(refused("it is a record of " + record->repository() + ", not of " + repository));
  const auto image_descriptor = image.descriptor();
  if (record->manifest.digest != image.digest || record->manifest.size != image_descriptor.size ||
      record->manifest.media_type != image_descriptor.media_type) {
    return fail(refused("it records " + record->manifest.digest.str() + " (" + std::to_string(record->manifest.size) + " bytes, " +
                        record->manifest.media_type + "), which is not the image it refers to"));
  }
  // What arec writes for that record, and nothing else: the same record pushed from here again costs no write.
  auto again = record_artifact(*record);
  if (!again) return fail(refused(again.error().message));
  if (again->descriptor.digest != listed.digest) return fail(refused("not the artifact arec makes of the record it holds"));
  return std::move(*record);
}

// Whether `history` holds `record` already: the same image, time, revision and every other field.
bool holds_record(const std::vector<Record>& history, const Record& record) {
  const auto wanted = to_json(record);
  return std::ranges::any_of(history, [&](const Record& h) { return to_json(h) == wanted; });
}

}  // namespace

Result<std::optional<PullOutcome>> pull_records(Store& store, const Reference& reference, const RegistryAddress& address,
                                                const TransferOptions& options, PullLayers layers) {
  Run run(address, Access::pull, options);
  const std::string repository = reference.path;
  const std::string wanted = !reference.digest.empty() ? reference.digest : !reference.tag.empty() ? reference.tag : "latest";
  const std::string context = "pulling " + repository + (wanted.starts_with("sha256:") ? "@" : ":") + wanted + " from " + run.host();
  if (auto s = run.ping(context); !s) return fail(s.error());

  // First everything is read and checked, in memory: a record refused leaves the store as it was.
  const std::string getting = context + ": getting manifest " + wanted;
  auto top = run.step(getting, {}, [&] { return run.session.get_manifest(repository, wanted); });
  if (!top) return fail(top.error());
  if (auto s = check_fetched_manifest(*top, "the manifest the registry sent"); !s) return fail(std::move(s.error()).context(getting));
  std::vector<PulledImage> images;
  const bool is_index = media_type::is_index(top->media_type);
  if (is_index) {
    auto index = index_from_json(*parse_json(top->bytes, "the index"), "the index");
    if (index->manifests.size() > k_max_platforms) {
      return fail(Error::registry(context + ": the index lists " + std::to_string(index->manifests.size()) + " manifests, more than " +
                                  std::to_string(k_max_platforms)));
    }
    for (const auto& entry : index->manifests) {
      if (!media_type::is_manifest(entry.media_type)) continue;
      if (std::ranges::any_of(images, [&](const PulledImage& i) { return i.fetched.digest == entry.digest; })) continue;
      const std::string getting_child = context + ": getting manifest " + entry.digest.str();
      auto child = run.step(getting_child, {}, [&] { return run.session.get_manifest(repository, entry.digest.str()); });
      if (!child) return fail(child.error());
      if (!media_type::is_manifest(child->media_type)) continue;
      if (auto s = check_fetched_manifest(*child, "the manifest the registry sent"); !s) return fail(std::move(s.error()).context(getting_child));
      images.push_back({std::move(*child), {}, {}, {}, {}});
    }
  } else {
    images.push_back({*top, {}, {}, {}, {}});
  }
  bool any = false;
  for (auto& image : images) {
    image.manifest = *manifest_from_json(*parse_json(image.fetched.bytes, "the manifest"), "the manifest");
    auto referrers = registry_referrers(run, repository, image.fetched.digest, context);
    if (!referrers) return fail(referrers.error());
    for (const auto& listed : *referrers) {
      if (listed.artifact_type != media_type::k_arec_record) {
        image.sboms.push_back(listed);
        continue;
      }
      auto record = read_record_artifact(run, repository, image.fetched, listed, context);
      if (!record) return fail(record.error());
      image.records.push_back(std::move(*record));
    }
    if (image.records.empty()) continue;
    any = true;
    // The platform a record names is its image's, as its config says.
    auto config = fetch_text(run, repository, image.manifest.config, k_max_config, context + ": getting config " + image.manifest.config.digest.str());
    if (!config) return fail(config.error());
    image.config = std::move(*config);
    auto parsed = parse_json(image.config, "the config");
    auto read = parsed ? config_from_json(*parsed, "the config") : Result<ImageConfig>(fail(parsed.error()));
    if (!read) return fail(Error::registry(context + ": config " + image.manifest.config.digest.str() + ": " + read.error().message));
    for (const auto& record : image.records) {
      const auto& p = record.manifest.platform;
      if (p && (p->os != read->os || p->architecture != read->architecture || p->variant != read->variant)) {
        return fail(Error::registry(context + ": the record artifact of " + record.identity() + " names the platform " + platform_text(*p) +
                                    ", but the image is " + platform_text(Platform{read->architecture, read->os, read->variant}) +
                                    "; nothing written"));
      }
    }
  }
  if (!any) return std::optional<PullOutcome>();

  // Then it is written: the images (without their layers where not wanted), their SBOMs, and the
  // records the store lacks in one transaction, oldest first.
  PullOutcome outcome;
  outcome.registry = address.host;
  outcome.repository = repository;
  outcome.image = top->descriptor();
  const Platform mine = options.platform.value_or(host_platform());
  std::vector<std::pair<Record, std::vector<Descriptor>>> added;
  std::map<std::string, std::vector<Record>> histories;
  bool chosen = false, chose_mine = false;
  for (auto& image : images) {
    if (image.records.empty()) {
      spdlog::warn("{}: the registry lists no record of {}@{}: not pulled", context, repository, image.fetched.digest.str());
      continue;
    }
    // The image of this machine's platform (--platform's), else the first, as pull_image reports it.
    const auto& platform = image.records.front().manifest.platform;
    const bool is_mine = platform && platform_text(*platform) == platform_text(mine);
    if (!chosen || (is_mine && !chose_mine)) {
      outcome.manifest = image.fetched.descriptor();
      chosen = true;
      chose_mine = is_mine;
    }
    auto put = store.put_blob(image.fetched.bytes, image.fetched.media_type);
    if (!put) return fail(std::move(put.error()).context(context));
    if (layers == PullLayers::yes) {
      if (auto s = download_blobs(run, store, repository, blobs_of(image.manifest), context, outcome); !s) return fail(s.error());
    } else {
      if (store.has_blob(image.manifest.config)) {
        ++outcome.present;
      } else {
        auto config = store.put_blob(image.config, image.manifest.config.media_type);
        if (!config) return fail(std::move(config.error()).context(context));
        ++outcome.downloaded;
        outcome.bytes += image.manifest.config.size;
      }
    }
    std::vector<Descriptor> sboms;
    for (const auto& listed : image.sboms) {
      auto entry = fetch_referrer(run, store, repository, image.fetched.digest, listed, context);
      if (!entry) return fail(entry.error());
      sboms.push_back(std::move(*entry));
    }
    for (auto& record : image.records) {
      auto [history, read] = histories.try_emplace(record.repository());
      if (read) {
        auto h = store.history_of(record.module, record.name);
        if (!h) return fail(h.error());
        history->second = std::move(*h);
      }
      if (holds_record(history->second, record)) {
        ++outcome.records_present;
        continue;
      }
      // The SBOMs go with the first record of the image added; add_record lists each once.
      added.emplace_back(std::move(record), sboms);
    }
    // An image whose records the store holds already may still lack an SBOM listed since.
    if (!sboms.empty()) {
      auto kept = store.referrers(image.fetched.digest);
      if (!kept) return fail(kept.error());
      for (const auto& entry : sboms) {
        if (std::ranges::find(*kept, entry.digest, &Descriptor::digest) != kept->end()) continue;
        if (std::ranges::any_of(added, [&](const auto& a) { return a.first.manifest.digest == image.fetched.digest; })) continue;
        auto listed = store.with_writer([&](StoreWriter& writer) { return writer.keep(entry); });
        if (!listed) return fail(listed.error());
        outcome.referrers += *listed ? 1 : 0;
      }
    }
  }
  // The history stays ordered by the time recorded where the records were made.
  std::ranges::stable_sort(added, {}, [](const auto& a) { return a.first.recorded; });
  if (!added.empty()) {
    auto committed = store.with_writer([&](StoreWriter& writer) { return writer.commit_all(added); });
    if (!committed) return fail(std::move(committed.error()).context(context));
    for (const auto& [record, sboms] : added) {
      outcome.records.push_back(record);
      outcome.referrers += static_cast<int>(sboms.size());
    }
  }
  return std::optional(std::move(outcome));
}

Result<RecordTags> record_tags(const RegistryAddress& address, const TransferOptions& options) {
  auto catalog = read_catalog(address, options);
  if (!catalog) return fail(catalog.error());
  Run run(address, Access::pull, options);
  if (auto s = run.ping("reading the records of " + run.host()); !s) return fail(s.error());
  RecordTags out;
  for (const auto& entry : *catalog) {
    const auto slash = entry.repository.find('/');
    if (slash == std::string::npos || entry.repository.find('/', slash + 1) != std::string::npos) continue;
    for (const auto& tag : entry.tags) {
      if (tag == "latest" || tag.starts_with("latest-")) out.references.push_back(entry.repository + ":" + tag);
      if (!tag.starts_with("sha256-") || tag.size() != 7 + 64) continue;
      const std::string subject = "sha256:" + tag.substr(7);
      auto found = run.step("looking for " + entry.repository + "@" + subject + " at " + run.host(), {},
                            [&] { return run.session.head_manifest(entry.repository, subject); });
      if (!found) return fail(found.error());
      if (!found->has_value()) out.orphaned.push_back(entry.repository + "@" + subject);
    }
  }
  return out;
}

// ---- verify ----------------------------------------------------------------------------------------

std::string_view verify_state_name(VerifyState state) {
  switch (state) {
    case VerifyState::present: return "present";
    case VerifyState::missing: return "missing";
    case VerifyState::different: return "different";
  }
  return "present";
}

Result<std::vector<VerifyItem>> verify_records(const std::vector<Record>& records, const RegistryAddress& address,
                                               const TransferOptions& options, const Store* store) {
  Run run(address, Access::pull, options);
  std::vector<VerifyItem> items;
  if (records.empty()) return items;
  // An image index is checked whole: each platform's record, and the index itself by its digest.
  std::vector<Record> all = records;
  std::size_t of_records = all.size();  // the first ones are records, the rest indexes, which have no record artifact
  if (store) {
    auto indexes = store->indexes_of(records);
    if (!indexes) return fail(indexes.error());
    all = Store::with_platforms(records, *indexes);
    of_records = all.size();
    for (const auto& image : *indexes) {
      Record index = image.platforms.front();
      index.manifest = image.descriptor;
      all.push_back(std::move(index));
    }
  }
  if (store) {
    // The store's copy is what verify speaks for: a blob that is a link is not one arec wrote.
    for (const auto& record : all) {
      if (auto files = store->check_image_files(record.manifest); !files) return fail(std::move(files.error()).context("verifying " + record.identity()));
    }
  }
  if (auto s = run.ping("verifying records at " + run.host()); !s) return fail(s.error());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Record& record = all[i];
    const std::string doing = "verifying " + record.repository() + " at " + run.host() + ": checking manifest " +
                              record.manifest.digest.str();
    auto found = run.step(doing, {}, [&] { return run.session.head_manifest(record.repository(), record.manifest.digest.str()); });
    if (!found) return fail(found.error());
    VerifyItem item{record, VerifyState::present, {}, {}, {}};
    if (!found->has_value()) {
      item.state = VerifyState::missing;
    } else if ((*found)->digest != record.manifest.digest || ((*found)->size > 0 && (*found)->size != record.manifest.size)) {
      item.state = VerifyState::different;
      item.found = (*found)->digest.str();
    } else if (store) {
      // Each referrer the store keeps for it (its SBOM) must be listed for it at the registry.
      // And the record itself, as push makes its artifact.
      auto local = store->referrers(record.manifest.digest);
      if (!local) return fail(local.error());
      std::optional<Digest> own;
      if (i < of_records) {
        auto artifact = record_artifact(record);
        if (!artifact) return fail(std::move(artifact.error()).context("verifying " + record.identity()));
        own = artifact->descriptor.digest;
      }
      if (!local->empty() || own) {
        auto remote = registry_referrers(run, record.repository(), record.manifest.digest, "verifying " + record.identity());
        if (!remote) return fail(remote.error());
        for (const auto& d : *local) {
          if (std::ranges::find(*remote, d.digest, &Descriptor::digest) == remote->end()) item.missing_referrers.push_back(d.digest.str());
        }
        if (own && std::ranges::find(*remote, *own, &Descriptor::digest) == remote->end()) item.missing_record = own->str();
        if (!item.missing_referrers.empty() || !item.missing_record.empty()) item.state = VerifyState::missing;
      }
    }
    items.push_back(std::move(item));
  }
  return items;
}

Result<std::vector<CatalogEntry>> read_catalog(const RegistryAddress& address, const TransferOptions& options) {
  Run run(address, Access::pull, options);
  if (auto s = run.ping("reading the catalog of " + run.host()); !s) return fail(s.error());
  auto repositories = run.step("reading the catalog of " + run.host() + " (GET /v2/_catalog)", {}, [&] { return run.session.catalog(); });
  if (!repositories) return fail(repositories.error());
  std::vector<CatalogEntry> out;
  for (const auto& repository : *repositories) {
    // distribution 2.8 answers 404 NAME_UNKNOWN for a repository that holds manifests by digest only.
    auto tags = run.step("listing the tags of " + repository + " at " + run.host(), {}, [&]() -> RegistryResult<std::vector<std::string>> {
      auto listed = run.session.tags(repository);
      if (!listed && listed.error().status == 404 && listed.error().code == "NAME_UNKNOWN") return std::vector<std::string>();
      return listed;
    });
    if (!tags) return fail(tags.error());
    out.push_back({repository, std::move(*tags)});
  }
  return out;
}

// ---- bases -----------------------------------------------------------------------------------------

Result<Reference> parse_base_reference(std::string_view spec) {
  const std::string what = "base \"" + std::string(spec) + "\": expected oci:DIR[:REF], MODULE/NAME of a record, or a "
                           "registry reference [HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]";
  static constexpr std::string_view k_transports[] = {"docker-archive:", "oci-archive:", "docker-daemon:", "containers-storage:",
                                                      "dir:", "tarball:", "ostree:", "sif:"};
  for (const auto transport : k_transports) {
    if (spec.starts_with(transport)) return fail_input(what);
  }
  if (spec.starts_with("docker://")) spec.remove_prefix(9);
  auto reference = Reference::parse(spec);
  if (!reference) return fail(std::move(reference.error()).context(what));
  return reference;
}

Result<BaseImage> open_base(std::string_view spec, Store& store, const RegistryLookup& registry_for, const TransferOptions& options) {
  if (spec.starts_with("oci:")) return open_layout_base(spec);
  const std::string what = "base \"" + std::string(spec) + "\"";
  auto reference = parse_base_reference(spec);
  if (!reference) return fail(reference.error());
  // MODULE/NAME with no domain, tag or digest is a record of this store: its latest, no network.
  if (reference->domain.empty() && reference->tag.empty() && reference->digest.empty() && reference->segments() == 2) {
    const auto slash = reference->path.find('/');
    return open_record_base(store, reference->path.substr(0, slash), reference->path.substr(slash + 1), options.platform);
  }
  if (!reference->digest.empty()) {
    auto digest = Digest::parse(reference->digest);
    if (!digest) return fail(std::move(digest.error()).context(what));
    if (auto local = complete_local_image(store, *digest)) {
      spdlog::debug("{}: using the store's copy of {}", what, digest->str());
      return BaseImage{store, *local};
    }
  }
  auto address = registry_for(reference->domain);
  if (!address) return fail(std::move(address.error()).context(what));
  auto pulled = pull_image(store, *reference, *address, options);
  if (!pulled) return fail(pulled.error());
  return BaseImage{store, pulled->manifest};
}

}  // namespace arec
