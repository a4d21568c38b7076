#include "registry-client/verify.hpp"

#include <algorithm>

#include "registry-client/transfer_internal.hpp"

namespace arec {

std::string_view verify_state_name(VerifyState state) {
  switch (state) {
    case VerifyState::present: return "present";
    case VerifyState::missing: return "missing";
    case VerifyState::different: return "different";
    case VerifyState::unsigned_: return "unsigned";
    case VerifyState::untrusted: return "untrusted";
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
      if (auto files = store->check_image_files(record.manifest); !files)
        return fail(std::move(files.error()).context("verifying " + record.identity()));
    }
  }
  if (auto s = run.ping("verifying records at " + run.host()); !s) return fail(s.error());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Record& record = all[i];
    const std::string doing = "verifying " + record.repository() + " at " + run.host() + ": checking manifest " +
                              record.manifest.digest.str();
    auto found = run.step(doing, {},
                          [&] { return run.session.head_manifest(record.repository(), record.manifest.digest.str()); });
    if (!found) return fail(found.error());
    VerifyItem item{record, VerifyState::present, {}, {}, {}};
    if (!found->has_value()) {
      item.state = VerifyState::missing;
    } else if ((*found)->digest != record.manifest.digest ||
               ((*found)->size > 0 && (*found)->size != record.manifest.size)) {
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
        auto remote =
            registry_referrers(run, record.repository(), record.manifest.digest, "verifying " + record.identity());
        if (!remote) return fail(remote.error());
        for (const auto& d : *local) {
          if (std::ranges::find(*remote, d.digest, &Descriptor::digest) == remote->end())
            item.missing_referrers.push_back(d.digest.str());
        }
        if (own && std::ranges::find(*remote, *own, &Descriptor::digest) == remote->end())
          item.missing_record = own->str();
        if (!item.missing_referrers.empty() || !item.missing_record.empty()) item.state = VerifyState::missing;
      }
    }
    // Under trust: what a trusting pull of this record would do, read and judged as pull reads it.
    if (item.state == VerifyState::present && i < of_records && options.checks_trust()) {
      const std::string judging = "verifying the signatures of " + record.identity();
      auto fetched = run.step(judging + ": getting manifest " + record.manifest.digest.str(), {}, [&] {
        return run.session.get_manifest(record.repository(), record.manifest.digest.str());
      });
      if (!fetched) return fail(fetched.error());
      auto evidence = read_evidence(run, record.repository(), std::move(*fetched), EntryProblems::pass_over,
                                    RecordArtifacts::read, judging);
      if (!evidence) return fail(evidence.error());
      // The registry's record artifact of this record, if one is there and agrees: then the verdict on it.
      const auto mine = to_json(record);
      SignatureVerdict verdict;
      if (std::ranges::any_of(evidence->records, [&](const Record& r) { return to_json(r) == mine; })) {
        verdict = judge_signatures(bundle_texts(evidence->bundles), record.manifest.digest, record.repository(),
                                   &record, options.policy());
      } else {
        verdict.state = SignatureState::untrusted;
        verdict.why = "the registry holds no record artifact of it that a pull would read";
      }
      if (verdict.state == SignatureState::unsigned_) item.state = VerifyState::unsigned_;
      if (verdict.state == SignatureState::untrusted) {
        item.state = VerifyState::untrusted;
        item.found = verdict.why;
      }
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace arec
