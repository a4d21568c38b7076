// Checking a store and collecting its garbage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recorder/store.hpp"

namespace arec {

struct CheckReport {
  std::vector<std::string> problems;       // each names the file and what is wrong
  // Left by killed writers. Nothing refers to them and no reader sees them, so they do not make a
  // store unsound; writers sweep them when they open the store, and --repair removes them at once.
  std::vector<fs::Path> stray_temporaries;
  std::size_t blobs_checked = 0;
  std::size_t records = 0;
  bool ok() const { return problems.empty(); }
};

// Verifies the store: oci-layout and index.json parse; every blob an index entry reaches exists, has
// the size its descriptor says and hashes to its name; the records agree (one latest per
// module/name, and it is the newest); and lists the temporaries of dead writers. Reads only. An
// index.json that is missing or does not parse is a problem reported, not an error.
Result<CheckReport> check_store(const Store& store);

struct GcReport {
  std::size_t records_dropped = 0;
  std::size_t blobs_removed = 0;
  std::int64_t bytes_removed = 0;
};

enum class DryRun { yes, no };

// Keeps the newest `keep` records of each module/name (0: all of them) and removes every blob no index
// entry reaches. Waits until no writer is recording, and holds the index lock while it works.
Result<GcReport> collect_garbage(const Store& store, std::size_t keep, DryRun dry_run);

}  // namespace arec
