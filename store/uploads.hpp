// Upload sessions a push keeps open at a registry, one note per blob and repository, so that a push
// killed halfway through a large blob continues it the next time instead of sending it all again
// (registry-client/push.cpp decides what to do with them; this only keeps them).
//
//   arec/uploads/<blob hex>-<16 hex of the repository's SHA-256>
//
// A note holds the repository, the blob, the session's path and query at the registry (never its
// scheme or host: no address is kept across runs, rule 3) and the bytes the registry acknowledged. It
// is only a hint: the registry is asked what the session holds before anything more is sent, and a note
// that cannot be read is no note. Nor is one whose path is not an upload session of its own repository
// (is_upload_session_path): anyone who can write the store can write a note, and a push sends GET and
// DELETE to the noted path with the pusher's credentials. The process uploading a blob holds its note
// (flock) for the whole upload, so two pushes from one store never send into one session.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "oci/digest.hpp"
#include "util/fs.hpp"

namespace arec {

class Store;

struct UploadSession {
  std::string path;         // "/v2/<repository>/blobs/uploads/<id>[?<query>]", relative to the registry
  std::int64_t offset = 0;  // bytes the registry acknowledged
};

// Whether `path` names an upload session of `repository` and nothing else:
// "/v2/<repository>/blobs/uploads/<id>[?<query>]", where <id> is one path segment (not "." or "..",
// no percent-encoded dot, slash or backslash), the query names no parameter that makes a request
// about another blob or repository (digest, mount, from, ns), and nothing is a control character,
// a space, a fragment or outside ASCII.
bool is_upload_session_path(std::string_view path, std::string_view repository);

class UploadNote {
 public:
  // The note of `blob` in `repository`, held until this is destroyed; nothing when another process holds
  // it (it is uploading the same blob) or the store cannot keep one: the upload then goes without.
  static std::optional<UploadNote> claim(Store& store, std::string_view repository, const Digest& blob);

  UploadNote(UploadNote&&) noexcept = default;
  UploadNote& operator=(UploadNote&&) noexcept = default;

  // The session noted for this blob and repository, if any.
  std::optional<UploadSession> session() const;
  // Notes `session` in place of what was noted (a session that is not one of this repository's is not
  // noted, and the note is cleared). Best effort: a note not written costs a resume.
  void save(const UploadSession& session);
  // The upload ended (sent, cancelled, or found gone): the note is removed.
  void clear();

 private:
  UploadNote(fs::Path path, fs::Fd fd, std::string repository, std::string blob)
      : m_path(std::move(path)), m_fd(std::move(fd)), m_repository(std::move(repository)), m_blob(std::move(blob)) {}

  fs::Path m_path;
  fs::Fd m_fd;  // open and locked for as long as this lives
  std::string m_repository;
  std::string m_blob;  // the digest, as text
};

// How long a note may go untouched and still be worth keeping: distribution purges an upload session a
// week after it began (storage.maintenance.uploadpurging, 168h by default), and a push rewrites its note
// with every chunk the registry acknowledges.
inline constexpr std::chrono::hours k_upload_note_age{24 * 7};

// Removes the notes no push could go on from (arec gc): one untouched for longer than `age`, one that
// cannot be read or is no note (its path not an upload session of its repository, its file not named
// for its blob and repository), and one whose blob `kept` says the store no longer holds. A note a push holds is left
// alone. Returns how many were removed, or with `dry_run` would be.
std::size_t remove_stale_upload_notes(const Store& store, const std::function<bool(const Digest&)>& kept,
                                      std::chrono::seconds age, bool dry_run);

}  // namespace arec
