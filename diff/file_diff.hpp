// Inside the changed files of a layer: an ELF file's details, a text file's unified diff, a dpkg status
// file's package versions, and the hints they give. Each side's layer is streamed once more, and only the
// changed files are read, one at a time, up to the caps of image_diff.hpp.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "diff/image_diff.hpp"

namespace arec {

// A field of text as the JSON report shows it: null when empty.
nlohmann::json text_or_null(const std::string& text);

// A layer's entries by path, each with its content's digest (a hard link's is its target's).
struct EntryState {
  LayerFile file;
  std::string digest;
};
using Entries = std::map<std::string, EntryState>;

// Fills in the ELF details and text diffs of `layer`'s changed files and its packages from a dpkg status
// file, and adds the hints they give; `text_diffs` counts the text diffs made in the whole image.
Status look_into_files(const DiffSide& before, const DiffSide& after, LayerChange& layer, std::vector<Hint>& hints,
                       std::size_t& text_diffs);

// The hints the tar headers of a layer's changed files give (an mtime that differs).
void header_hints(const LayerChange& layer, std::vector<Hint>& hints);

}  // namespace arec
