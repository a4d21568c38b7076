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

// Gets `reference` (a tag or digest) once and checks what came: everything after works from these
// bytes and their digest, never from a second read of a tag that may name something else by then.
Result<FetchedManifest> fetch_manifest(Run& run, const std::string& repository, const std::string& reference,
                                       const std::string& context) {
  const std::string doing = context + ": getting manifest " + reference;
  auto fetched = run.step(doing, {}, [&] { return run.session.get_manifest(repository, reference); });
  if (!fetched) return fail(fetched.error());
  if (auto s = check_fetched_manifest(*fetched, "the manifest the registry sent"); !s)
    return fail(std::move(s.error()).context(doing));
  return std::move(*fetched);
}

// Puts a manifest read before into the store.
Status keep_manifest(Store& store, const FetchedManifest& fetched, const std::string& context) {
  auto stored = store.put_blob(fetched.bytes, fetched.media_type);
  if (!stored) return fail(std::move(stored.error()).context(context));
  return {};
}

// The manifest of `platform` (else this machine's) an index lists.
Result<Descriptor> platform_entry(const FetchedManifest& index_bytes, const std::optional<Platform>& platform,
                                  const std::string& context) {
  auto index = parse_document<Index>(index_bytes.bytes, "the index");
  if (!index) return fail(Error::registry(context + ": " + index.error().message));
  const Platform wanted = platform.value_or(host_platform());
  for (const auto& m : index->manifests) {
    if (m.platform && media_type::is_manifest(m.media_type) && serves(*m.platform, wanted)) return m;
  }
  return fail_input(context + ": no image for " + platform_text(wanted));
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
    auto fetched = fetch_manifest(run, repository, referrer.digest.str(), context);
    if (!fetched) return fail(fetched.error());
    if (auto s = keep_manifest(store, *fetched, context); !s) return fail(s.error());
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

// The index.json entries of bundles held in memory and put into the store (put_held_bundles).
std::vector<Descriptor> held_entries(const std::vector<HeldBundle>& bundles, const Digest& subject) {
  std::vector<Descriptor> out;
  for (const auto& b : bundles) {
    Descriptor entry = b.fetched.descriptor();
    entry.artifact_type = b.manifest.artifact_type;
    entry.annotations = b.manifest.annotations;
    entry.annotations[std::string(annotation::k_subject)] = subject.str();
    out.push_back(std::move(entry));
  }
  return out;
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

  // The tag is read once; from here on everything goes by the digest it named.
  auto top = fetch_manifest(run, repository, wanted, context);
  if (!top) return fail(top.error());
  PullOutcome outcome;
  outcome.registry = address.host;
  outcome.repository = repository;
  outcome.image = top->descriptor();
  // The image used: the manifest itself, or of an index the one of this platform, read by its digest.
  FetchedManifest used = *top;
  if (media_type::is_index(top->media_type)) {
    auto entry = platform_entry(*top, options.platform, context);
    if (!entry) return fail(entry.error());
    auto child = fetch_manifest(run, repository, entry->digest.str(), context);
    if (!child) return fail(child.error());
    if (!media_type::is_manifest(child->media_type))
      return fail(Error::registry(context + ": " + entry->digest.str() + " is not an image manifest"));
    used = std::move(*child);
  }
  outcome.manifest = used.descriptor();
  auto manifest = parse_document<Manifest>(used.bytes, "the manifest " + used.digest.str());
  if (!manifest) return fail(Error::registry(context + ": " + manifest.error().message));
  // Under trust its bundles are read and judged before anything is written; otherwise its referrers
  // are read once its blobs are in (a manifest declaring more than the disk holds fails first).
  const auto read_referrers = [&] {
    return read_evidence(run, repository, used, EntryProblems::pass_over, RecordArtifacts::skip, context);
  };
  Result<ImageEvidence> evidence = ImageEvidence{};
  if (options.checks_trust()) {
    evidence = read_referrers();
    if (!evidence) return fail(evidence.error());
    const auto verdict =
        judge_signatures(bundle_texts(evidence->bundles), used.digest, repository, nullptr, options.policy());
    if (verdict.state != SignatureState::trusted)
      return fail(refused_error(context, repository + "@" + used.digest.str(), verdict));
    spdlog::debug("{}@{}: signed by key {}", repository, used.digest.str(), verdict.fingerprint.substr(0, 16));
    outcome.signed_by = verdict.fingerprint;
  }

  if (auto s = keep_manifest(store, *top, context); !s) return fail(s.error());
  if (used.digest != top->digest) {
    if (auto s = keep_manifest(store, used, context); !s) return fail(s.error());
  }
  if (auto s = download_blobs(run, store, repository, blobs_of(*manifest), context, outcome); !s)
    return fail(s.error());

  Descriptor listed = outcome.image;
  listed.annotations.emplace(k_pulled_annotation, "true");
  if (auto kept = store.with_writer([&](StoreWriter& writer) { return writer.keep(listed); }); !kept)
    return fail(kept.error());

  // Its referrers (an SBOM, bundles) come along, each listed in index.json as the referrer of the image;
  // of an index, whose platform's referrers name no image index.json lists, none.
  if (used.digest != top->digest) return outcome;
  if (!options.checks_trust()) {
    evidence = read_referrers();
    if (!evidence) return fail(evidence.error());
  }
  if (auto s = put_held_bundles(store, evidence->bundles); !s) return fail(std::move(s.error()).context(context));
  std::vector<Descriptor> entries = held_entries(evidence->bundles, used.digest);
  for (const auto& referrer : evidence->others) {
    auto entry = fetch_referrer(run, store, repository, used.digest, referrer, context);
    if (!entry) return fail(entry.error());
    entries.push_back(std::move(*entry));
  }
  for (const auto& entry : entries) {
    auto kept = store.with_writer([&](StoreWriter& writer) { return writer.keep(entry); });
    if (!kept) return fail(kept.error());
    outcome.referrers += *kept ? 1 : 0;
  }
  return outcome;
}

// ---- pull of records --------------------------------------------------------------------------------

namespace {

// An image config is rarely above a few kilobytes; a larger one is not read into memory.
constexpr std::size_t k_max_config = std::size_t{4} << 20;

// Under trust, how many images a newer record than a `latest` tag names is looked for in, read whole.
constexpr std::size_t k_max_newer_read = 16;

// One image of a pull of records (an index has one per platform): its manifest's bytes, config, the
// records the registry lists for it that are admitted (every one without trust; with it, those a
// trusted key signed), its bundles and its other referrers.
struct PulledImage {
  FetchedManifest fetched;
  Manifest manifest;
  std::string config;
  std::vector<Record> records;
  std::vector<Descriptor> sboms;  // the other referrers, fetched when the image is written
  std::vector<HeldBundle> bundles;
  int held_back = 0;  // records not added: the store's latest is newer
};

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
  bool by_digest = false;  // the reference named a digest: asked for, older than the store's latest or not
};

// A record a pull adds, with the SBOMs that come with it and the reference it came by.
struct Added {
  Record record;
  std::vector<Descriptor> sboms;
  std::size_t of;  // into the references
};

bool is_latest_tag(const Reference& reference) {
  return reference.digest.empty() &&
         (reference.tag.empty() || reference.tag == "latest" || reference.tag.starts_with("latest-"));
}

// Reads and judges one image: its referrers (read_evidence), the records admitted, and for those its
// config, whose platform each record must name. The records refused by the trust policy go to `refused`.
Result<PulledImage> read_image(Run& run, const std::string& repository, FetchedManifest fetched,
                               const TransferOptions& options, const std::string& context,
                               std::vector<std::pair<Record, SignatureVerdict>>& refused) {
  const auto problems = options.checks_trust() ? EntryProblems::pass_over : EntryProblems::refuse;
  auto evidence = read_evidence(run, repository, std::move(fetched), problems, RecordArtifacts::read, context);
  if (!evidence) return fail(evidence.error());
  auto judged = judge_evidence(options, *evidence, repository);
  PulledImage image{std::move(evidence->image),  std::move(evidence->manifest), {}, {},
                    std::move(evidence->others), std::move(evidence->bundles),  0};
  for (auto& r : judged.refused) refused.push_back(std::move(r));
  for (auto& [record, verdict] : judged.admitted) image.records.push_back(std::move(record));
  if (image.records.empty()) return image;
  // The platform a record names is its image's, as its config says.
  auto config = fetch_text(run, repository, image.manifest.config, k_max_config,
                           context + ": getting config " + image.manifest.config.digest.str());
  if (!config) return fail(config.error());
  image.config = std::move(*config);
  auto read = parse_document<ImageConfig>(image.config, "the config");
  if (!read)
    return fail(
        Error::registry(context + ": config " + image.manifest.config.digest.str() + ": " + read.error().message));
  std::vector<Record> agreeing;
  for (auto& record : image.records) {
    const auto& p = record.manifest.platform;
    if (!p || (p->os == read->os && p->architecture == read->architecture && p->variant == read->variant)) {
      agreeing.push_back(std::move(record));
      continue;
    }
    const std::string why = "the record artifact of " + record.identity() + " names the platform " + platform_text(*p) +
                            ", but the image is " +
                            platform_text(Platform{read->architecture, read->os, read->variant});
    if (problems == EntryProblems::refuse) return fail(Error::registry(context + ": " + why + "; nothing written"));
    spdlog::warn("{}: passed over {}", context, why);
  }
  image.records = std::move(agreeing);
  return image;
}

// Reads and checks what `reference` names with its records, nothing written; nothing when the
// registry lists no record for it. Under trust, a reference none of whose records a trusted key signed
// is refused (exit 4); records refused beside admitted ones are passed over, named.
Result<std::optional<ReadPull>> read_pull(Run& run, const Reference& reference, const TransferOptions& options) {
  const std::string repository = reference.path;
  const std::string wanted = wanted_of(reference);
  const std::string context = pulling(repository, wanted, run);
  // First everything is read and checked, in memory: a record refused leaves the store as it was.
  auto top = fetch_manifest(run, repository, wanted, context);
  if (!top) return fail(top.error());
  std::vector<FetchedManifest> manifests;
  if (media_type::is_index(top->media_type)) {
    auto index = parse_document<Index>(top->bytes, "the index");  // checked by fetch_manifest
    if (index->manifests.size() > k_max_index_platforms) {
      return fail(Error::registry(context + ": the index lists " + std::to_string(index->manifests.size()) +
                                  " manifests, more than " + std::to_string(k_max_index_platforms)));
    }
    for (const auto& entry : index->manifests) {
      if (!media_type::is_manifest(entry.media_type)) continue;
      if (std::ranges::any_of(manifests, [&](const FetchedManifest& m) { return m.digest == entry.digest; })) continue;
      auto child = fetch_manifest(run, repository, entry.digest.str(), context);
      if (!child) return fail(child.error());
      if (media_type::is_manifest(child->media_type)) manifests.push_back(std::move(*child));
    }
  } else {
    manifests.push_back(*top);
  }
  std::vector<std::pair<Record, SignatureVerdict>> refused;
  std::vector<PulledImage> images;
  bool any = false;
  for (auto& manifest : manifests) {
    auto image = read_image(run, repository, std::move(manifest), options, context, refused);
    if (!image) return fail(image.error());
    any = any || !image->records.empty();
    images.push_back(std::move(*image));
  }
  if (!any) {
    if (refused.empty()) return std::optional<ReadPull>();
    return fail(refused_error(context, "the record " + refused.front().first.identity(), refused.front().second));
  }
  for (const auto& [record, verdict] : refused)
    spdlog::warn("{}: passed over the record {}: {}", context, record.identity(), refusal(verdict));
  return std::optional<ReadPull>(
      ReadPull{repository, context, top->descriptor(), std::move(images), !reference.digest.empty()});
}

// Under trust, a `latest` tag is only a hint: anyone who may push can point it at an older build. The
// newest record the registry lists of the tagged record's configuration that a trusted key signed, when
// it is newer than the tagged one: the images of the repository's fallback tags whose record artifacts
// claim a newer time (an order to look in, not believed), read and judged newest first, a few at most.
Result<std::optional<ReadPull>> newer_listed(Run& run, const ReadPull& tagged, const TransferOptions& options) {
  if (tagged.images.size() != 1 || tagged.images.front().records.empty()) return std::optional<ReadPull>();
  const auto& image = tagged.images.front();
  const Record named = *std::ranges::max_element(image.records, {}, newness);
  const std::string& repository = tagged.repository;
  const std::string& context = tagged.context;
  auto tags =
      run.step(context + ": listing the tags of " + repository, {}, [&] { return run.session.tags(repository); });
  if (!tags) return fail(tags.error());
  std::vector<std::pair<std::pair<std::int64_t, std::string>, Digest>> claimed;
  for (const auto& tag : *tags) {
    if (!tag.starts_with("sha256-") || tag.size() != 7 + 64) continue;
    auto subject = Digest::parse("sha256:" + tag.substr(7));
    if (!subject || *subject == image.fetched.digest) continue;
    auto listed = registry_referrers(run, repository, *subject, context);
    if (!listed) return fail(listed.error());
    std::optional<std::pair<std::int64_t, std::string>> newest;
    for (const auto& entry : *listed) {
      if (entry.artifact_type != media_type::k_arec_record) continue;
      const std::string created = entry.annotation(annotation::k_created);
      if (auto seconds = rfc3339_seconds(created))
        newest = std::max(newest.value_or(std::pair{*seconds, created}), std::pair{*seconds, created});
    }
    if (newest && *newest > newness(named)) claimed.emplace_back(*newest, *subject);
  }
  std::ranges::sort(claimed, std::greater{});
  for (std::size_t i = 0; i < std::min(claimed.size(), k_max_newer_read); ++i) {
    const Digest& digest = claimed[i].second;
    auto fetched = run.step(context + ": getting manifest " + digest.str(), {},
                            [&] { return run.session.find_manifest(repository, digest.str()); });
    if (!fetched) return fail(fetched.error());
    if (!*fetched || !media_type::is_manifest((*fetched)->media_type)) continue;
    std::vector<std::pair<Record, SignatureVerdict>> refused;
    auto candidate = read_image(run, repository, std::move(**fetched), options, context, refused);
    if (!candidate) return fail(candidate.error());
    std::erase_if(candidate->records, [&](const Record& r) { return r.config != named.config; });
    if (candidate->records.empty()) continue;
    const Record& found = *std::ranges::max_element(candidate->records, {}, newness);
    if (newness(found) <= newness(named)) continue;
    spdlog::warn(
        "{}: the tag names {}, recorded {}; the registry lists {}, recorded {}, signed by a trusted key: "
        "pulling that (a tag anyone who may push can move; the signed time decides)",
        context, named.identity(), named.recorded, found.identity(), found.recorded);
    const Descriptor descriptor = candidate->fetched.descriptor();
    std::vector<PulledImage> images;
    images.push_back(std::move(*candidate));
    return std::optional<ReadPull>(ReadPull{repository, context, descriptor, std::move(images), false});
  }
  return std::optional<ReadPull>();
}

// Writes what `read` holds but the records (the images, without their layers where not wanted, and
// their SBOMs and bundles) into the store, and adds the records the store lacks to `added`, for one
// transaction.
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
      if (image.held_back == 0)
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
    if (auto s = keep_manifest(store, image.fetched, context); !s) return fail(s.error());
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
    std::vector<Descriptor> sboms = held_entries(image.bundles, image.fetched.digest);
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

// Takes out of `reads` the records that would make the store's latest of their module/name and
// configuration an older one (oci/trust's rollbacks), naming each in `kept`; a reference that named a
// digest asked for its record, and keeps it.
Status hold_back_older(const Store& store, std::vector<std::optional<ReadPull>>& reads,
                       std::vector<std::string>& kept) {
  std::vector<Record> incoming;
  std::vector<PulledImage*> where;
  for (auto& read : reads) {
    if (!read || read->by_digest) continue;
    for (auto& image : read->images) {
      for (const auto& record : image.records) {
        incoming.push_back(record);
        where.push_back(&image);
      }
    }
  }
  const HeldLatest held = [&](const Record& r) { return store.latest_of_config(r.module, r.name, r.config); };
  auto back = rollbacks(incoming, held);
  if (!back) return fail(back.error());
  std::set<std::string> dropped;  // the records held back, as their JSON
  for (const std::size_t i : *back) {
    const Record& record = incoming[i];
    auto latest = held(record);
    if (!latest) return fail(latest.error());
    kept.push_back(record.identity() + ", recorded " + record.recorded + ", is older than the store's latest " +
                   (*latest)->identity() + ", recorded " + (*latest)->recorded +
                   ": not added (pull it by digest, or with --allow-older, to take it)");
    dropped.insert(to_json(record).dump());
    ++where[i]->held_back;
  }
  for (auto& read : reads) {
    if (!read) continue;
    for (auto& image : read->images)
      std::erase_if(image.records, [&](const Record& r) { return dropped.contains(to_json(r).dump()); });
  }
  return {};
}

}  // namespace

