#pragma once

// Owning handles for libarchive's objects, and the one way arec opens a tar to read.
#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <string>
#include <string_view>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec::tar {

struct ReadFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};
using Reader = std::unique_ptr<archive, ReadFree>;
using Writer = std::unique_ptr<archive, WriteFree>;
using Entry = std::unique_ptr<archive_entry, EntryFree>;

// libarchive's message for the last failure, or a general one where it gave none.
inline std::string error_text(archive* a) {
  const char* text = archive_error_string(a);
  return text != nullptr ? text : "unreadable archive";
}

// A tar, plain or compressed (any filter libarchive reads), opened to be read entry by entry in blocks
// of `block` bytes. `what` names it in the error.
inline Result<Reader> open_reader(const fs::Path& path, std::size_t block, std::string_view what) {
  Reader a(archive_read_new());
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), block) != ARCHIVE_OK) {
    return fail_input(std::string(what) + ": " + error_text(a.get()));
  }
  return a;
}

}  // namespace arec::tar
