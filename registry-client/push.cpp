#include "registry-client/push.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "oci/signature.hpp"
#include "recorder/sbom.hpp"
#include "registry-client/push_internal.hpp"
#include "store/uploads.hpp"

namespace arec {

namespace {

// The tags of each record: the store's latest record of each configuration of a module/name (by its
// history) gets `latest` (the default configuration's, or the only one's) or `latest-<config>` (the
// others', so that a Debug build never moves `latest`); the newest pushed of each module/name among those
// of the default configuration (any, where none is) gets the extra tags.
Result<std::vector<std::vector<std::string>>> tags_of(const Store& store, const std::vector<Record>& records,
                                                      const PushTags& tags) {
  std::vector<std::vector<std::string>> out(records.size());
  if (tags.latest == LatestTag::no && tags.extra.empty()) return out;
  // Each module/name's own history orders its records: the store's whole history is never read.
  std::map<std::string, std::size_t> position;              // identity -> place in its module/name's history
  std::map<std::string, std::string> latest_of_config;      // repository + " " + config -> identity of its newest
  std::map<std::string, std::vector<std::string>> configs;  // repository -> the configurations it has records of
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
  const auto latest_tag_of = [&](const Record& r) {
    return latest_tag(r.config, configs[r.repository()], tags.default_config);
  };
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
    if (default_now != default_then ? default_now : position[r.identity()] > position[records[it->second].identity()])
      it->second = i;
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
  int resumed = 0;                 // uploads that went on with a session an earlier push left
  std::int64_t resumed_bytes = 0;  // what those sessions held already
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
  const std::string doing =
      "pushing " + record.repository() + " to " + run.host() + ": checking manifest " + record.manifest.digest.str();
  auto found =
      run.step(doing, {}, [&] { return run.session.head_manifest(record.repository(), record.manifest.digest.str()); });
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
Result<std::optional<std::string>> mount_source(Run& run, Session& session, const MountSources& sources,
                                                const BlobToPush& job, const std::string& repository,
                                                const std::optional<std::string>& holder, std::stop_token stop) {
  if (holder) return holder;
  auto candidates = sources.candidates(job.blob.digest, repository, k_mount_candidates);
  if (candidates.size() <= 1) return candidates.empty() ? std::nullopt : std::optional(std::move(candidates.front()));
  for (auto& candidate : candidates) {
    const std::string doing = "pushing " + repository + " to " + run.host() + ": looking for blob " +
                              job.blob.digest.str() + " in " + candidate;
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

// An upload session's URL as its note keeps it: the path and query at the registry, without scheme
// and host; nothing for a session elsewhere (a Location on another host), which is then not noted.
std::optional<std::string> session_path(const Run& run, const std::string& location) {
  const std::string base = run.registry.url("");
  if (!location.starts_with(base + "/")) return std::nullopt;
  return location.substr(base.size());
}

struct SentBlob {
  bool mounted = false;
  std::int64_t resumed = 0;  // bytes a session an earlier push left held already
};

// Sends `job`'s blob into `repository`: mounted from `from` when the registry links it, else uploaded
// from `fd`. A blob of more than one chunk goes up noted (UploadNote): the session a killed push left
// goes on from what the registry holds (GET on it gives its Range), as does the session of an attempt
// of this push that failed; a session the registry no longer has is started again. A push that gives
// up cancels its session (DELETE), so that the registry keeps no half-sent blob; the note stays only
// when the registry could not be told.
Result<SentBlob> send_blob(Run& run, Session& session, Store& store, const BlobToPush& job,
                           const std::string& repository, const std::optional<std::string>& from, int fd,
                           std::size_t slot, ProgressBoard& board, std::stop_token stop) {
  const std::string digest = job.blob.digest.str();
  const std::string doing = "pushing " + repository + " to " + run.host() + ": uploading blob " + digest;
  const std::int64_t chunk = chunk_size_for(job.blob.size, run.options.chunk_size);
  std::optional<UploadNote> note;
  if (job.blob.size > chunk) note = UploadNote::claim(store, repository, job.blob.digest);
  std::optional<OpenUpload> open;
  bool noted = false;  // `open` is the session a note left, not asked about yet
  // A note names a session of this repository only (UploadNote::session): a GET or DELETE it leads to
  // never reaches another repository's manifests or blobs. Its offset is a hint: the registry is asked.
  if (auto left = note ? note->session() : std::nullopt) {
    open = OpenUpload{run.registry.url(left->path), left->offset};
    noted = true;
  }
  const auto keep = [&](const OpenUpload& upload) {
    if (!note) return;
    if (auto path = session_path(run, upload.location)) {
      note->save({*path, upload.offset});
    } else {
      note->clear();
    }
  };
  SentBlob out;
  bool refused = false;  // the registry refused a session that was gone on with from where it stood
  const auto attempt = [&]() -> RegistryResult<void> {
    board.set_bytes(slot, 0);
    refused = false;
    bool continued = false;
    if (open) {
      board.set_state(slot, "resuming");
      auto status = session.upload_status(repository, open->location);
      if (!status) return std::unexpected(status.error());
      if (*status && (*status)->offset <= job.blob.size) {
        if (noted && (*status)->offset > 0) {
          out.resumed = (*status)->offset;
          spdlog::info("blob {}: going on with the upload an earlier push left at {} of {} bytes", digest, out.resumed,
                       job.blob.size);
        }
        open = **status;
        continued = open->offset > 0;
        board.set_bytes(slot, open->offset);
      } else {
        if (noted)
          spdlog::info("blob {}: the registry no longer has the upload an earlier push left: sending it all", digest);
        (void)session.cancel_upload(repository, open->location);  // nothing when it is gone already
        open.reset();
        if (note) note->clear();
      }
      noted = false;
    }
    if (!open) {
      board.set_state(slot, from ? "mounting" : "starting");
      auto start = session.start_upload(repository, job.blob.digest, from);
      // A mount these credentials may not make (no pull access to the source) is an upload instead.
      if (!start && from && (start.error().status == 401 || start.error().status == 403)) {
        spdlog::debug("mounting {} into {} from {} refused ({}): uploading it", digest, repository, *from,
                      start.error().status);
        start = session.start_upload(repository, job.blob.digest, std::nullopt);
      }
      if (!start) return std::unexpected(start.error());
      if ((out.mounted = start->mounted)) return {};
      open = OpenUpload{start->location, 0};
      keep(*open);
    }
    board.set_state(slot, "uploading");
    auto sent = session.upload(*open, job.blob, fd, chunk, progress_to(board, slot, stop), keep);
    refused = !sent && continued && !sent.error().is_temporary();
    return sent;
  };
  auto sent = run.step(doing, stop, attempt);
  if (!sent && refused) {
    // What the session held may not have been this blob's start (its digest came out wrong, say): once
    // more, from the start.
    spdlog::info("blob {}: the registry refused the upload gone on with ({}): sending it all", digest,
                 sent.error().message);
    if (open) (void)session.cancel_upload(repository, open->location);
    open.reset();
    if (note) note->clear();
    out.resumed = 0;
    sent = run.step(doing, stop, attempt);
  }
  if (!sent) {
    if (open && session.cancel_upload(repository, open->location) && note) note->clear();
    return fail(sent.error());
  }
  if (note) note->clear();
  return out;
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
    auto size = run.step(context + ": checking blob " + digest, stop,
                         [&] { return session.blob_size(repository, job.blob.digest); });
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
    auto sent = send_blob(run, session, store, job, repository, *from, fd->get(), slot, board, stop);
    if (!sent) return fail(sent.error());
    spdlog::debug("{} {} in {}{}", sent->mounted ? "mounted" : "uploaded", digest, repository,
                  sent->mounted ? " from " + **from : "");
    if (sent->mounted) {
      ++outcome.mounted;
    } else {
      ++outcome.uploaded;
      outcome.bytes += job.blob.size - sent->resumed;
      if (sent->resumed > 0) {
        ++outcome.resumed;
        outcome.resumed_bytes += sent->resumed;
      }
    }
    holder = repository;
    store.note_repository(job.blob.digest, repository);
  }
  board.finish(slot, outcome.uploaded > 0 ? "uploaded" : outcome.mounted > 0 ? "mounted" : "present");
  return {};
}

// Puts each plan's manifest by digest where the registry lacks it; its tags are left for move_tags.
Status put_manifests(Run& run, const std::vector<RecordPlan>& plans, std::vector<TagMove>* moves) {
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& plan = plans[i];
    for (const auto& tag : plan.tags) moves->push_back({&plan, tag, i});
    if (plan.present) continue;
    const std::string repository = plan.record.repository();
    const std::string doing =
        "pushing " + repository + " to " + run.host() + ": putting manifest " + plan.record.manifest.digest.str();
    auto digest = run.put_manifest(doing, repository, plan.record.manifest.digest.str(), plan.media_type, plan.bytes);
    if (!digest) return fail(digest.error());
    if (*digest != plan.record.manifest.digest) {
      return fail(Error::registry(doing + ": the registry stored it as " + digest->str()));
    }
  }
  return {};
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

Result<Listed> list_referrers(Run& run, const Store& store, const Record& record,
                              const std::vector<Descriptor>& referrers) {
  const std::string repository = record.repository();
  const std::string context = "pushing the referrers of " + record.identity() + " to " + run.host();
  auto api = run.step(context + ": asking for its referrers", {},
                      [&] { return run.session.referrers(repository, record.manifest.digest); });
  if (!api) return fail(api.error());
  if (api->has_value()) return Listed{};

  const std::string tag = referrers_tag(record.manifest.digest);
  Listed added;
  std::set<Digest> counted;
  // Two pushes of the same image may rewrite the tag at once, each from what it read: after each put
  // the tag is read again, and what another push's write dropped is added again.
  for (int attempt = 1; attempt <= k_tag_attempts; ++attempt) {
    auto held = run.step(context + ": getting the referrers tag " + tag, {},
                         [&] { return run.session.find_manifest(repository, tag); });
    if (!held) return fail(held.error());
    nlohmann::json index = {
        {"schemaVersion", 2}, {"mediaType", media_type::k_index}, {"manifests", nlohmann::json::array()}};
    // The digests the tag lists, read through the model; the tag's JSON itself is what is written back,
    // so that entries and fields arec does not model survive.
    std::set<Digest> listed_digests;
    if (held->has_value()) {
      auto json = parse_json((*held)->bytes, tag);
      auto parsed = json ? index_from_json(*json, tag) : Result<Index>(fail(json.error()));
      if (!parsed || parsed->media_type != media_type::k_index) {
        return fail(Error::registry(context + ": the tag " + tag +
                                    " holds something other than an OCI image index; not overwriting it"));
      }
      for (const auto& d : parsed->manifests) listed_digests.insert(d.digest);
      index = std::move(*json);
      index["mediaType"] = media_type::k_index;
    }
    auto& listed = index["manifests"];
    bool missing = false;
    for (const auto& referrer : referrers) {
      if (!listed_digests.insert(referrer.digest).second) continue;
      auto entry = referrer_entry(run, store, referrer);
      if (!entry) return fail(std::move(entry.error()).context(context));
      listed.push_back(to_json(*entry));
      missing = true;
      if (counted.insert(referrer.digest).second)
        ++(entry->artifact_type == media_type::k_arec_record ? added.records : added.sboms);
    }
    if (!missing) return added;
    if (attempt > 1) spdlog::info("{}: another push rewrote the tag {} meanwhile; listing again", context, tag);
    auto bytes = canonical_json(index);
    if (!bytes) return fail(std::move(bytes.error()).context(context));
    auto put =
        run.put_manifest(context + ": putting the referrers tag " + tag, repository, tag, media_type::k_index, *bytes);
    if (!put) return fail(put.error());
  }
  return fail(Error::registry(context + ": other pushes kept rewriting the tag " + tag + " (" +
                              std::to_string(k_tag_attempts) + " attempts); push again"));
}

}  // namespace

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
      if (std::ranges::find(repositories, image.repository) == repositories.end())
        repositories.push_back(image.repository);
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

std::vector<std::string> MountSources::candidates(const Digest& digest, std::string_view repository,
                                                  std::size_t limit) const {
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

ReferrerKind referrer_kind(const Descriptor& referrer) {
  const std::string& type = referrer.artifact_type;
  if (type == media_type::k_arec_record) return ReferrerKind::record;
  if (type == media_type::k_spdx_json || type == "application/vnd.cyclonedx+json") return ReferrerKind::sbom;
  if (type != media_type::k_sigstore_bundle) return ReferrerKind::other;
  const std::string predicate = referrer.annotation("dev.sigstore.bundle.predicateType");
  if (predicate == predicate_type::k_sign) return ReferrerKind::signature;
  if (predicate == predicate_type::k_slsa_provenance) return ReferrerKind::provenance;
  return ReferrerKind::other;
}

nlohmann::json to_json(const PushSummary& summary) {
  nlohmann::json images = nlohmann::json::array();
  for (const auto& image : summary.images) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& k : image.kept)
      kept.push_back({{"tag", k.tag}, {"digest", k.digest.str()}, {"recorded", k.recorded}});
    images.push_back({{"repository", image.repository},
                      {"digest", image.digest.str()},
                      {"tags", image.tags},
                      {"present", image.was_present},
                      {"kept", std::move(kept)}});
  }
  return {{"registry", summary.registry},
          {"images", std::move(images)},
          {"uploaded", summary.uploaded},
          {"mounted", summary.mounted},
          {"skipped", summary.skipped},
          {"bytes", summary.bytes},
          {"resumed", {{"blobs", summary.resumed.blobs}, {"bytes", summary.resumed.bytes}}},
          {"referrers",
           {{"pushed", summary.referrers.pushed},
            {"sboms", summary.referrers.sboms},
            {"signatures", summary.referrers.signatures},
            {"provenance", summary.referrers.provenance},
            {"other", summary.referrers.other},
            {"blobs", summary.referrers.uploaded},
            {"bytes", summary.referrers.bytes},
            {"listed", summary.referrers.listed}}},
          {"records",
           {{"pushed", summary.records.pushed},
            {"blobs", summary.records.uploaded},
            {"bytes", summary.records.bytes},
            {"listed", summary.records.listed}}},
          {"manifests", {{"put", summary.manifests.put}, {"bytes", summary.manifests.bytes}}}};
}

namespace {

struct BlobCounts {
  int uploaded = 0, mounted = 0, skipped = 0;
  std::int64_t bytes = 0;
  PushSummary::Resumed resumed;
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
Status push_plans(Run& run, Store& store, const std::vector<RecordPlan>& plans, BlobCounts& counts,
                  std::vector<TagMove>& moves) {
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
    counts.resumed.blobs += o.resumed;
    counts.resumed.bytes += o.resumed_bytes;
  }
  return put_manifests(run, plans, &moves);
}

}  // namespace

Result<PushSummary> push_records(Store& store, const std::vector<Record>& records, const PushTags& tags,
                                 const RegistryAddress& address, const TransferOptions& options) {
  Run run(address, Access::push, options);
  PushSummary summary;
  summary.registry = address.host;
  if (records.empty()) return summary;
  const std::string context =
      "pushing " + (records.size() == 1 ? records.front().repository() : "records") + " to " + run.host();
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
    if (auto files = store.check_image_files(record.manifest); !files)
      return fail(std::move(files.error()).context("pushing " + record.identity()));
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
    summary.images.push_back({record.repository(), record.manifest.digest, {}, plan->present, {}});
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
    // As new as its newest platform's record, as the registry's records of it will say.
    for (const auto& p : image.platforms) {
      if (rfc3339_seconds(p.recorded) > rfc3339_seconds(carrier.recorded)) carrier.recorded = p.recorded;
    }
    const std::string doing =
        "pushing " + carrier.repository() + " to " + run.host() + ": checking index " + carrier.manifest.digest.str();
    auto found = run.step(
        doing, {}, [&] { return run.session.head_manifest(carrier.repository(), carrier.manifest.digest.str()); });
    if (!found) return fail(found.error());
    const bool present = found->has_value() && (*found)->digest == carrier.manifest.digest;
    summary.images.push_back({carrier.repository(), carrier.manifest.digest, {}, present, {}});
    plans.push_back({carrier, image.index, std::string(media_type::k_index), {}, present, std::move(index_tags)});
  }
  BlobCounts images;
  std::vector<TagMove> moves;  // plans[i] is summary.images[i]
  if (auto s = push_plans(run, store, plans, images, moves); !s) return fail(s.error());
  summary.uploaded = images.uploaded;
  summary.mounted = images.mounted;
  summary.skipped = images.skipped;
  summary.bytes = images.bytes;
  summary.resumed = images.resumed;

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
      const ReferrerKind kind = referrer_kind(referrer);
      const bool is_record = kind == ReferrerKind::record;
      if (!plan->present) {
        ++(is_record ? summary.records.pushed : summary.referrers.pushed);
        auto& r = summary.referrers;
        if (!is_record)
          ++(kind == ReferrerKind::sbom         ? r.sboms
             : kind == ReferrerKind::signature  ? r.signatures
             : kind == ReferrerKind::provenance ? r.provenance
                                                : r.other);
      }
      (is_record ? record_plans : referrer_plans).push_back(std::move(*plan));
    }
  }
  for (auto [artifact_plans, counted] :
       {std::pair{&referrer_plans, &summary.referrers}, {&record_plans, &summary.records}}) {
    BlobCounts blobs;
    std::vector<TagMove> none;  // referrers go by digest
    if (auto s = push_plans(run, store, *artifact_plans, blobs, none); !s) return fail(s.error());
    counted->uploaded = blobs.uploaded + blobs.mounted;
    counted->bytes = blobs.bytes;
  }
  for (const auto& [record, referrers] : referrers_of) {
    auto listed = list_referrers(run, store, record, referrers);
    if (!listed) return fail(listed.error());
    summary.referrers.listed += listed->sboms;
    summary.records.listed += listed->records;
  }
  // Last the tags, which others read to find what is newest: by now what they name is complete.
  if (auto s = move_tags(run, moves, summary); !s) return fail(s.error());
  summary.manifests = {run.manifests_put, run.manifest_bytes};
  return summary;
}

}  // namespace arec
