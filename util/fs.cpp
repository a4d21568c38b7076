#include "util/fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

namespace arec::fs {

namespace {

Error io_error(std::string_view doing, const Path& path, int error) {
  return Error::input(std::string(doing) + " " + path.string() + ": " + errno_text(error));
}

// Unique enough for temporaries of concurrent processes in one directory.
std::string random_suffix() {
  thread_local std::mt19937_64 generator{std::random_device{}() ^ static_cast<std::uint64_t>(getpid())};
  static constexpr char k_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (int i = 0; i < 12; ++i) out.push_back(k_chars[generator() % (sizeof(k_chars) - 1)]);
  return out;
}

}  // namespace

std::string errno_text(int error) { return std::strerror(error); }

namespace {
std::atomic<Sync> g_sync{Sync::off};
}  // namespace

void set_sync(Sync sync) { g_sync.store(sync, std::memory_order_relaxed); }

bool syncing() { return g_sync.load(std::memory_order_relaxed) == Sync::on; }

Fd::~Fd() {
  if (m_fd >= 0) ::close(m_fd);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = other.release();
  }
  return *this;
}

Result<Fd> open_read(const Path& path, FollowSymlinks follow) {
  int flags = O_RDONLY | O_CLOEXEC;
  if (follow == FollowSymlinks::no) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return fail(io_error("opening", path, errno));
  return Fd(fd);
}

std::string file_kind(unsigned mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

Result<Fd> open_own_file(const Path& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) {
      return fail_input(path.string() +
                        ": a symbolic link where arec keeps a file it wrote; arec reads none through a link");
    }
    return fail(io_error("opening", path, errno));
  }
  Fd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(io_error("reading the status of", path, errno));
  if (!S_ISREG(st.st_mode)) {
    return fail_input(path.string() + ": " + file_kind(st.st_mode) +
                      " where arec keeps a file it wrote; arec reads only regular files");
  }
  // Reads of a regular file never block; clear the flag so that nothing downstream sees EAGAIN.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return owned;
}

Result<std::size_t> read_some(int fd, std::span<std::byte> buffer, const Path& path) {
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) return fail(io_error("reading", path, errno));
  }
}

Status write_all(int fd, std::span<const std::byte> data, const Path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(io_error("writing", path, errno));
    }
    data = data.subspan(static_cast<std::size_t>(n));
  }
  return {};
}

Status write_all(int fd, std::string_view data, const Path& path) {
  return write_all(fd, std::as_bytes(std::span(data.data(), data.size())), path);
}

Result<std::string> read_all(int fd, const Path& what, std::size_t limit) {
  std::string out;
  std::vector<std::byte> buffer(std::size_t{1} << 16);
  for (;;) {
    auto n = read_some(fd, buffer, what);
    if (!n) return fail(n.error());
    if (*n == 0) break;
    if (*n > limit - out.size()) {
      return fail_input(what.string() + ": larger than " + std::to_string(limit >> 20) + " MiB, the most arec reads");
    }
    out.append(reinterpret_cast<const char*>(buffer.data()), *n);
  }
  return out;
}

Result<std::string> read_file(const Path& path, std::size_t limit) {
  auto fd = open_read(path);
  if (!fd) return fail(fd.error());
  return read_all(fd->get(), path, limit);
}

Status make_directories(const Path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return fail_input("creating directory " + path.string() + ": " + ec.message());
  return {};
}

Path directory_of(const Path& file) { return file.has_parent_path() ? file.parent_path() : Path("."); }

Status fsync_directory(const Path& path) {
  if (!syncing()) return {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(io_error("opening directory", path, errno));
  Fd owned(fd);
  if (::fsync(fd) != 0 && errno != EINVAL) return fail(io_error("syncing directory", path, errno));
  return {};
}

Result<AtomicFile> AtomicFile::create(const Path& dir, Path target) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    Path temp = dir / (".tmp-" + random_suffix());
    // 0666 and the umask decide the mode, as for any file a user's tool creates.
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::flock(fd, LOCK_EX | LOCK_NB);  // a new file: nobody else can hold it
      return AtomicFile(Fd(fd), std::move(temp), std::move(target));
    }
    if (errno != EEXIST) return fail(io_error("creating a temporary file in", dir, errno));
  }
  return fail_input("creating a temporary file in " + dir.string() + ": no free name");
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : m_fd(std::move(other.m_fd)),
      m_temp(std::move(other.m_temp)),
      m_target(std::move(other.m_target)),
      m_written(other.m_written),
      m_started(other.m_started),
      m_committed(other.m_committed) {
  other.m_committed = true;
}

AtomicFile::~AtomicFile() {
  if (!m_committed && !m_temp.empty()) ::unlink(m_temp.c_str());
}

