// Bundles at a registry: read into memory and judged before a pull writes anything (pull.cpp), and
// judged where they are for verify (verify.cpp).
#include <spdlog/spdlog.h>

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

Result<std::vector<HeldBundle>> read_registry_bundles(Run& run, const std::string& repository, const Digest& subject,
                                                      const std::vector<Descriptor>& listed,
                                                      const std::string& context) {
  std::vector<HeldBundle> out;
  for (const auto& d : listed) {
    if (d.artifact_type != media_type::k_sigstore_bundle) continue;
    const std::string what = context + ": the bundle " + d.digest.str() + " of " + repository + "@" + subject.str();
    auto fetched = run.step(what, {}, [&] { return run.session.get_manifest(repository, d.digest.str()); });
    if (!fetched) return fail(fetched.error());
    auto manifest = parse_document<Manifest>(fetched->bytes, "its manifest");
    // One that is not a bundle of this image says nothing for it; the judgement counts what is left.
    if (!manifest || !manifest->subject || manifest->subject->digest != subject || manifest->layers.size() != 1 ||
        manifest->layers.front().media_type != media_type::k_sigstore_bundle) {
      spdlog::debug("{}: not a bundle of the image; passed over", what);
      continue;
    }
    auto bytes = fetch_text(run, repository, manifest->layers.front(), k_max_bundle, what);
    if (!bytes) return fail(bytes.error());
    out.push_back({std::move(*fetched), std::move(*manifest), std::move(*bytes)});
  }
  return out;
}

std::vector<std::string> bundle_texts(const std::vector<HeldBundle>& bundles) {
  std::vector<std::string> out;
  for (const auto& b : bundles) out.push_back(b.bytes);
  return out;
}

Status admit_signed(const TransferOptions& options, const std::vector<HeldBundle>& bundles, const Digest& image,
                    const std::string& repository, const Record* record, const std::string& context) {
  if (!options.trusted || options.trusted->empty()) return {};
  const auto verdict = judge_signatures(bundle_texts(bundles), image, repository, record, *options.trusted);
  if (verdict.state == SignatureState::trusted) return {};
  const std::string what = record ? "the record " + record->identity() : repository + "@" + image.str();
  return fail(Error::registry(context + ": " + what + " is " + refusal(verdict) +
                              ": no bundle verifies under a trusted key; nothing written"));
}

Status put_held_bundles(Store& store, const std::vector<HeldBundle>& bundles) {
  for (const auto& b : bundles) {
    if (auto put = store.put_blob(b.bytes, media_type::k_sigstore_bundle); !put) return fail(put.error());
    if (auto put = store.put_blob(b.fetched.bytes, b.fetched.media_type); !put) return fail(put.error());
  }
  return {};
}

}  // namespace arec
