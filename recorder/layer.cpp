#include "recorder/layer.hpp"

#include <sys/stat.h>

#include <locale.h>
#include <cerrno>
#include <clocale>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <system_error>

#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace fsys = std::filesystem;

namespace {

constexpr std::uint32_t k_dir_mode = 0755;
constexpr std::size_t k_read_block = std::size_t{1} << 20;

std::string quoted(const fsys::path& p) { return "\"" + p.string() + "\""; }

// Collects entries into a path-sorted map, refusing two different things at one path.
class EntryMap {
 public:
  Status add(LayerEntry entry, const std::string& origin) {
    if (auto s = refuse_under_symlink(entry.path, origin); !s) return s;
    if (auto s = add_parents(entry.path, origin); !s) return s;
    return put(std::move(entry), origin);
  }

  std::vector<LayerEntry> take() {
    std::vector<LayerEntry> out;
    out.reserve(m_entries.size());
    for (auto& [path, entry] : m_entries) out.push_back(std::move(entry.entry));
    return out;
  }

 private:
  struct Placed {
    LayerEntry entry;
    std::string origin;
  };

  // An entry whose path passes through a symlink recorded earlier lets an unpacker that follows the
  // link write outside the place the image means: refused, naming both.
  Status refuse_under_symlink(const std::string& path, const std::string& origin) const {
    for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      const auto it = m_entries.find(path.substr(0, slash));
      if (it == m_entries.end() || it->second.entry.type != LayerEntry::Type::symlink) continue;
      return fail_input("/" + path + " (" + origin + ") passes through the symlink /" + it->first + " -> " +
                        it->second.entry.link_target + " (" + it->second.origin + ")");
    }
    return {};
  }

  Status add_parents(const std::string& path, const std::string& origin) {
    for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      LayerEntry dir;
      dir.type = LayerEntry::Type::directory;
      dir.path = path.substr(0, slash);
      dir.mode = k_dir_mode;
      if (auto s = put(std::move(dir), origin); !s) return s;
    }
    return {};
  }

  Status put(LayerEntry entry, const std::string& origin) {
    auto [it, inserted] = m_entries.try_emplace(entry.path, Placed{entry, origin});
    if (inserted) return {};
    const LayerEntry& existing = it->second.entry;
    const bool both_dirs = existing.type == LayerEntry::Type::directory && entry.type == LayerEntry::Type::directory;
    const bool same_file = existing.type == entry.type && existing.source == entry.source &&
                           existing.link_target == entry.link_target && existing.mode == entry.mode &&
                           existing.content == entry.content;
    if (both_dirs || same_file) return {};
    const auto is = [](const LayerEntry& e, LayerEntry::Type type) { return e.type == type; };
    if ((is(existing, LayerEntry::Type::directory) && is(entry, LayerEntry::Type::symlink)) ||
        (is(existing, LayerEntry::Type::symlink) && is(entry, LayerEntry::Type::directory))) {
      const bool link_first = is(existing, LayerEntry::Type::symlink);
      const LayerEntry& link = link_first ? existing : entry;
      return fail_input("/" + entry.path + " is a directory for " + (link_first ? origin : it->second.origin) +
                        " and the symlink -> " + link.link_target + " for " +
                        (link_first ? it->second.origin : origin) + ": an entry under a symlink is refused");
    }
    return fail_input("/" + entry.path + " is given twice: by " + it->second.origin + " and by " + origin);
  }

  std::map<std::string, Placed> m_entries;
};