Status AtomicFile::write(std::span<const std::byte> data) {
  if (auto s = write_all(m_fd.get(), data, m_temp); !s) return s;
  m_written += static_cast<off_t>(data.size());
  // When syncing, stream large files to the disk as they are written: start writing each window at
  // once and wait for the one before. commit()'s fsync then has little left to wait for, and dirty pages stay few.
  constexpr off_t k_window = off_t{8} << 20;
  while (syncing() && m_written - m_started >= k_window) {
    ::sync_file_range(m_fd.get(), m_started, k_window, SYNC_FILE_RANGE_WRITE);
    if (m_started >= k_window) {
      ::sync_file_range(m_fd.get(), m_started - k_window, k_window,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    }
    m_started += k_window;
  }
  return {};
}

Status AtomicFile::write(std::string_view data) { return write(std::as_bytes(std::span(data.data(), data.size()))); }

Status AtomicFile::commit() {
  if (syncing() && ::fsync(m_fd.get()) != 0) return fail(io_error("syncing", m_temp, errno));
  // Renamed while still open, so the temporary stays locked (in use) until it has its final name.
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
    return fail(io_error("renaming into place", m_target, errno));
  }
  m_committed = true;
  m_fd = Fd();
  // A target named without a directory ("deploy.yaml") is in the working directory.
  return fsync_directory(directory_of(m_target));
}

Status write_file_atomic(const Path& temp_dir, const Path& target, std::string_view content) {
  auto file = AtomicFile::create(temp_dir, target);
  if (!file) return fail(file.error());
  if (auto s = file->write(content); !s) return s;
  return file->commit();
}

Result<FileLock> FileLock::acquire(const Path& path, std::chrono::milliseconds timeout, LockMode mode) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return fail(io_error("opening lock", path, errno));
  Fd owned(fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (::flock(fd, (mode == LockMode::shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return FileLock(std::move(owned));
    if (errno != EWOULDBLOCK && errno != EINTR) return fail(io_error("locking", path, errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      // Tenths of a second: a short AREC_LOCK_TIMEOUT must not read "after 0 s".
      const auto tenths = (timeout.count() + 50) / 100;
      return fail_input("locking " + path.string() + ": still held by another process after " +
                        std::to_string(tenths / 10) + (tenths % 10 != 0 ? "." + std::to_string(tenths % 10) : "") +
                        " s (AREC_LOCK_TIMEOUT); if no arec is running, something else holds it (see `fuser " +
                        path.string() + "`)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

namespace {

// Whether the file `name` in the directory `dir_fd` is an abandoned temporary; opened without
// following a link and without blocking (a FIFO), and only a regular file qualifies.
bool is_abandoned_at(int dir_fd, const char* name) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  Fd owned(fd);
  struct stat st {};
  // A writer locks its temporary right after creating it; the age covers that instant.
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || std::time(nullptr) - st.st_mtime < 2) return false;
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

std::optional<std::int64_t> free_bytes(const Path& path) {
  struct statvfs st {};
  if (::statvfs(path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::int64_t>(st.f_bavail) * static_cast<std::int64_t>(st.f_frsize);
}

bool is_abandoned_temporary(const Path& path) { return is_abandoned_at(AT_FDCWD, path.c_str()); }

Result<TemporaryScan> scan_temporaries(const Path& dir, RemoveAbandoned remove) {
  TemporaryScan scan;
  // One descriptor, opened without following a link: every name below is looked up in this directory,
  // so a link planted in its place, or swapped in later, never sends a removal elsewhere.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    if (errno == ENOENT) return scan;
    if (errno == ELOOP || errno == ENOTDIR) {
      struct stat st {};
      const std::string kind = ::lstat(dir.c_str(), &st) == 0 ? file_kind(st.st_mode) : "not a directory";
      return fail_input(dir.string() + ": " + kind +
                        " where the store keeps its temporary files; arec follows no link it did not make (remove it)");
    }
    return fail(io_error("opening directory", dir, errno));
  }
  Fd owned(dir_fd);
  DIR* listing = ::fdopendir(::dup(dir_fd));
  if (listing == nullptr) return fail(io_error("listing", dir, errno));
  while (const dirent* entry = ::readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    if (!S_ISREG(st.st_mode)) {
      scan.foreign.push_back((dir / name).string() + ": " + file_kind(st.st_mode) +
                             ", not a temporary file arec writes");
      continue;
    }
    if (!name.starts_with(".tmp-")) {
      scan.foreign.push_back((dir / name).string() + ": not a temporary file arec writes (they are named .tmp-*)");
      continue;
    }
    if (!is_abandoned_at(dir_fd, entry->d_name)) continue;
    scan.abandoned.push_back(dir / name);
    if (remove == RemoveAbandoned::yes && ::unlinkat(dir_fd, entry->d_name, 0) == 0) ++scan.removed;
  }
  ::closedir(listing);
  return scan;
}

}  // namespace arec::fs
