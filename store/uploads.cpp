#include "store/uploads.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "store/store.hpp"

namespace arec {

namespace {
// A note is a line of JSON; anything longer is no note of ours.
constexpr std::size_t k_max_note = 16 * 1024;
}  // namespace

std::optional<UploadNote> UploadNote::claim(Store& store, std::string_view repository, const Digest& blob) {
  const fs::Path dir = store.uploads_dir();
  if (!fs::make_directories(dir) || !Store::check_own_directories(store.dir())) return std::nullopt;
  const fs::Path path = dir / (blob.hex() + "-" + digest_of(repository).hex().substr(0, 16));
  // Twice at most: the holder may remove the note between this open and this lock.
  for (int attempt = 0; attempt < 2; ++attempt) {
    fs::Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
    struct stat held {
    }, named{};
    if (::fstat(fd.get(), &held) != 0 || !S_ISREG(held.st_mode)) return std::nullopt;
    // A lock on a file no longer in the folder guards nothing: open the one there now.
    if (::lstat(path.c_str(), &named) != 0 || named.st_ino != held.st_ino || named.st_dev != held.st_dev) continue;
    return UploadNote(path, std::move(fd), std::string(repository), blob.str());
  }
  return std::nullopt;
}

std::optional<UploadSession> UploadNote::session() const {
  if (::lseek(m_fd.get(), 0, SEEK_SET) != 0) return std::nullopt;
  auto text = fs::read_all(m_fd.get(), m_path, k_max_note);
  if (!text || text->empty()) return std::nullopt;
  const auto json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object() || json.value("repository", "") != m_repository || json.value("blob", "") != m_blob)
    return std::nullopt;
  UploadSession session{json.value("path", ""), json.value("offset", std::int64_t{-1})};
  if (!session.path.starts_with("/v2/") || session.offset < 0) return std::nullopt;
  return session;
}

void UploadNote::save(const UploadSession& session) {
  const std::string text =
      nlohmann::json{{"repository", m_repository}, {"blob", m_blob}, {"path", session.path}, {"offset", session.offset}}
          .dump() +
      "\n";
  // In place, under the lock: a rename would put a file nobody holds where the lock was.
  if (::lseek(m_fd.get(), 0, SEEK_SET) != 0 || !fs::write_all(m_fd.get(), text, m_path)) return;
  (void)::ftruncate(m_fd.get(), static_cast<off_t>(text.size()));
}

void UploadNote::clear() {
  (void)::ftruncate(m_fd.get(), 0);
  ::unlink(m_path.c_str());
}

}  // namespace arec
