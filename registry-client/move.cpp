#include "registry-client/move.hpp"

#include <spdlog/spdlog.h>

#include "recorder/fs.hpp"

namespace arec {

namespace {

// True when the store holds the record's manifest, config and every layer.
bool store_has_all_blobs(const Store& store, const Record& record) {
  auto bytes = store.read_blob(record.manifest);
  if (!bytes) return false;
  auto json = parse_json(*bytes, record.identity());
  if (!json) return false;
  auto manifest = manifest_from_json(*json, record.identity());
  if (!manifest || !store.has_blob(manifest->config)) return false;
  return std::all_of(manifest->layers.begin(), manifest->layers.end(), [&](const Descriptor& d) { return store.has_blob(d); });
}

}  // namespace

Result<MovePlan> plan_move(const NodeSettings& settings, std::string_view node, std::optional<std::int64_t> port,
                           std::vector<Record> records, const ClientSettings& client) {
  const auto target = settings.nodes.find(std::string(node));
  if (target == settings.nodes.end()) {
    std::string known;
    for (const auto& [name, n] : settings.nodes) known += (known.empty() ? "" : ", ") + name;
    return fail_input("--to \"" + std::string(node) + "\": no such node in node settings " + settings.source + " (nodes: " + known + ")");
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
    return fail_input("the registry is already at " + plan.from.host + " (node " + plan.to_node + "): nothing to move");
  }
  plan.records = std::move(records);
  return plan;
}

Result<MoveOutcome> copy_to_new_registry(Store& store, const MovePlan& plan, const TransferOptions& options) {
  MoveOutcome outcome;
  for (const auto& record : plan.records) {
    if (store_has_all_blobs(store, record)) continue;
    spdlog::info("{}: the store lacks some of its blobs; fetching it from {}", record.identity(), plan.from.host);
    Reference source{plan.from.host, record.repository(), "", record.manifest.digest.str()};
    auto pulled = pull_image(store, source, plan.from, options);
    if (!pulled) return fail(pulled.error());
    ++outcome.pulled;
  }
  // The latest record of each module/name keeps its `latest` tag at the new registry.
  auto pushed = push_records(store, plan.records, PushTags{LatestTag::yes, {}}, plan.to, options);
  if (!pushed) return fail(pushed.error());
  outcome.pushed = std::move(*pushed);
  auto verified = verify_records(plan.records, plan.to, options, &store);
  if (!verified) return fail(verified.error());
  for (const auto& item : *verified) {
    if (item.state != VerifyState::present) {
      return fail(Error::registry("moving the registry: " + item.record.identity() + " is " +
                                  std::string(verify_state_name(item.state)) + " at " + plan.to.host + " after copying"));
    }
  }
  outcome.verified = verified->size();
  return outcome;
}

Status write_moved_settings(const std::string& path, const NodeSettings& moved) {
  const fs::Path file(path);
  const fs::Path dir = fs::directory_of(file);
  auto old = fs::read_file(file);
  if (!old) return fail(std::move(old.error()).context("keeping the old node settings"));
  if (auto s = fs::write_file_atomic(dir, fs::Path(path + ".bak"), *old); !s) return s;
  return fs::write_file_atomic(dir, file, moved.to_json_text());
}

}  // namespace arec
