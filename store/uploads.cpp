#include "store/uploads.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "store/store.hpp"

namespace arec {

namespace {
// A note is a line of JSON; anything longer is no note of ours.
constexpr std::size_t k_max_note = 16 * 1024;

// A text field of a note, empty when the note has none (or not as text).
std::string field(const nlohmann::json& note, const char* key) {
  const auto it = note.is_object() ? note.find(key) : note.end();
  return it != note.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t offset_of(const nlohmann::json& note) {
  const auto it = note.is_object() ? note.find("offset") : note.end();
  return it != note.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}
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
  if (field(json, "repository") != m_repository || field(json, "blob") != m_blob) return std::nullopt;
  UploadSession session{field(json, "path"), offset_of(json)};
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

std::size_t remove_stale_upload_notes(const Store& store, const std::function<bool(const Digest&)>& kept,
                                      std::chrono::seconds age, bool dry_run) {
  std::size_t removed = 0;
  std::error_code ec;
  const auto now = std::chrono::system_clock::now();
  for (const auto& entry : std::filesystem::directory_iterator(store.uploads_dir(), ec)) {
    fs::Fd fd(::open(entry.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    // Held by a push that is uploading its blob now; anything but a file is not a note of ours.
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
      continue;
    const auto touched = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec));
    auto text = fs::read_all(fd.get(), entry.path(), k_max_note);
    const auto blob = Digest::parse(text ? field(nlohmann::json::parse(*text, nullptr, false), "blob") : "");
    if (blob && kept(*blob) && now - touched <= age) continue;
    ++removed;
    if (!dry_run) ::unlink(entry.path().c_str());
  }
  return removed;
}

}  // namespace arec
