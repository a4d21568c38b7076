// A layer's tar written with libarchive as any image builder would write it, for tests of what reads
// layers (a base image's files, bundles).
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

namespace arec::test {

struct TarItem {
  std::string path;
  enum { file, dir, symlink, hardlink } kind = file;
  std::string content_or_target;
};

enum class Gzip { yes, no };

// The tar of `items` in order, gzip'd or plain; regular files get `file_mode`, the rest 0755.
inline std::string make_tar(const std::vector<TarItem>& items, Gzip gzip, int file_mode = 0755) {
  std::string out;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip == Gzip::yes) archive_write_add_filter_gzip(a);
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* data, const void* buffer, size_t length) -> la_ssize_t {
        static_cast<std::string*>(data)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  for (const auto& item : items) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, item.path.c_str());
    archive_entry_set_perm(e, static_cast<__LA_MODE_T>(item.kind == TarItem::file ? file_mode : 0755));
    switch (item.kind) {
      case TarItem::file:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_size(e, static_cast<la_int64_t>(item.content_or_target.size()));
        break;
      case TarItem::dir: archive_entry_set_filetype(e, AE_IFDIR); break;
      case TarItem::symlink:
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_symlink(e, item.content_or_target.c_str());
        break;
      case TarItem::hardlink:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_hardlink(e, item.content_or_target.c_str());
        break;
    }
    archive_write_header(a, e);
    if (item.kind == TarItem::file) archive_write_data(a, item.content_or_target.data(), item.content_or_target.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

}  // namespace arec::test