Result<PulledRecords> pull_records(Store& store, const std::vector<Reference>& references,
                                   const RegistryAddress& address, const TransferOptions& options,
                                   const PullRecordsOptions& how) {
  Run run(address, Access::pull, options);
  if (auto s = run.ping("pulling records from " + run.host()); !s) return fail(s.error());
  PulledRecords out;
  // First everything is read and checked, in memory: a record refused leaves the store as it was.
  std::vector<std::optional<ReadPull>> reads;
  std::set<std::string> seen;  // repository@digest: a tag and a digest may name the same image or platform
  for (const auto& reference : references) {
    // An image reached already by a tag (pull --all names each latest by tag and again by digest).
    if (!reference.digest.empty() && seen.contains(reference.path + "@" + reference.digest)) {
      reads.emplace_back();
      continue;
    }
    auto read = read_pull(run, reference, options);
    if (!read && read.error().kind == ErrorKind::trust && how.refusals == Refusals::skip) {
      out.refused.push_back(read.error().message);
      reads.emplace_back();
      continue;
    }
    if (!read) return fail(read.error());
    if (*read && options.checks_trust() && how.latest_tags == LatestTags::checked && is_latest_tag(reference)) {
      auto newer = newer_listed(run, **read, options);
      if (!newer) return fail(newer.error());
      if (*newer) *read = std::move(*newer);
    }
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
  if (how.older == Older::refused) {
    if (auto s = hold_back_older(store, reads, out.kept); !s) return fail(s.error());
  }
  out.outcomes.resize(references.size());
  std::vector<Added> added;
  std::map<std::string, std::vector<Record>> histories;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i]) continue;
    auto outcome = write_pull(run, store, *reads[i], i, options, how.layers, histories, added);
    if (!outcome) return fail(outcome.error());
    out.outcomes[i] = std::move(*outcome);
  }
  // The records of every reference in one transaction, ordered by the time recorded where they were
  // made (the builders' clocks; under trust, times a trusted key signed), whatever order the references
  // came in.
  std::ranges::stable_sort(added, {}, [](const Added& a) { return newness(a.record); });
  if (!added.empty()) {
    std::vector<std::pair<Record, std::vector<Descriptor>>> commits;
    for (const auto& a : added) commits.emplace_back(a.record, a.sboms);
    auto committed = store.with_writer([&](StoreWriter& writer) { return writer.commit_all(commits); });
    if (!committed) return fail(std::move(committed.error()).context("pulling records from " + run.host()));
    for (const auto& a : added) {
      out.outcomes[a.of]->records.push_back(a.record);
      out.outcomes[a.of]->referrers += static_cast<int>(a.sboms.size());
    }
  }
  return out;
}

}  // namespace arec
