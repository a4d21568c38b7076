// `arec record --stamp`: what the CMake module's recording step leaves for the build tool, so that a
// change to any input records again and a build that changes none records nothing (ARCHITECTURE.md,
// "The CMake module").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"

#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec::cli {

// The host files and directories a record was made from: every file packed (the target, FILES, the
// files of DIRECTORIES trees and the runtime closure) and every directory of a DIRECTORIES tree, whose
// modification time changes when an entry is added or removed.
struct RecordInputs {
  std::vector<fs::Path> files;
  std::vector<fs::Path> directories;
};

// A path as a Makefile rule names it (the depfile format compilers write), absolute.
std::string make_escaped(const fs::Path& path);

// Each directory of the trees at `roots`, the roots included, never followed through symlinks.
std::vector<fs::Path> directories_under(const std::vector<fs::Path>& roots);

// Warnings for inputs modified at or after `started` (when the recording began): something else in
// the same build writes them while they are recorded, so the record may hold neither the old content
// nor the new one, and the build cannot know it must record again. `record` names the record.
std::vector<std::string> moving_input_warnings(const RecordInputs& inputs, std::filesystem::file_time_type started,
                                               const std::string& record);

// Writes `<stamp>.d`, a Makefile rule "<stamp>: <every input>", then touches `stamp`, both atomically.
// Written only once the record is committed: a failed recording leaves no stamp, so it runs again.
Status write_record_stamp(const fs::Path& stamp, const RecordInputs& inputs);

// The signing key is an input of every record too, and the only one a build's environment can change
// (AREC_SIGNING_KEY) without configure seeing it. The CMake module runs `arec __signing-stamp FILE` at
// every build, before any recording step: FILE holds "signed <fingerprint>" or "unsigned" and is
// rewritten only when that changes (the build tool restats it), and each recording step depends on it.
// So a key set, rotated or removed over an up-to-date build records again; the same key, nothing.
enum class KeyChange {
  same,     // as the last build: FILE untouched
  first,    // no FILE yet: the first build of the tree
  set,      // unsigned before, signed now
  changed,  // another key than before
  gone,     // signed before, unsigned now
};

struct SigningStamp {
  KeyChange change = KeyChange::same;
  std::string before;  // the fingerprint the last build signed with, if it signed
};

// Writes FILE for the key of `fingerprint` (nothing: unsigned) when it says something else, atomically.
Result<SigningStamp> write_signing_stamp(const fs::Path& file, const std::optional<std::string>& fingerprint);

// `arec __signing-stamp FILE [--sign-key KEY]` (hidden: the CMake module's build step).
void add_signing_stamp(CLI::App& app, Globals& globals, Action& action);

}  // namespace arec::cli
