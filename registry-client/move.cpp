#include "registry-client/move.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "addressing/nodes_text.hpp"
#include "addressing/text_diff.hpp"
#include "recorder/signing.hpp"
#include "registry-client/catalog.hpp"
#include "registry-client/pull.hpp"
#include "registry-client/transfer_internal.hpp"
#include "registry-client/verify.hpp"
#include "util/fs.hpp"

namespace arec {

namespace {

// The tag a referrer is kept under where a registry has no referrers API: arec pushes it itself, with
// the record it refers to.
bool is_referrer_tag(std::string_view tag) { return tag.starts_with("sha256-") && tag.size() == 7 + 64; }

// Every tag but `latest` of a recorded repository at the old registry ("1.0"), put at the new one on the
// record it names there, as the store holds it (already admitted with the rest). A tag on an image that
// is no record of the store (pushed by hand) is said and left. Returns how many tags were copied.
Result<int> copy_other_tags(Store& store, const MovePlan& plan, const TransferOptions& options) {
  std::set<std::string> recorded;
  for (const auto& r : plan.records) recorded.insert(r.repository());
  auto catalog = read_catalog(plan.from, options);
  if (!catalog) return fail(catalog.error());
  std::optional<std::vector<Record>> history;
  Run run(plan.from, Access::pull, options);
  if (auto s = run.ping("moving the registry: reading the tags at " + run.host()); !s) return fail(s.error());
  int copied = 0;
  for (const auto& entry : *catalog) {
    if (!recorded.contains(entry.repository)) continue;
    for (const auto& tag : entry.tags) {
      if (tag == "latest" || is_referrer_tag(tag)) continue;
      // Only the digest it names is wanted: what goes to the new registry is the store's record of it.
      const std::string doing = "moving the registry: looking at " + entry.repository + ":" + tag + " at " + run.host();
      auto named = run.step(doing, {}, [&] { return run.session.head_manifest(entry.repository, tag); });
      if (!named) return fail(named.error());
      if (!*named) continue;
      if (!history) {
        auto all = store.records(History::all);
        if (!all) return fail(all.error());
        history = std::move(*all);
      }
      const auto record = std::ranges::find_if(*history, [&](const Record& r) {
        return r.repository() == entry.repository && r.manifest.digest == (*named)->digest;
      });
      if (record == history->end()) {
        spdlog::warn("{}/{}:{} names {}, which is no record of the store: the tag is not copied", plan.from.host,
                     entry.repository, tag, (*named)->digest.str());
        continue;
      }
      if (auto s = admit_records(store, {*record}, options.policy(), "moving the registry"); !s) return fail(s.error());
      auto pushed = push_records(store, {*record}, PushTags{LatestTag::no, {tag}}, plan.to, options);
      if (!pushed) return fail(pushed.error());
      ++copied;
    }
  }
  return copied;
}

}  // namespace

std::string settings_diff(const MovePlan& plan, std::string_view name) {
  return unified_diff(plan.settings_before, plan.settings_after, name, std::string(name) + " (after the move)");
}

Result<MovePlan> plan_move(const NodeSettings& settings, std::string_view node, std::optional<std::int64_t> port,
                           std::vector<Record> records, const ClientSettings& client) {
  const auto target = settings.nodes.find(std::string(node));
  if (target == settings.nodes.end()) {
    std::string known;
    for (const auto& [name, n] : settings.nodes) known += (known.empty() ? "" : ", ") + name;
    return fail_input("--to \"" + std::string(node) + "\": no such node in node settings " + settings.source +
                      " (nodes: " + known + ")");
  }
  std::uint16_t new_port = 0;
  if (port) {
    if (*port < 1 || *port > 65535) return fail_input("--port " + std::to_string(*port) + ": not a port (1-65535)");
    new_port = static_cast<std::uint16_t>(*port);
  } else if (const auto given = target->second.ports.find("registry"); given != target->second.ports.end()) {
    new_port = given->second;
  } else {
    return fail_input("--to " + std::string(node) + ": that node was given no registry port; say which with --port");
  }
  MovePlan plan;
  plan.to_node = std::string(node);
  plan.from_node = settings.services.contains("registry") ? settings.services.at("registry") : "";
  auto from = registry_from_settings(settings, client);
  if (!from) return fail(std::move(from.error()).context("finding the registry to move"));
  plan.from = *from;
  plan.moved = settings;
  plan.moved.services["registry"] = plan.to_node;
  plan.moved.nodes[plan.to_node].ports["registry"] = new_port;
  auto to = registry_from_settings(plan.moved, client);
  if (!to) return fail(std::move(to.error()).context("finding the registry's new place"));
  plan.to = *to;
  if (plan.to.host == plan.from.host) {
    if (plan.to_node == plan.from_node) {
      plan.already_there = true;
      return plan;
    }
    return fail_input("--to " + plan.to_node + ": the registry is already at " + plan.from.host + " (node " +
                      plan.from_node + "): nothing to move");
  }
  // The file's own text: the diff shows its lines, and the move changes only the values that move.
  auto text = fs::read_file(settings.source, k_max_settings_size);
  if (!text) return fail(std::move(text.error()).context("reading node settings"));
  auto document = read_json<nlohmann::ordered_json>(*text);
  if (!document || !document->is_object())
    return fail_input("node settings " + settings.source + ": changed while read");
  auto after = with_registry_moved(*text, plan.to_node, new_port);
  if (!after || !read_json<nlohmann::ordered_json>(*after)) {
    return fail_input("node settings " + settings.source + ": cannot find services.registry and nodes." + plan.to_node +
                      " to change");
  }
  plan.settings_before = std::move(*text);
  plan.settings_after = std::move(*after);
  plan.records = std::move(records);
  return plan;
}

Result<MoveOutcome> copy_to_new_registry(Store& store, const MovePlan& plan, const TransferOptions& options) {
  MoveOutcome outcome;
  // An image index goes whole: each platform's record is fetched where the store lacks it, like the rest.
  auto records = store.with_platforms(plan.records);
  if (!records) return fail(records.error());
  // Under trust nothing leaves the store for the new registry unless a trusted key signed it: checked
  // for every record before anything is copied.
  if (auto s = admit_records(store, *records, options.policy(), "moving the registry"); !s) return fail(s.error());
  for (const auto& record : *records) {
    if (store.holds_image(record.manifest)) continue;
    spdlog::info("{}: the store lacks some of its blobs; fetching it from {}", record.identity(), plan.from.host);
    // By the digest of a record admitted above: the bytes are what the team signed whatever else the
    // old registry lists beside them.
    Reference source{plan.from.host, record.repository(), "", record.manifest.digest.str()};
    TransferOptions by_digest = options;
    by_digest.trust.reset();
    auto pulled = pull_image(store, source, plan.from, by_digest);
    if (!pulled) return fail(pulled.error());
    ++outcome.pulled;
  }
  // The latest record of each module/name keeps its `latest` tag at the new registry.
  auto pushed = push_records(store, plan.records, PushTags{LatestTag::yes, {}}, plan.to, options);
  if (!pushed) return fail(pushed.error());
  outcome.pushed = std::move(*pushed);
  auto tags = copy_other_tags(store, plan, options);
  if (!tags) return fail(tags.error());
  outcome.tags = *tags;
  auto verified = verify_records(plan.records, plan.to, options, &store);
  if (!verified) return fail(verified.error());
  for (const auto& item : *verified) {
    if (item.state != VerifyState::present) {
      return fail(Error::registry("moving the registry: " + item.record.identity() + " is " +
                                  std::string(verify_state_name(item.state)) + " at " + plan.to.host +
                                  " after copying"));
    }
  }
  outcome.verified = verified->size();
  return outcome;
}

Status write_moved_settings(const std::string& path, const MovePlan& plan) {
  const fs::Path file(path);
  const fs::Path dir = fs::directory_of(file);
  auto old = fs::read_file(file, k_max_settings_size);
  if (!old) return fail(std::move(old.error()).context("keeping the old node settings"));
  if (auto s = fs::write_file_atomic(dir, fs::Path(path + ".bak"), *old); !s) return s;
  return fs::write_file_atomic(dir, file, plan.settings_after);
}

}  // namespace arec
