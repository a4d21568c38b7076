// Checking a store and collecting its garbage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace arec {

struct CheckReport {
  std::vector<std::string> problems;  // each names the file and what is wrong
  // Left by killed writers. Nothing refers to them and no reader sees them, so they do not make a
  // store unsound; writers sweep them when they open the store, and --repair removes them at once.
  std::vector<fs::Path> stray_temporaries;
  // index.json is older than the history: a writer was killed between its commit and rewriting the
  // view. Readers of arec read the history, so nothing is lost; the next writer or --repair rewrites it.
  bool index_behind = false;
  std::size_t blobs_checked = 0;
  std::size_t records = 0;
  bool ok() const { return problems.empty(); }
};

// Verifies the store: every blob a history entry or an index entry reaches exists, has the size its
// descriptor says and hashes to its name; the history agrees with itself (the latest of each
// module/name is its newest entry) and index.json is the view derived from it; and lists the
// temporaries of dead writers. Reads only. An index.json that is missing or does not parse is a problem reported, not
// an error. A store not converted yet is checked as index.json holds it.
Result<CheckReport> check_store(const Store& store);

struct RepairReport {
  std::size_t temporaries_removed = 0;
  bool index_rewritten = false;
};

// Removes the temporaries of dead writers and rewrites index.json from the history when it is
// missing, behind or different. A store of format 1 was converted when the writer was taken.
Result<RepairReport> repair_store(StoreWriter& writer);

struct GcReport {
  std::size_t records_dropped = 0;
  std::size_t blobs_removed = 0;
  std::int64_t bytes_removed = 0;
  std::size_t upload_notes_removed = 0;  // notes of uploads no push can go on with (store/uploads.hpp)
};

enum class DryRun { yes, no };

// Keeps the newest `keep` history entries of each configuration of each module/name (0: all of them) and removes every
// blob no history entry or index entry reaches, and the upload notes of those blobs and of uploads
// untouched for a week. The writer must keep the writers of blobs out
// (Store::writer(BlobWriters::excluded): it waited until no writer was recording), or a blob a record
// about to be committed needs could go.
Result<GcReport> collect_garbage(StoreWriter& writer, std::size_t keep, DryRun dry_run);

}  // namespace arec
