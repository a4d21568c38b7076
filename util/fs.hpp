// The file-system calls arec makes, wrapped once: descriptors that close themselves, atomic writes,
// and the store lock. Errors name the path and what was being done.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <cstddef>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace arec::fs {

using Path = std::filesystem::path;

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : m_fd(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;

  int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

 private:
  int m_fd = -1;
};

enum class FollowSymlinks { yes, no };

Result<Fd> open_read(const Path& path, FollowSymlinks follow = FollowSymlinks::yes);
// Opens a file arec wrote itself (a blob, a document of the store) for reading: never through a
// symbolic link, never blocking on a FIFO, and only a regular file. Anything else was planted, and the
// error says what it is.
Result<Fd> open_own_file(const Path& path);
// What a non-regular file is, for messages: "a symbolic link", "a FIFO", "a directory", ...
std::string file_kind(unsigned mode);

// Reads up to buffer.size() bytes; returns the count, 0 at end of file. Retries on EINTR.
Result<std::size_t> read_some(int fd, std::span<std::byte> buffer, const Path& path);
Status write_all(int fd, std::span<const std::byte> data, const Path& path);
Status write_all(int fd, std::string_view data, const Path& path);

// What read_file reads at most unless told otherwise: far above any document arec reads whole, so that
// a device or an endless FIFO given as a file ends in an error, not in memory running out.
inline constexpr std::size_t k_max_read_whole = std::size_t{1} << 30;

// Everything an open descriptor gives until its end, at most `limit` bytes; past it, an error naming
// `what` and the limit. Whole small files (JSON documents, templates); large data is always streamed.
Result<std::string> read_all(int fd, const Path& what, std::size_t limit);
Result<std::string> read_file(const Path& path, std::size_t limit = k_max_read_whole);

Status make_directories(const Path& path);

// Whether each file is synced to the disk before it is renamed into place: off unless the command line
// turns it on (AREC_SYNC=on). By default arec leaves writeback to the kernel, as the compiler, the
// linker, ninja and ccache around it do. A killed process never leaves a torn store either way (renames
// are atomic); a power loss may leave a blob cut short, which `arec check` reports and the next
// recording of it replaces. Set once, before any file is written: every AtomicFile of the process
// consults it, and passing it through every writer would touch every signature that writes a file.
enum class Sync { off, on };
void set_sync(Sync sync);
bool syncing();
Status fsync_directory(const Path& path);

// The directory a file is in: its parent, or "." for a bare name.
Path directory_of(const Path& file);

// A temporary file in `dir` that becomes `target` only on commit(): written, renamed (both file and
// directory fsynced first when syncing()). Dropped without commit, it is removed. So a reader sees the
// old file or the new one, never a half-written one, even if the process is killed. While it is
// written, its writer holds a lock on it, so a checker can tell a temporary in use from one a killed
// process left.
class AtomicFile {
 public:
  static Result<AtomicFile> create(const Path& dir, Path target);
  ~AtomicFile();
  AtomicFile(AtomicFile&&) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  Status write(std::span<const std::byte> data);
  Status write(std::string_view data);
  // Sets where commit() renames to, for content whose name is known only at the end (blobs).
  void retarget(Path target) { m_target = std::move(target); }
  Status commit();

 private:
  AtomicFile(Fd fd, Path temp, Path target)
      : m_fd(std::move(fd)), m_temp(std::move(temp)), m_target(std::move(target)) {}

  Fd m_fd;
  Path m_temp;
  Path m_target;
  off_t m_written = 0;
  off_t m_started = 0;  // bytes whose write-back to the disk has been started
  bool m_committed = false;
};

// Replaces `target` with `content` atomically, staging in `temp_dir` (same file system).
Status write_file_atomic(const Path& temp_dir, const Path& target, std::string_view content);

enum class LockMode { shared, exclusive };

// An advisory lock (flock) on a file. The kernel drops it when the holder dies, so a killed process
// never leaves the store locked. Waiting is bounded.
class FileLock {
 public:
  static Result<FileLock> acquire(const Path& path, std::chrono::milliseconds timeout,
                                  LockMode mode = LockMode::exclusive);
  FileLock(FileLock&&) noexcept = default;
  FileLock& operator=(FileLock&&) noexcept = default;
  ~FileLock() = default;

 private:
  explicit FileLock(Fd fd) : m_fd(std::move(fd)) {}
  Fd m_fd;
};

// True for a temporary file of an AtomicFile whose writer is gone: writers hold a lock on their
// temporary until it is committed or removed, and the kernel drops it when they die. A temporary
// younger than 2 s is never called abandoned (its writer may be between creating and locking it).
bool is_abandoned_temporary(const Path& path);

// What a directory of temporaries holds, read through one descriptor opened without following a link:
// the abandoned temporaries (see is_abandoned_temporary), and what cannot be a temporary arec wrote
// (a link, a FIFO, a device, a directory, a file of another name), which is never opened or removed.
struct TemporaryScan {
  std::vector<Path> abandoned;
  std::vector<std::string> foreign;  // "PATH: a symbolic link", ...
  std::size_t removed = 0;
};
enum class RemoveAbandoned { no, yes };
// Fails (naming it) when `dir` is a symbolic link or not a directory; nothing when it does not exist.
Result<TemporaryScan> scan_temporaries(const Path& dir, RemoveAbandoned remove);

// The bytes an unprivileged writer may still put on the file system holding `path`; nothing when unknown.
std::optional<std::int64_t> free_bytes(const Path& path);

// A short description of errno for messages ("No such file or directory").
std::string errno_text(int error);

}  // namespace arec::fs
