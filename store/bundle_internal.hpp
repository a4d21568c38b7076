// What inspect, export and import share. Private to store/: included by its .cpp files only.
#pragma once

#include <archive_entry.h>

#include <cstddef>

#include "store/bundle.hpp"

namespace arec {

// The block a blob or a layer is streamed in.
constexpr std::size_t k_block = std::size_t{1} << 20;

inline LayerFile::Type file_type(archive_entry* entry) {
  if (archive_entry_hardlink(entry) != nullptr) return LayerFile::Type::hardlink;
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG: return LayerFile::Type::file;
    case AE_IFDIR: return LayerFile::Type::directory;
    case AE_IFLNK: return LayerFile::Type::symlink;
    default: return LayerFile::Type::other;
  }
}

}  // namespace arec
