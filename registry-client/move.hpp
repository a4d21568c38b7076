// Moving the registry to another node or port: copy every record there by digest, verify, and only
// then rewrite the node settings, so that every later compose and push reads the new address.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "addressing/nodes.hpp"
#include "registry-client/push.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"

namespace arec {

struct MovePlan {
  std::string from_node;
  std::string to_node;
  RegistryAddress from;        // the registry the settings name now
  RegistryAddress to;          // where it will be
  bool already_there = false;  // `node` holds the registry at that port already: nothing to move
  NodeSettings moved;          // the settings after the move: `registry` held by to_node on the new port
  // The settings file before and after the move, in the file's own key order, indented by two spaces;
  // `after` is what the move writes.
  std::string settings_before;
  std::string settings_after;
  std::vector<Record> records;  // what is copied
};

// Plans a move of the registry to `node`, on `port` (default: the port that node was given for the
// registry), reading the settings file (settings.source) for its key order. Unknown nodes, ports out
// of range and another node at the registry's very address are bad input; the node that holds the
// registry at that port already gives a plan with already_there set.
Result<MovePlan> plan_move(const NodeSettings& settings, std::string_view node, std::optional<std::int64_t> port,
                           std::vector<Record> records, const ClientSettings& client);

struct MoveOutcome {
  int pulled = 0;      // records fetched from the old registry because the store lacked blobs
  PushSummary pushed;  // what went to the new registry
  int tags = 0;        // tags besides `latest` of recorded repositories, copied on the records they name
  std::size_t verified = 0;
};

// Copies the plan's records to the new registry by digest, streamed, skipping what is there: from the
// store when it holds all of a record's blobs (the same bytes, by their digests), otherwise from the
// old registry through the store; every other tag of a recorded repository at the old registry goes
// along on the record it names. Then checks every manifest digest at the new registry. Interrupted
// and run again, it picks up where it stopped. Nothing is deleted anywhere.
Result<MoveOutcome> copy_to_new_registry(Store& store, const MovePlan& plan, const TransferOptions& options);

// Rewrites the node settings file atomically with plan.settings_after (the file's keys stay in their
// order), keeping the old one as FILE.bak.
Status write_moved_settings(const std::string& path, const MovePlan& plan);

// The change of the settings file as a unified diff (`diff -u`, three lines of context) of
// plan.settings_before and plan.settings_after; `name` labels both sides.
std::string settings_diff(const MovePlan& plan, std::string_view name);

}  // namespace arec
