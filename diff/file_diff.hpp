// Inside the changed files of a layer: an ELF file's details, a text file's unified diff, a dpkg status
// file's package versions, and the hints they give. Each side's layer is streamed once more, and only the
// changed files are read, one at a time, up to the caps of image_diff.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "diff/image_diff.hpp"

namespace arec {

// A field of text as the JSON report shows it: null when empty.
nlohmann::json text_or_null(const std::string& text);

// Fills in the ELF details and text diffs of `layer`'s changed files and its packages from a dpkg status
// file, and adds the hints they give; `text_diffs` counts the text diffs made in the whole image. The
// side before is read first, keeping what was found in its changed files (at most k_max_captured_bytes;
// a file past that is not looked into, and says so); the side after is then compared file by file.
Status look_into_files(const DiffSide& before, const DiffSide& after, LayerChange& layer, std::vector<Hint>& hints,
                       std::size_t& text_diffs);

// The hints the tar headers of a layer's changed files give (an mtime that differs).
void header_hints(const LayerChange& layer, std::vector<Hint>& hints);

}  // namespace arec