Status collect_tree(const LayerInput& input, const std::string& root, EntryMap& entries) {
  const std::string origin = "--dir " + input.source.string();
  struct stat st {};
  if (::lstat(input.source.c_str(), &st) != 0) {
    return fail_input("--dir " + quoted(input.source) + ": " + fs::errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) return fail_input("--dir " + quoted(input.source) + ": not a directory");
  if (!root.empty()) {
    if (auto s = entries.add({LayerEntry::Type::directory, root, {}, {}, k_dir_mode, 0, {}}, origin); !s) return s;
  }
  std::error_code ec;
  fsys::recursive_directory_iterator it(input.source, fsys::directory_options::none, ec);
  if (ec) return fail_input("--dir " + quoted(input.source) + ": " + ec.message());
  for (; it != fsys::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return fail_input("--dir " + quoted(input.source) + ": " + ec.message());
    const fsys::path& source = it->path();
    const std::string relative = source.lexically_relative(input.source).generic_string();
    const std::string path = root.empty() ? relative : root + "/" + relative;
    if (::lstat(source.c_str(), &st) != 0) return fail_input(quoted(source) + ": " + fs::errno_text(errno));
    LayerEntry entry;
    entry.path = path;
    if (S_ISDIR(st.st_mode)) {
      entry.type = LayerEntry::Type::directory;
      entry.mode = k_dir_mode;
    } else if (S_ISREG(st.st_mode)) {
      entry.type = LayerEntry::Type::file;
      entry.source = source;
      entry.mode = normalised_file_mode(st.st_mode);
      entry.size = st.st_size;
    } else if (S_ISLNK(st.st_mode)) {
      entry.type = LayerEntry::Type::symlink;
      entry.mode = 0777;
      std::error_code link_ec;
      entry.link_target = fsys::read_symlink(source, link_ec).string();
      // Recorded as the link it is, wherever it points (as tar and COPY do): it is never followed here,
      // and in the image it resolves within the image's root.
      if (link_ec) return fail_input(quoted(source) + ": reading symlink: " + link_ec.message());
    } else {
      return fail_input(quoted(source) + ": not a regular file, directory or symlink");
    }
    if (auto s = entries.add(std::move(entry), origin); !s) return s;
  }
  return {};
}

Status collect_file(const LayerInput& input, const std::string& path, EntryMap& entries) {
  const std::string origin = "--file " + input.source.string();
  struct stat st {};
  if (::stat(input.source.c_str(), &st) != 0) {
    return fail_input("--file " + quoted(input.source) + ": " + fs::errno_text(errno));
  }
  if (S_ISDIR(st.st_mode)) return fail_input("--file " + quoted(input.source) + ": is a directory (use --dir)");
  if (!S_ISREG(st.st_mode)) return fail_input("--file " + quoted(input.source) + ": not a regular file");
  if (::access(input.source.c_str(), R_OK) != 0) {
    return fail_input("--file " + quoted(input.source) + ": " + fs::errno_text(errno));
  }
  std::error_code ec;
  // A named file may be a symlink (libfoo.so -> libfoo.so.1): take what it names, then read that
  // without following anything further.
  fsys::path real = fsys::canonical(input.source, ec);
  if (ec) return fail_input("--file " + quoted(input.source) + ": " + ec.message());
  return entries.add({LayerEntry::Type::file, path, real, {}, normalised_file_mode(st.st_mode), st.st_size, {}},
                     origin);
}

// What libarchive writes, on its way to `out`. Headers, padding and small files' bytes are gathered
// and passed on in pieces of up to a block; a large file's bytes are passed on as the block they were
// read into (libarchive, unblocked, hands on the very pointer it was given), so that no stage copies them.
class TarContext {
 public:
  explicit TarContext(ByteSink& out) : m_out(out) { m_gathered.reserve(k_gathered); }

  // The block being handed to libarchive now, whose bytes may come back through write().
  void reading(const SharedBytes* block) { m_reading = block; }

  Status write(const std::byte* data, std::size_t length) {
    if (m_reading != nullptr && length >= k_shared_at_least && within(data, length, m_reading->bytes)) {
      if (auto s = flush(); !s) return s;
      return m_out.write_shared(SharedBytes{m_reading->owner, std::span(data, length)});
    }
    m_gathered.insert(m_gathered.end(), data, data + length);
    if (m_gathered.size() >= k_gathered) return flush();
    return {};
  }

  Status flush() {
    if (m_gathered.empty()) return {};
    auto s = m_out.write(m_gathered);
    m_gathered.clear();
    return s;
  }

  Status status;  // the first failure of `out`, which libarchive only sees as a failed write

 private:
  static constexpr std::size_t k_gathered = std::size_t{1} << 20;
  static constexpr std::size_t k_shared_at_least = std::size_t{64} << 10;

  static bool within(const std::byte* data, std::size_t length, std::span<const std::byte> block) {
    const auto at = reinterpret_cast<std::uintptr_t>(data);
    const auto begin = reinterpret_cast<std::uintptr_t>(block.data());
    return at >= begin && at + length <= begin + block.size();
  }

  ByteSink& m_out;
  const SharedBytes* m_reading = nullptr;
  std::vector<std::byte> m_gathered;
};

la_ssize_t tar_write(archive*, void* data, const void* buffer, size_t length) {
  auto* ctx = static_cast<TarContext*>(data);
  if (auto s = ctx->write(static_cast<const std::byte*>(buffer), length); !s) {
    ctx->status = s;
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

// libarchive converts names through the thread's locale. Under C.UTF-8 for the duration of a tar,
// non-ASCII names become standard pax `path` records, and the bytes never depend on the user's LANG.
class Utf8Locale {
 public:
  Utf8Locale() : m_locale(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr))) {
    if (m_locale != nullptr) m_previous = uselocale(m_locale);
  }
  ~Utf8Locale() {
    if (m_locale == nullptr) return;
    uselocale(m_previous);
    freelocale(m_locale);
  }
  Utf8Locale(const Utf8Locale&) = delete;
  Utf8Locale& operator=(const Utf8Locale&) = delete;

 private:
  locale_t m_locale;
  locale_t m_previous = nullptr;
};

// How many blocks a layer's reader may have out at once: enough for the stages after it (the tar's
// hash, the blob file, the file's checksums) to each run at their own pace, few enough to bound memory.
constexpr std::size_t k_blocks = 16;

// Where a file's bytes go besides the tar: its checksums, when they are wanted.
struct FileReading {
  BlockPool& pool;
  FileHashing* hashing = nullptr;  // null: the file's checksums are not wanted
};

Status write_data(archive* a, const void* data, std::size_t size, TarContext& ctx) {
  if (archive_write_data(a, data, size) < 0) {
    if (!ctx.status) return ctx.status;
    return fail_input("writing layer: " + std::string(archive_error_string(a)));
  }
  return {};
}

Status copy_file_data(archive* a, const LayerEntry& entry, FileReading& reading, TarContext& ctx) {
  if (reading.hashing != nullptr) reading.hashing->begin(entry.path, entry.size);
  if (entry.source.empty()) {
    if (reading.hashing != nullptr) {
      reading.hashing->add(SharedBytes{nullptr, std::as_bytes(std::span(entry.content.data(), entry.content.size()))});
      reading.hashing->end();
    }
    return write_data(a, entry.content.data(), entry.content.size(), ctx);
  }
  auto fd = fs::open_read(entry.source, fs::FollowSymlinks::no);
  if (!fd) return fail(fd.error());
  std::int64_t remaining = entry.size;
  while (remaining > 0) {
    auto block = reading.pool.take();
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::int64_t>(remaining, static_cast<std::int64_t>(block->size())));
    auto n = fs::read_some(fd->get(), std::span(block->data(), want), entry.source);
    if (!n) return fail(n.error());
    if (*n == 0) return fail_input(quoted(entry.source) + ": shrank while being recorded");
    const SharedBytes bytes{block, std::span<const std::byte>(block->data(), *n)};
    block.reset();  // `bytes` holds it now; the pool has it back once every stage is done with it
    if (reading.hashing != nullptr) reading.hashing->add(bytes);
    ctx.reading(&bytes);
    auto s = write_data(a, bytes.bytes.data(), bytes.bytes.size(), ctx);
    ctx.reading(nullptr);
    if (!s) return s;
    remaining -= static_cast<std::int64_t>(*n);
  }
  std::byte probe[1];
  auto n = fs::read_some(fd->get(), probe, entry.source);
  if (!n) return fail(n.error());
  if (*n != 0) return fail_input(quoted(entry.source) + ": grew while being recorded");
  if (reading.hashing != nullptr) reading.hashing->end();
  return {};
}

}  // namespace

