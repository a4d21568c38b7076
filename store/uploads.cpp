#include "store/uploads.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "store/store.hpp"
#include "util/ascii.hpp"

namespace arec {

namespace {
// A note is a line of JSON; anything longer is no note of ours.
constexpr std::size_t k_max_note = 16 * 1024;

// A text field of a note, empty when the note has none (or not as text).
std::string field(const nlohmann::json& note, const char* key) {
  const auto it = note.is_object() ? note.find(key) : note.end();
  return it != note.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The note's offset; -1 when it has none, or one that is negative or does not fit (nlohmann reads a
// count past 2^63 as unsigned, which get<std::int64_t>() would wrap).
std::int64_t offset_of(const nlohmann::json& note) {
  const auto it = note.is_object() ? note.find("offset") : note.end();
  if (it == note.end() || !it->is_number_integer()) return -1;
  if (it->is_number_unsigned())
    return it->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? static_cast<std::int64_t>(it->get<std::uint64_t>())
               : -1;
  return it->get<std::int64_t>();
}

// The file a note of `blob` in `repository` is kept in: one per blob and repository.
std::string note_name(std::string_view repository, const Digest& blob) {
  return blob.hex() + "-" + digest_of(repository).hex().substr(0, 16);
}

// What a note says, when it is one: every field there, of its type, and its path a session of its
// repository.
struct NoteFields {
  std::string repository;
  Digest blob;
  UploadSession session;
};

std::optional<NoteFields> read_note(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  auto blob = Digest::parse(field(json, "blob"));
  NoteFields note{field(json, "repository"), blob ? *blob : Digest(), {field(json, "path"), offset_of(json)}};
  if (!blob || note.session.offset < 0 || !is_upload_session_path(note.session.path, note.repository))
    return std::nullopt;
  return note;
}

constexpr bool is_unreserved(char c) { return ascii::is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }

// The byte "%XY" at `text[at]` stands for, if it is one.
std::optional<char> percent_decoded(std::string_view text, std::size_t at) {
  if (at + 2 >= text.size() || !ascii::is_hex(text[at + 1]) || !ascii::is_hex(text[at + 2])) return std::nullopt;
  const auto nibble = [](char c) { return ascii::is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; };
  return static_cast<char>(nibble(text[at + 1]) * 16 + nibble(text[at + 2]));
}

// A printable ASCII character (no space, no control character, nothing above 0x7e).
constexpr bool is_printable(char c) { return c > 0x20 && c < 0x7f; }

// One path segment of a session's id: unreserved characters, "+", "=", and percent-encodings of
// printable characters that no server reads as a separator or a dot segment.
bool is_session_id(std::string_view id) {
  if (id.empty() || id == "." || id == "..") return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (is_unreserved(id[i]) || id[i] == '+' || id[i] == '=') continue;
    const auto decoded = id[i] == '%' ? percent_decoded(id, i) : std::nullopt;
    if (!decoded || !is_printable(*decoded) || std::string_view("./\\%?#").contains(*decoded)) return false;
    i += 2;
  }
  return true;
}

// The query of a session's URL (distribution's "_state=..."): printable, no fragment, and no parameter
// that a registry reads as naming another blob or repository.
bool is_session_query(std::string_view query) {
  for (std::size_t i = 0; i < query.size(); ++i) {
    const auto decoded = query[i] == '%' ? percent_decoded(query, i) : std::optional(query[i]);
    if (!decoded || !is_printable(*decoded) || query[i] == '#') return false;
  }
  std::size_t start = 0;
  while (start <= query.size()) {
    const std::size_t end = std::min(query.find('&', start), query.size());
    const std::string_view parameter = query.substr(start, end - start);
    const std::string name = ascii::lower(parameter.substr(0, parameter.find('=')));
    // A name spelled with percent-encodings is read as its decoded text by the registry: none is ours.
    if (name.contains('%')) return false;
    for (const char* steering : {"digest", "mount", "from", "ns"}) {
      if (name == steering) return false;
    }
    start = end + 1;
  }
  return true;
}

// A repository's name as the distribution spec allows it, segment by segment ([a-z0-9] and the
// separators "." "_" "-" within one): no empty, dot or dot-dot segment.
bool is_repository(std::string_view repository) {
  std::size_t start = 0;
  while (start <= repository.size()) {
    const std::size_t end = std::min(repository.find('/', start), repository.size());
    const std::string_view segment = repository.substr(start, end - start);
    if (segment.empty() || !ascii::is_lower_alnum(segment.front()) || !ascii::is_lower_alnum(segment.back()))
      return false;
    for (const char c : segment) {
      if (!ascii::is_lower_alnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
    start = end + 1;
  }
  return true;
}
}  // namespace

bool is_upload_session_path(std::string_view path, std::string_view repository) {
  const std::string prefix = "/v2/" + std::string(repository) + "/blobs/uploads/";
  if (!is_repository(repository) || !path.starts_with(prefix)) return false;
  const std::string_view rest = path.substr(prefix.size());
  const std::size_t mark = rest.find('?');
  return is_session_id(rest.substr(0, mark)) &&
         (mark == std::string_view::npos || is_session_query(rest.substr(mark + 1)));
}

std::optional<UploadNote> UploadNote::claim(Store& store, std::string_view repository, const Digest& blob) {
  const fs::Path dir = store.uploads_dir();
  if (!fs::make_directories(dir) || !Store::check_own_directories(store.dir())) return std::nullopt;
  const fs::Path path = dir / note_name(repository, blob);
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
  auto note = read_note(*text);
  if (!note || note->repository != m_repository || note->blob.str() != m_blob) return std::nullopt;
  return note->session;
}

void UploadNote::save(const UploadSession& session) {
  if (!is_upload_session_path(session.path, m_repository) || session.offset < 0) return clear();
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
    const auto note = text ? read_note(*text) : std::nullopt;
    const bool named_for_it = note && entry.path().filename() == note_name(note->repository, note->blob);
    if (named_for_it && kept(note->blob) && now - touched <= age) continue;
    ++removed;
    if (!dry_run) ::unlink(entry.path().c_str());
  }
  return removed;
}

}  // namespace arec
