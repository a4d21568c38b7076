#include "registry-client/pull.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "recorder/image.hpp"
#include "registry-client/transfer_internal.hpp"

namespace arec {

namespace {

// What a pull asks the registry for: the digest, else the tag, else latest.
std::string wanted_of(const Reference& reference) {
  if (!reference.digest.empty()) return reference.digest;
  return !reference.tag.empty() ? reference.tag : "latest";
}

// How a pull's messages name it.
std::string pulling(const std::string& repository, const std::string& wanted, const Run& run) {
  return "pulling " + repository + (wanted.starts_with("sha256:") ? "@" : ":") + wanted + " from " + run.host();
}

// A manifest or index the registry sent that does not parse is the registry's failure (exit 3), not the
// user's, and is not kept. By a tag with no Docker-Content-Digest, this is all that can be checked.
Status check_fetched_manifest(const FetchedManifest& fetched, const std::string& what) {
  if (media_type::is_index(fetched.media_type)) {
    if (auto index = parse_document<Index>(fetched.bytes, what); !index)
      return fail(Error::registry(index.error().message));
  } else if (auto manifest = parse_document<Manifest>(fetched.bytes, what); !manifest) {
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
    if (auto fetched = session.download_blob(repository, blob, *writer, progress_to(board, slot, stop)); !fetched)
      return fetched;
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
    return fail(Error::registry(context + ": the manifest declares " + std::to_string(declared) +
                                " bytes of blobs to download, more than the " + std::to_string(*room) +
                                " bytes free for the store " + store.dir().string() + "; nothing downloaded"));
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
    return fail(Error::registry(context + ": the registry lists " + referrer.digest.str() + " as a referrer of " +
                                subject.str() + ", but that is not its subject"));
  }
  for (const auto& blob : blobs_of(*referrer_manifest)) {
    if (store.has_blob(blob)) continue;
    ProgressBoard quiet(ProgressDisplay::none, "");
    if (auto s = download_blob(run, run.session, store, repository, blob, quiet.add("", blob.size), quiet, {}, context);
        !s) {
      return fail(s.error());
    }
  }
  Descriptor entry{
      referrer.media_type, referrer.digest, referrer.size, referrer.artifact_type, {}, referrer.annotations, {}};
  entry.annotations[std::string(annotation::k_subject)] = subject.str();
  return entry;
}

}  // namespace

nlohmann::json to_json(const PullOutcome& outcome) {
  nlohmann::json records = nlohmann::json::array();
  for (const auto& r : outcome.records) records.push_back(to_json(r));
  return {{"registry", outcome.registry},
          {"repository", outcome.repository},
          {"digest", outcome.image.digest.str()},
          {"mediaType", outcome.image.media_type},
          {"manifest", outcome.manifest.digest.str()},
          {"downloaded", outcome.downloaded},
          {"present", outcome.present},
          {"bytes", outcome.bytes},
          {"referrers", outcome.referrers},
          {"records", std::move(records)},
          {"records_present", outcome.records_present}};
}

Result<PullOutcome> pull_image(Store& store, const Reference& reference, const RegistryAddress& address,
                               const TransferOptions& options) {
  Run run(address, Access::pull, options);
  const std::string repository = reference.path;
  const std::string wanted = wanted_of(reference);
  const std::string context = pulling(repository, wanted, run);
  if (auto s = run.ping(context); !s) return fail(s.error());

  // With trusted keys, the image's bundles are read and judged before anything is written.
  std::vector<HeldBundle> bundles;
  if (options.trusted && !options.trusted->empty()) {
    const std::string doing = context + ": getting manifest " + wanted;
    auto top = run.step(doing, {}, [&] { return run.session.get_manifest(repository, wanted); });
    if (!top) return fail(top.error());
    if (auto s = check_fetched_manifest(*top, "the manifest the registry sent"); !s)
      return fail(std::move(s.error()).context(doing));
    auto listed = registry_referrers(run, repository, top->digest, context);
    if (!listed) return fail(listed.error());
    auto held = read_registry_bundles(run, repository, top->digest, *listed, context);
    if (!held) return fail(held.error());
    if (auto s = admit_signed(options, *held, top->digest, repository, nullptr, context); !s) return fail(s.error());
    bundles = std::move(*held);
  }

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

  if (auto s = download_blobs(run, store, repository, blobs_of(*manifest), context, outcome); !s)
    return fail(s.error());

  Descriptor listed = outcome.image;
  listed.annotations.emplace(k_pulled_annotation, "true");
  if (auto kept = store.with_writer([&](StoreWriter& writer) { return writer.keep(listed); }); !kept)
    return fail(kept.error());

  // Its referrers (an SBOM, bundles) come along, each listed in index.json as the referrer of the image.
  if (auto s = put_held_bundles(store, bundles); !s) return fail(std::move(s.error()).context(context));
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

// An image config is rarely above a few kilobytes; a larger one is not read into memory.
constexpr std::size_t k_max_config = std::size_t{4} << 20;

// One image of a pull of records (an index has one per platform): its manifest's bytes, config and the
// records the registry lists for it.
struct PulledImage {
  FetchedManifest fetched;
  Manifest manifest;
  std::string config;
  std::vector<Record> records;
  std::vector<Descriptor> sboms;    // the other referrers (SBOMs, bundles), fetched as pull_image fetches them
  std::vector<HeldBundle> bundles;  // with trusted keys: the bundles, read and judged before any write
};

// Reads and checks the record artifact `listed` of `image` in `repository`: an artifact manifest of
// arec's record type whose subject is the image, one document layer, a document that parses, names
// this repository and this image, and is byte for byte what arec writes for that record.
Result<Record> read_record_artifact(Run& run, const std::string& repository, const FetchedManifest& image,
                                    const Descriptor& listed, const std::string& context) {
  const std::string what =
      "the record artifact " + listed.digest.str() + " of " + repository + "@" + image.digest.str();
  const auto refused = [&](const std::string& why) {
    return Error::registry(context + ": " + what + ": " + why + "; nothing written");
  };
  auto fetched = run.step(context + ": getting " + what, {},
                          [&] { return run.session.get_manifest(repository, listed.digest.str()); });
  if (!fetched) return fail(fetched.error());
  auto manifest = parse_document<Manifest>(fetched->bytes, "its manifest");
  if (!manifest) return fail(refused(manifest.error().message));
  if (manifest->artifact_type != media_type::k_arec_record) {
    return fail(refused("its artifactType is \"" + printable(manifest->artifact_type) + "\", not " +
                        std::string(media_type::k_arec_record)));
  }
  if (!manifest->subject || manifest->subject->digest != image.digest) {
    return fail(refused("its subject is " +
                        (manifest->subject ? manifest->subject->digest.str() : std::string("missing")) +
                        ", not the image"));
  }
  if (manifest->layers.size() != 1 || manifest->layers.front().media_type != media_type::k_arec_record) {
    return fail(refused("expected one layer of type " + std::string(media_type::k_arec_record)));
  }
  auto document = fetch_text(run, repository, manifest->layers.front(), k_max_record_document,
                             context + ": getting the document of " + what);
  if (!document) return fail(document.error());
  auto record = parse_record_document(*document, "its document");
  if (!record) return fail(refused(record.error().message));
  if (record->repository() != repository)
    return fail(refused("it is a record of " + record->repository() + ", not of " + repository));
  const auto image_descriptor = image.descriptor();
  if (record->manifest.digest != image.digest || record->manifest.size != image_descriptor.size ||
      record->manifest.media_type != image_descriptor.media_type) {
    return fail(refused("it records " + record->manifest.digest.str() + " (" + std::to_string(record->manifest.size) +
                        " bytes, " + record->manifest.media_type + "), which is not the image it refers to"));
  }
  // What arec writes for that record, and nothing else: the same record pushed from here again costs no write.
  auto again = record_artifact(*record);
  if (!again) return fail(refused(again.error().message));
  if (again->descriptor.digest != listed.digest)
    return fail(refused("not the artifact arec makes of the record it holds"));
  // A record from the future would be the newest, and stay `latest`, until that time comes.
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  if (rfc3339_seconds(record->recorded).value_or(0) > now + k_clock_tolerance_seconds) {
    return fail(refused("it is recorded " + record->recorded + ", more than " +
                        std::to_string(k_clock_tolerance_seconds / 60) + " minutes ahead of this machine's clock (" +
                        rfc3339(now) + ")"));
  }
  return std::move(*record);
}

// Whether `history` holds `record` already: the same image, time, revision and every other field.
bool holds_record(const std::vector<Record>& history, const Record& record) {
  const auto wanted = to_json(record);
  return std::ranges::any_of(history, [&](const Record& h) { return to_json(h) == wanted; });
}

// What a pull of records read of one reference, before anything is written.
struct ReadPull {
  std::string repository;
  std::string context;
  Descriptor image;
  std::vector<PulledImage> images;
};

// A record a pull adds, with the SBOMs that come with it and the reference it came by.
struct Added {
  Record record;
  std::vector<Descriptor> sboms;
  std::size_t of;  // into the references
};

// Reads and checks what `reference` names with its records, nothing written; nothing when the
// registry lists no record for it.
Result<std::optional<ReadPull>> read_pull(Run& run, const Reference& reference, const TransferOptions& options) {
  const std::string repository = reference.path;
  const std::string wanted = wanted_of(reference);
  const std::string context = pulling(repository, wanted, run);
  // First everything is read and checked, in memory: a record refused leaves the store as it was.
  const std::string getting = context + ": getting manifest " + wanted;
  auto top = run.step(getting, {}, [&] { return run.session.get_manifest(repository, wanted); });
  if (!top) return fail(top.error());
  if (auto s = check_fetched_manifest(*top, "the manifest the registry sent"); !s)
    return fail(std::move(s.error()).context(getting));
  std::vector<PulledImage> images;
  const bool is_index = media_type::is_index(top->media_type);
  if (is_index) {
    auto index = parse_document<Index>(top->bytes, "the index");  // checked above
    if (index->manifests.size() > k_max_index_platforms) {
      return fail(Error::registry(context + ": the index lists " + std::to_string(index->manifests.size()) +
                                  " manifests, more than " + std::to_string(k_max_index_platforms)));
    }
    for (const auto& entry : index->manifests) {
      if (!media_type::is_manifest(entry.media_type)) continue;
      if (std::ranges::any_of(images, [&](const PulledImage& i) { return i.fetched.digest == entry.digest; })) continue;
      const std::string getting_child = context + ": getting manifest " + entry.digest.str();
      auto child =
          run.step(getting_child, {}, [&] { return run.session.get_manifest(repository, entry.digest.str()); });
      if (!child) return fail(child.error());
      if (!media_type::is_manifest(child->media_type)) continue;
      if (auto s = check_fetched_manifest(*child, "the manifest the registry sent"); !s)
        return fail(std::move(s.error()).context(getting_child));
      images.push_back({std::move(*child), {}, {}, {}, {}, {}});
    }
  } else {
    images.push_back({*top, {}, {}, {}, {}, {}});
  }
  bool any = false;
  for (auto& image : images) {
    image.manifest = *parse_document<Manifest>(image.fetched.bytes, "the manifest");  // checked above
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
    if (options.trusted && !options.trusted->empty()) {
      auto held = read_registry_bundles(run, repository, image.fetched.digest, *referrers, context);
      if (!held) return fail(held.error());
      for (const auto& record : image.records) {
        if (auto s = admit_signed(options, *held, image.fetched.digest, repository, &record, context); !s)
          return fail(s.error());
      }
      image.bundles = std::move(*held);
    }
    // The platform a record names is its image's, as its config says.
    auto config = fetch_text(run, repository, image.manifest.config, k_max_config,
                             context + ": getting config " + image.manifest.config.digest.str());
    if (!config) return fail(config.error());
    image.config = std::move(*config);
    auto read = parse_document<ImageConfig>(image.config, "the config");
    if (!read)
      return fail(
          Error::registry(context + ": config " + image.manifest.config.digest.str() + ": " + read.error().message));
    for (const auto& record : image.records) {
      const auto& p = record.manifest.platform;
      if (p && (p->os != read->os || p->architecture != read->architecture || p->variant != read->variant)) {
        return fail(Error::registry(context + ": the record artifact of " + record.identity() + " names the platform " +
                                    platform_text(*p) + ", but the image is " +
                                    platform_text(Platform{read->architecture, read->os, read->variant}) +
                                    "; nothing written"));
      }
    }
  }
  if (!any) return std::optional<ReadPull>();
  return std::optional<ReadPull>(ReadPull{repository, context, top->descriptor(), std::move(images)});
}

// Writes what `read` holds but the records (the images, without their layers where not wanted, and
// their SBOMs) into the store, and adds the records the store lacks to `added`, for one transaction.
Result<PullOutcome> write_pull(Run& run, Store& store, ReadPull& pulled, std::size_t of, const TransferOptions& options,
                               PullLayers layers, std::map<std::string, std::vector<Record>>& histories,
                               std::vector<Added>& added) {
  const std::string& repository = pulled.repository;
  const std::string& context = pulled.context;
  auto& images = pulled.images;
  PullOutcome outcome;
  outcome.registry = run.host();
  outcome.repository = repository;
  outcome.image = pulled.image;
  const Platform mine = options.platform.value_or(host_platform());
  bool chosen = false, chose_mine = false;
  for (auto& image : images) {
    if (image.records.empty()) {
      spdlog::warn("{}: the registry lists no record of {}@{}: not pulled", context, repository,
                   image.fetched.digest.str());
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
      if (auto s = download_blobs(run, store, repository, blobs_of(image.manifest), context, outcome); !s)
        return fail(s.error());
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
    if (auto s = put_held_bundles(store, image.bundles); !s) return fail(std::move(s.error()).context(context));
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
      // Another reference of the same pull may reach the same record.
      history->second.push_back(record);
      // The SBOMs go with the first record of the image added; add_record lists each once.
      added.push_back({std::move(record), sboms, of});
    }
    // An image whose records the store holds already may still lack an SBOM listed since.
    if (!sboms.empty()) {
      auto kept = store.referrers(image.fetched.digest);
      if (!kept) return fail(kept.error());
      for (const auto& entry : sboms) {
        if (std::ranges::find(*kept, entry.digest, &Descriptor::digest) != kept->end()) continue;
        if (std::ranges::any_of(added,
                                [&](const Added& a) { return a.record.manifest.digest == image.fetched.digest; }))
          continue;
        auto listed = store.with_writer([&](StoreWriter& writer) { return writer.keep(entry); });
        if (!listed) return fail(listed.error());
        outcome.referrers += *listed ? 1 : 0;
      }
    }
  }
  return outcome;
}

}  // namespace

Result<std::vector<std::optional<PullOutcome>>> pull_records(Store& store, const std::vector<Reference>& references,
                                                             const RegistryAddress& address,
                                                             const TransferOptions& options, PullLayers layers) {
  Run run(address, Access::pull, options);
  if (auto s = run.ping("pulling records from " + run.host()); !s) return fail(s.error());
  // First everything is read and checked, in memory: a record refused leaves the store as it was.
  std::vector<std::optional<ReadPull>> reads;
  std::set<std::string> seen;  // repository@digest: a tag and a digest may name the same image or platform
  for (const auto& reference : references) {
    auto read = read_pull(run, reference, options);
    if (!read) return fail(read.error());
    if (*read) {
      const std::string at = (*read)->repository + "@";
      if (seen.contains(at + (*read)->image.digest.str())) {
        read->reset();
      } else {
        seen.insert(at + (*read)->image.digest.str());
        for (const auto& image : (*read)->images) seen.insert(at + image.fetched.digest.str());
      }
    }
    reads.push_back(std::move(*read));
  }
  std::vector<std::optional<PullOutcome>> outcomes(references.size());
  std::vector<Added> added;
  std::map<std::string, std::vector<Record>> histories;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i]) continue;
    auto outcome = write_pull(run, store, *reads[i], i, options, layers, histories, added);
    if (!outcome) return fail(outcome.error());
    outcomes[i] = std::move(*outcome);
  }
  // The records of every reference in one transaction, ordered by the time recorded where they were
  // made (the builders' clocks), whatever order the references came in.
  std::ranges::stable_sort(added, {}, [](const Added& a) {
    return std::pair(rfc3339_seconds(a.record.recorded).value_or(0), a.record.recorded);
  });
  if (!added.empty()) {
    std::vector<std::pair<Record, std::vector<Descriptor>>> commits;
    for (const auto& a : added) commits.emplace_back(a.record, a.sboms);
    auto committed = store.with_writer([&](StoreWriter& writer) { return writer.commit_all(commits); });
    if (!committed) return fail(std::move(committed.error()).context("pulling records from " + run.host()));
    for (const auto& a : added) {
      outcomes[a.of]->records.push_back(a.record);
      outcomes[a.of]->referrers += static_cast<int>(a.sboms.size());
    }
  }
  return outcomes;
}

}  // namespace arec