LayerEntry generated_file(std::string path, std::string text, std::uint32_t mode) {
  LayerEntry entry{LayerEntry::Type::file, std::move(path), {}, {}, mode, static_cast<std::int64_t>(text.size()), {}};
  entry.content = std::move(text);
  return entry;
}

Result<std::string> normalise_image_path(std::string_view path, std::string_view what) {
  if (path.empty() || path.front() != '/') {
    return fail_input(std::string(what) + ": destination \"" + std::string(path) + "\" must be an absolute path");
  }
  auto normal = normalise_path(path);
  if (!normal)
    return fail_input(std::string(what) + ": destination \"" + std::string(path) + "\" must not contain \"..\"");
  return std::move(*normal);
}

Result<LayerInput> parse_layer_input(LayerInput::Kind kind, std::string_view spec) {
  LayerInput input;
  input.kind = kind;
  const auto eq = spec.find('=');
  input.source = std::string(spec.substr(0, eq));
  const char* flag = kind == LayerInput::Kind::file ? "--file" : "--dir";
  if (input.source.empty()) return fail_input(std::string(flag) + " \"" + std::string(spec) + "\": source is empty");
  if (eq != std::string_view::npos) {
    input.destination = std::string(spec.substr(eq + 1));
    auto normal = normalise_image_path(input.destination, std::string(flag) + " " + std::string(spec));
    if (!normal) return fail(normal.error());
    if (kind == LayerInput::Kind::file && input.destination.ends_with('/')) {
      // A directory, as cp and Dockerfile COPY read a destination ending in "/": the file goes inside.
      const std::string file_name = input.source.filename().string();
      if (file_name.empty() || file_name == "." || file_name == "..") {
        return fail_input("--file \"" + std::string(spec) + "\": the source names no file to put inside " +
                          input.destination);
      }
      input.destination += file_name;
    } else if (kind == LayerInput::Kind::file && normal->empty()) {
      return fail_input("--file \"" + std::string(spec) +
                        "\": destination is the image root; write =/ to put the file in it");
    }
  } else if (kind == LayerInput::Kind::file) {
    input.destination = "/usr/local/bin/" + input.source.filename().string();
  } else {
    input.destination = "/";
  }
  return input;
}

