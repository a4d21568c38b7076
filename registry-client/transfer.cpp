#include "registry-client/transfer_internal.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "registry-client/pull.hpp"

namespace arec {

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

namespace {

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
