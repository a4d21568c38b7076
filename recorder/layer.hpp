// A layer is a reproducible tar of a target's outputs (rule 7): entries sorted by path, one fixed mtime,
// owner 0:0 with empty names, modes normalised, no atime/ctime, no extended attributes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "oci/digest.hpp"
#include "recorder/compress.hpp"
#include "recorder/file_hashing.hpp"
#include "util/error.hpp"

namespace arec {

// One input as the user named it: a file or a directory tree, and where it goes in the image.
struct LayerInput {
  enum class Kind { file, directory };
  Kind kind = Kind::file;
  std::filesystem::path source;
  std::string destination;  // absolute image path; a file without one goes to /usr/local/bin/<basename>
};

// Parses `SRC[=DEST]` as the command line and the CMake module spell it. A file's DEST ending in "/"
// is a directory the file goes into, as with cp and Dockerfile COPY.
Result<LayerInput> parse_layer_input(LayerInput::Kind kind, std::string_view spec);

// One tar entry. `path` is relative to the image root with no leading slash ("usr/local/bin/app").
struct LayerEntry {
  enum class Type { file, directory, symlink };
  Type type = Type::file;
  std::string path;
  std::filesystem::path source;  // files: where the bytes are read from
  std::string link_target;       // symlinks
  std::uint32_t mode = 0;        // normalised permission bits
  std::int64_t size = 0;         // files: the size seen when collected
  // Files arec writes itself (/etc/passwd, the CA bundle), with no `source`: these bytes, `size` long.
  std::string content;
};

// A file of `text` at `path`, written by arec rather than read from the host.
LayerEntry generated_file(std::string path, std::string text, std::uint32_t mode = 0644);

// Walks the inputs into a sorted entry list, with every parent directory present. Directory trees are
// read with lstat and never followed through symlinks; a symlink is recorded as the link it is, wherever
// it points. Refused: two inputs that put different things at one path, and an entry whose path passes
// through a symlink recorded before it (an unpacker following that link would write elsewhere).
Result<std::vector<LayerEntry>> collect_entries(const std::vector<LayerInput>& inputs);

// `entries` (from collect_entries) with `extra` merged in, sorted, parents present; a path given by both
// with different content is refused, naming `origin` for the extra ones.
Result<std::vector<LayerEntry>> merge_entries(std::vector<LayerEntry> entries, std::vector<LayerEntry> extra,
                                              std::string_view origin);

// Normalises an absolute image path ("/usr//local/./bin/" -> "usr/local/bin"); refuses relative paths
// and "..". `what` names the input in messages.
Result<std::string> normalise_image_path(std::string_view path, std::string_view what);

// Rule 7's file mode: 0755 when any execute bit is set, else 0644.
inline std::uint32_t normalised_file_mode(mode_t mode) { return (mode & 0111) != 0 ? 0755 : 0644; }

struct TarOptions {
  std::int64_t mtime = 0;  // SOURCE_DATE_EPOCH
  // When set, the SHA-1 and SHA-256 of each file `checksum_wanted` accepts (every file when it is
  // empty) go here, by image path, hashed from the same read that packs the file: the SBOM's checksums.
  ChecksumTable* checksums = nullptr;
  std::function<bool(const LayerEntry&)> checksum_wanted;
};

// Writes the entries as a tar stream into `out` and finishes it. Files are read once, in large blocks
// from a bounded pool, and the blocks are handed on as they are (ByteSink::write_shared): `out` may
// hash them and write them on other threads without a copy, while the file's own checksums are made
// from them too (TarOptions::checksums). A file that changed size since collection is an error. The
// layer's DiffID comes from a HashingSink on the way.
Status write_tar(const std::vector<LayerEntry>& entries, const TarOptions& options, ByteSink& out);

}  // namespace arec