Result<std::vector<LayerEntry>> collect_entries(const std::vector<LayerInput>& inputs) {
  EntryMap entries;
  for (const auto& input : inputs) {
    const char* flag = input.kind == LayerInput::Kind::file ? "--file" : "--dir";
    auto path = normalise_image_path(input.destination, std::string(flag) + " " + input.source.string());
    if (!path) return fail(path.error());
    Status s = input.kind == LayerInput::Kind::file ? collect_file(input, *path, entries)
                                                    : collect_tree(input, *path, entries);
    if (!s) return fail(s.error());
  }
  auto out = entries.take();
  if (out.empty()) return fail_input("nothing to record: give at least one --file or --dir");
  return out;
}

Result<std::vector<LayerEntry>> merge_entries(std::vector<LayerEntry> entries, std::vector<LayerEntry> extra,
                                              std::string_view origin) {
  if (extra.empty()) return entries;
  EntryMap map;
  for (auto& e : entries) {
    if (auto s = map.add(std::move(e), "the inputs"); !s) return fail(s.error());
  }
  for (auto& e : extra) {
    if (auto s = map.add(std::move(e), std::string(origin)); !s) return fail(s.error());
  }
  return map.take();
}

Status write_tar(const std::vector<LayerEntry>& entries, const TarOptions& options, ByteSink& out) {
  const Utf8Locale utf8_names;
  TarContext ctx(out);
  tar::Writer a(archive_write_new());
  // pax_restricted is ustar unless a name or size needs an extension, and never writes atime/ctime.
  archive_write_set_format_pax_restricted(a.get());
  // Unblocked: libarchive hands every write on at once, a file's block as the pointer it was given
  // (TarContext gathers the small ones). The stream ends where the tar ends, with no padding after the
  // end-of-archive blocks, as it did in blocks of 1 MiB with a last block of 1 byte.
  archive_write_set_bytes_per_block(a.get(), 0);
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &ctx, nullptr, tar_write, nullptr, nullptr) != ARCHIVE_OK) {
    return fail_input("starting layer: " + std::string(archive_error_string(a.get())));
  }
  BlockPool pool(k_blocks, k_read_block);
  std::optional<FileHashing> hashing;
  if (options.checksums != nullptr) hashing.emplace(*options.checksums);
  tar::Entry e(archive_entry_new());
  for (const auto& entry : entries) {
    archive_entry_clear(e.get());
    switch (entry.type) {
      case LayerEntry::Type::directory:
        archive_entry_copy_pathname(e.get(), (entry.path + "/").c_str());
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        break;
      case LayerEntry::Type::file:
        archive_entry_copy_pathname(e.get(), entry.path.c_str());
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_size(e.get(), entry.size);
        break;
      case LayerEntry::Type::symlink:
        archive_entry_copy_pathname(e.get(), entry.path.c_str());
        archive_entry_set_filetype(e.get(), AE_IFLNK);
        archive_entry_copy_symlink(e.get(), entry.link_target.c_str());
        break;
    }
    archive_entry_set_perm(e.get(), static_cast<mode_t>(entry.mode));
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), options.mtime, 0);
    if (archive_write_header(a.get(), e.get()) < ARCHIVE_WARN) {
      if (!ctx.status) return fail(ctx.status.error());
      return fail_input("writing layer entry /" + entry.path + ": " + archive_error_string(a.get()));
    }
    if (entry.type == LayerEntry::Type::file) {
      const bool wanted = hashing && (!options.checksum_wanted || options.checksum_wanted(entry));
      FileReading reading{pool, wanted ? &*hashing : nullptr};
      if (auto s = copy_file_data(a.get(), entry, reading, ctx); !s) return fail(s.error());
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    if (!ctx.status) return fail(ctx.status.error());
    return fail_input("finishing layer: " + std::string(archive_error_string(a.get())));
  }
  if (auto s = ctx.flush(); !s) return fail(s.error());
  if (hashing) hashing->finish();
  return out.finish();
}

}  // namespace arec
