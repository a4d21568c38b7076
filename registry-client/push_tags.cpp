// Push's tag decision: whether `latest` (or `latest-<config>`) moves to the record pushed, decided by
// how new the record the registry's tag names is.
#include <spdlog/spdlog.h>

#include <ctime>
#include <optional>
#include <utility>

#include "registry-client/push_internal.hpp"

namespace arec {

namespace {

// A record time to order by: its seconds, then its text (a fraction).
using Newness = std::pair<std::int64_t, std::string>;

// How new the image `held` of `repository` is by the records the registry lists for it (of an index,
// its manifests'): nothing when it lists none. Without trust, by the record artifacts' `created`
// annotations. Under trust, by the times inside the records of `config` a trusted key signed, read and
// judged as a pull would: an annotation, a record artifact or a tag anyone who may push can write, and a
// forged one must not keep the team's newer build off the tag for good.
Result<std::optional<Newness>> registry_newness(Run& run, const std::string& repository, const ManifestInfo& held,
                                                const std::string& config, const std::string& context) {
  std::vector<Digest> images{held.digest};
  if (media_type::is_index(held.media_type)) {
    auto fetched = run.step(context + ": getting index " + held.digest.str(), {},
                            [&] { return run.session.get_manifest(repository, held.digest.str()); });
    if (!fetched) return fail(fetched.error());
    auto index = parse_document<Index>(fetched->bytes, "index " + held.digest.str());
    if (!index) return fail(Error::registry(context + ": " + index.error().message));
    images.clear();
    for (const auto& entry : index->manifests) {
      if (images.size() == k_max_index_platforms) break;
      if (media_type::is_manifest(entry.media_type)) images.push_back(entry.digest);
    }
  }
  std::optional<Newness> newest;
  const auto consider = [&](Newness n) {
    if (!newest || n > *newest) newest = std::move(n);
  };
  for (const auto& image : images) {
    if (!run.options.checks_trust()) {
      auto listed = registry_referrers(run, repository, image, context);
      if (!listed) return fail(listed.error());
      for (const auto& entry : *listed) {
        if (entry.artifact_type != media_type::k_arec_record) continue;
        const std::string recorded = entry.annotation(annotation::k_created);
        if (const auto seconds = rfc3339_seconds(recorded)) consider({*seconds, recorded});
      }
      continue;
    }
    auto fetched = run.step(context + ": getting manifest " + image.str(), {},
                            [&] { return run.session.find_manifest(repository, image.str()); });
    if (!fetched) return fail(fetched.error());
    if (!*fetched || !media_type::is_manifest((*fetched)->media_type)) continue;
    auto evidence =
        read_evidence(run, repository, std::move(**fetched), EntryProblems::pass_over, RecordArtifacts::read, context);
    if (!evidence) return fail(evidence.error());
    auto judged = judge_evidence(run.options, *evidence, repository);
    for (const auto& [record, verdict] : judged.refused) {
      spdlog::info("{}: it names {}, which is {}: not counted as newer", context, record.identity(), refusal(verdict));
    }
    for (const auto& [record, verdict] : judged.admitted) {
      if (record.config == config) consider(newness(record));
    }
  }
  return newest;
}

// Moves `latest` or `latest-<config>` to the pushed record unless the registry's names a newer record
// (a push never moves it back); a record of a time beyond the clock tolerance does not count as newer.
// The registry offers no conditional write: after each put the tag is looked at again, and compared
// again where another push moved it meanwhile, a bounded number of times.
Status move_latest(Run& run, const TagMove& move, PushSummary& summary) {
  const auto& record = move.plan->record;
  const std::string repository = record.repository();
  const std::string mine = record.manifest.digest.str();
  const std::string context = "pushing " + repository + " to " + run.host() + ": tag " + move.tag;
  const Newness pushed = newness(record);
  const std::int64_t horizon = static_cast<std::int64_t>(std::time(nullptr)) + k_clock_tolerance_seconds;
  auto& image = summary.images[move.image];
  for (int attempt = 1; attempt <= k_tag_attempts; ++attempt) {
    auto held =
        run.step(context + ": checking it", {}, [&] { return run.session.head_manifest(repository, move.tag); });
    if (!held) return fail(held.error());
    if (held->has_value() && (*held)->digest.str() == mine) {
      image.tags.push_back(move.tag);
      return {};
    }
    if (held->has_value()) {
      if (attempt > 1)
        spdlog::info("{}: another push moved it to {} meanwhile; comparing again", context, (*held)->digest.str());
      auto held_newness = registry_newness(run, repository, **held, record.config, context);
      if (!held_newness) return fail(held_newness.error());
      const auto& newest = *held_newness;
      if (newest && std::get<0>(*newest) > horizon) {
        spdlog::warn("{}: it names {}, recorded {}, more than {} minutes ahead of this machine's clock: not newer",
                     context, (*held)->digest.str(), printable(std::get<1>(*newest)), k_clock_tolerance_seconds / 60);
      } else if (newest && (*newest > pushed || (attempt > 1 && *newest == pushed))) {
        // A record of the same second: this push's is newer here (the store's own history says so),
        // but one another push put meanwhile is left to it, so that two such pushes end.
        image.kept.push_back({move.tag, (*held)->digest, std::get<1>(*newest)});
        spdlog::info("{}: left at {}, recorded {}, newer than this push's {}", context, (*held)->digest.str(),
                     std::get<1>(*newest), record.recorded);
        return {};
      }
    }
    auto put =
        run.put_manifest(context + ": putting it", repository, move.tag, move.plan->media_type, move.plan->bytes);
    if (!put) return fail(put.error());
  }
  spdlog::warn("{}: other pushes kept moving it ({} attempts); left as they put it, for the newest of them to settle",
               context, k_tag_attempts);
  return {};
}

}  // namespace

Status move_tags(Run& run, const std::vector<TagMove>& moves, PushSummary& summary) {
  for (const auto& move : moves) {
    if (move.tag == "latest" || move.tag.starts_with("latest-")) {
      if (auto s = move_latest(run, move, summary); !s) return fail(s.error());
      continue;
    }
    const auto& record = move.plan->record;
    const std::string repository = record.repository();
    const std::string context = "pushing " + repository + " to " + run.host() + ": tag " + move.tag;
    summary.images[move.image].tags.push_back(move.tag);
    if (move.plan->present) {
      auto held =
          run.step(context + ": checking it", {}, [&] { return run.session.head_manifest(repository, move.tag); });
      if (!held) return fail(held.error());
      if (held->has_value() && (*held)->digest == record.manifest.digest) continue;
    }
    auto put =
        run.put_manifest(context + ": putting it", repository, move.tag, move.plan->media_type, move.plan->bytes);
    if (!put) return fail(put.error());
  }
  return {};
}

}  // namespace arec
