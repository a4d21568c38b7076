// What the store's files share (layout.cpp, store.cpp, store_writer.cpp). Private to store/: included
// by its .cpp files only.
#pragma once

#include <sys/stat.h>

#include <cstddef>

#include "util/fs.hpp"

namespace arec {

// The size of the writes a blob is written in, and of the reads a blob is copied in.
constexpr std::size_t k_write_buffer = std::size_t{1} << 20;

inline bool path_exists(const fs::Path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace arec
