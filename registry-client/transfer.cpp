#include "registry-client/transfer_internal.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

namespace arec {

Status run_parallel(Run& run, std::size_t count,
                    const std::function<Status(Session&, std::size_t, std::stop_token)>& work) {
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
    for (unsigned w = 1; w < workers; ++w)
      threads.emplace_back([&worker, s = run.workers[w - 1].get()] { worker(*s); });
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
    auto held = run.step(context + ": getting the referrers tag " + tag, {},
                         [&] { return run.session.find_manifest(repository, tag); });
    if (!held) return fail(held.error());
    if (!held->has_value()) return std::vector<Descriptor>{};
    auto parsed = parse_document<Index>((*held)->bytes, tag);
    if (!parsed) return fail(Error::registry(context + ": " + parsed.error().message));
    index = std::move(*parsed);
  }
  std::vector<Descriptor> out;
  for (auto& d : index.manifests) {
    if (d.media_type == media_type::k_manifest) out.push_back(std::move(d));
  }
  return out;
}

}  // namespace arec
