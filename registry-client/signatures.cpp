// What a registry says of one image, read into memory before anything is written: its record artifacts,
// its bundles and its other referrers, bounded, and judged by the run's trust policy (oci/trust). Pull,
// verify and push's tag decision read an image this way, so that they judge it alike.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "registry-client/transfer_internal.hpp"

namespace arec {

namespace {

class TextSink final : public ByteSink {
 public:
  explicit TextSink(std::size_t limit) : m_limit(limit) {}
  Status write(std::span<const std::byte> data) override {
    if (m_text.size() + data.size() > m_limit)
      return fail(Error::registry("more than " + std::to_string(m_limit) + " bytes"));
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

// A step about one listed entry, retried as any step: its answer; nothing when, with
// EntryProblems::pass_over, the registry's final answer says the entry itself is wrong (absent, refused,
// of another digest), so that it is passed over with `why`. An error when the registry could not be
// reached, which no entry can be judged without, and with EntryProblems::refuse for any failure.
template <typename F>
auto entry_step(Run& run, const std::string& doing, EntryProblems problems, std::string& why, F&& attempt)
    -> Result<std::optional<typename decltype(attempt())::value_type>> {
  using Value = typename decltype(attempt())::value_type;
  auto result = with_retry(run.options.retry, doing, {}, std::forward<F>(attempt));
  if (result) return std::optional<Value>(std::move(*result));
  const auto& e = result.error();
  if (problems == EntryProblems::refuse || e.is_temporary() ||
      (e.origin != RegistryError::Origin::response && e.origin != RegistryError::Origin::protocol))
    return fail(e.to_error(doing));
  why = e.str();
  return std::optional<Value>();
}

// A small blob into memory, of at most `limit` bytes (its descriptor's size checked first).
Result<std::optional<std::string>> fetch_entry_text(Run& run, const std::string& repository, const Descriptor& blob,
                                                    std::size_t limit, const std::string& doing, EntryProblems problems,
                                                    std::string& why) {
  if (blob.size < 0 || static_cast<std::uint64_t>(blob.size) > limit) {
    why = "declared as " + std::to_string(blob.size) + " bytes, more than " + std::to_string(limit);
    if (problems == EntryProblems::refuse) return fail(Error::registry(doing + ": " + why));
    return std::optional<std::string>();
  }
  TextSink sink(limit);
  auto got = entry_step(run, doing, problems, why, [&]() -> RegistryResult<bool> {
    sink.clear();
    auto s = run.session.download_blob(repository, blob, sink, [](std::int64_t) { return true; });
    if (!s) return std::unexpected(s.error());
    return true;
  });
  if (!got) return fail(got.error());
  if (!*got) return std::optional<std::string>();
  return std::optional<std::string>(sink.take());
}

// Reads the record artifact `listed` of `image`: an artifact manifest of arec's record type whose
// subject is the image, one document layer, a document that parses, names this repository and this
// image, and is byte for byte what arec writes for that record, recorded no further ahead than the
// clock tolerance. Nothing, with `why`, for one that is not.
Result<std::optional<Record>> read_record_artifact(Run& run, const std::string& repository,
                                                   const FetchedManifest& image, const Descriptor& listed,
                                                   EntryProblems problems, const std::string& context,
                                                   std::string& why) {
  const std::string what =
      "the record artifact " + listed.digest.str() + " of " + repository + "@" + image.digest.str();
  const auto refused = [&](const std::string& because) {
    why = because;
    return std::optional<Record>();
  };
  auto fetched = entry_step(run, context + ": getting " + what, problems, why,
                            [&] { return run.session.get_manifest(repository, listed.digest.str()); });
  if (!fetched) return fail(fetched.error());
  if (!*fetched) return std::optional<Record>();
  auto manifest = parse_document<Manifest>((*fetched)->bytes, "its manifest");
  if (!manifest) return refused(manifest.error().message);
  if (manifest->artifact_type != media_type::k_arec_record) {
    return refused("its artifactType is \"" + printable(manifest->artifact_type) + "\", not " +
                   std::string(media_type::k_arec_record));
  }
  if (!manifest->subject || manifest->subject->digest != image.digest) {
    return refused("its subject is " + (manifest->subject ? manifest->subject->digest.str() : std::string("missing")) +
                   ", not the image");
  }
  if (manifest->layers.size() != 1 || manifest->layers.front().media_type != media_type::k_arec_record)
    return refused("expected one layer of type " + std::string(media_type::k_arec_record));
  auto document = fetch_entry_text(run, repository, manifest->layers.front(), k_max_record_document,
                                   context + ": getting the document of " + what, problems, why);
  if (!document) return fail(document.error());
  if (!*document) return std::optional<Record>();
  auto record = parse_record_document(**document, "its document");
  if (!record) return refused(record.error().message);
  if (record->repository() != repository)
    return refused("it is a record of " + record->repository() + ", not of " + repository);
  const auto image_descriptor = image.descriptor();
  if (record->manifest.digest != image.digest || record->manifest.size != image_descriptor.size ||
      record->manifest.media_type != image_descriptor.media_type) {
    return refused("it records " + record->manifest.digest.str() + " (" + std::to_string(record->manifest.size) +
                   " bytes, " + record->manifest.media_type + "), which is not the image it refers to");
  }
  // What arec writes for that record, and nothing else: the same record pushed from here again costs no write.
  auto again = record_artifact(*record);
  if (!again) return refused(again.error().message);
  if (again->descriptor.digest != listed.digest) return refused("not the artifact arec makes of the record it holds");
  // A record from the future would be the newest, and stay `latest`, until that time comes.
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  if (rfc3339_seconds(record->recorded).value_or(0) > now + k_clock_tolerance_seconds) {
    return refused("it is recorded " + record->recorded + ", more than " +
                   std::to_string(k_clock_tolerance_seconds / 60) + " minutes ahead of this machine's clock (" +
                   rfc3339(now) + ")");
  }
  return std::optional<Record>(std::move(*record));
}

// Reads the bundle `listed` of `subject`: an artifact manifest whose subject is the image and whose one
// layer is a bundle, of at most k_max_bundle bytes. Nothing, with `why`, for one that is not.
Result<std::optional<HeldBundle>> read_bundle(Run& run, const std::string& repository, const Digest& subject,
                                              const Descriptor& listed, const std::string& context, std::string& why) {
  const std::string what = context + ": the bundle " + listed.digest.str() + " of " + repository + "@" + subject.str();
  auto fetched = entry_step(run, what, EntryProblems::pass_over, why,
                            [&] { return run.session.get_manifest(repository, listed.digest.str()); });
  if (!fetched) return fail(fetched.error());
  if (!*fetched) return std::optional<HeldBundle>();
  auto manifest = parse_document<Manifest>((*fetched)->bytes, "its manifest");
  if (!manifest || !manifest->subject || manifest->subject->digest != subject || manifest->layers.size() != 1 ||
      manifest->layers.front().media_type != media_type::k_sigstore_bundle) {
    why = "not a bundle of the image";
    return std::optional<HeldBundle>();
  }
  auto bytes =
      fetch_entry_text(run, repository, manifest->layers.front(), k_max_bundle, what, EntryProblems::pass_over, why);
  if (!bytes) return fail(bytes.error());
  if (!*bytes) return std::optional<HeldBundle>();
  return std::optional<HeldBundle>(HeldBundle{std::move(**fetched), std::move(*manifest), std::move(**bytes)});
}

}  // namespace

// A small blob downloaded into memory, verified against its descriptor.
Result<std::string> fetch_text(Run& run, const std::string& repository, const Descriptor& blob, std::size_t limit,
                               const std::string& doing) {
  if (blob.size < 0 || static_cast<std::uint64_t>(blob.size) > limit) {
    return fail(Error::registry(doing + ": declared as " + std::to_string(blob.size) + " bytes, more than " +
                                std::to_string(limit)));
  }
  TextSink sink(limit);
  auto got = run.step(doing, {}, [&]() -> RegistryResult<void> {
    sink.clear();
    return run.session.download_blob(repository, blob, sink, [](std::int64_t) { return true; });
  });
  if (!got) return fail(got.error());
  return sink.take();
}

Result<ImageEvidence> read_evidence(Run& run, const std::string& repository, FetchedManifest image,
                                    EntryProblems problems, RecordArtifacts read_records, const std::string& context) {
  ImageEvidence out;
  auto manifest = parse_document<Manifest>(image.bytes, "the manifest " + image.digest.str());
  if (!manifest) return fail(Error::registry(context + ": " + manifest.error().message));
  out.manifest = std::move(*manifest);
  out.image = std::move(image);
  const Digest& subject = out.image.digest;
  auto listed = registry_referrers(run, repository, subject, context);
  if (!listed) return fail(listed.error());
  std::size_t records = 0, bundles = 0;
  for (const auto& entry : *listed) {
    const bool is_record = entry.artifact_type == media_type::k_arec_record;
    const bool is_bundle = entry.artifact_type == media_type::k_sigstore_bundle;
    if (is_record && read_records == RecordArtifacts::skip) continue;
    if (!is_record && !is_bundle) {
      if (out.others.size() < k_max_referrers_read) {
        out.others.push_back(entry);
      } else {
        out.passed_over.push_back("the referrer " + entry.digest.str() + " of " + repository + "@" + subject.str() +
                                  ": more than " + std::to_string(k_max_referrers_read) + " referrers of its kind");
      }
      continue;
    }
    std::string why;
    const std::string what = (is_record ? "the record artifact " : "the bundle ") + entry.digest.str() + " of " +
                             repository + "@" + subject.str();
    if ((is_record ? records : bundles)++ == k_max_referrers_read) {
      why = "more than " + std::to_string(k_max_referrers_read) + " listed for one image; no more are read";
    } else if (is_record) {
      auto record = read_record_artifact(run, repository, out.image, entry, problems, context, why);
      if (!record) return fail(record.error());
      if (*record) {
        out.records.push_back(std::move(**record));
        continue;
      }
      // Without trust a record artifact that disagrees is refused: with no signature to tell the
      // team's from another's, it is the only check there is.
      if (problems == EntryProblems::refuse)
        return fail(Error::registry(context + ": " + what + ": " + why + "; nothing written"));
    } else {
      auto bundle = read_bundle(run, repository, subject, entry, context, why);
      if (!bundle) return fail(bundle.error());
      if (*bundle) {
        out.bundles.push_back(std::move(**bundle));
        continue;
      }
    }
    out.passed_over.push_back(what + ": " + why);
  }
  for (const auto& p : out.passed_over) spdlog::warn("{}: passed over {}", context, p);
  return out;
}

std::vector<std::string> bundle_texts(const std::vector<HeldBundle>& bundles) {
  std::vector<std::string> out;
  for (const auto& b : bundles) out.push_back(b.bytes);
  return out;
}

JudgedRecords judge_evidence(const TransferOptions& options, const ImageEvidence& evidence,
                             const std::string& repository) {
  JudgedRecords out;
  const auto texts = bundle_texts(evidence.bundles);
  for (const auto& record : evidence.records) {
    auto verdict = judge_signatures(texts, evidence.image.digest, repository, &record, options.policy());
    if (!options.checks_trust() || verdict.state == SignatureState::trusted) {
      spdlog::debug("{}: {}", record.identity(),
                    verdict.fingerprint.empty() ? std::string(to_string(verdict.state))
                                                : std::string(to_string(verdict.state)) + ", signed by key " +
                                                      verdict.fingerprint.substr(0, 16));
      out.admitted.emplace_back(record, std::move(verdict));
    } else {
      out.refused.emplace_back(record, std::move(verdict));
    }
  }
  return out;
}

Error refused_error(const std::string& context, const std::string& what, const SignatureVerdict& verdict) {
  return Error::trust(context + ": " + what + " is " + refusal(verdict) +
                      ": no bundle verifies under a trusted key; nothing written");
}

Status put_held_bundles(Store& store, const std::vector<HeldBundle>& bundles) {
  for (const auto& b : bundles) {
    if (auto put = store.put_blob(b.bytes, media_type::k_sigstore_bundle); !put) return fail(put.error());
    if (auto put = store.put_blob(b.fetched.bytes, b.fetched.media_type); !put) return fail(put.error());
  }
  return {};
}

}  // namespace arec
