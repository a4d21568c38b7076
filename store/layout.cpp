// The OCI image layout as arec reads it (Layout: its checks, blobs and documents) and the writing of
// one blob (BlobWriter).
#include "store/store.hpp"

#include <sys/stat.h>

#include <algorithm>

#include "store/store_internal.hpp"

namespace arec {

namespace {

// See Layout::has_blob.
bool is_complete_blob(const fs::Path& path, std::int64_t size) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == size;
}

}  // namespace

// ---- Layout ----------------------------------------------------------------------------------------

Result<Layout> Layout::open(const fs::Path& dir) {
  const auto layout_file = dir / "oci-layout";
  auto text = fs::read_file(layout_file);
  if (!text) return fail_input(dir.string() + ": not an OCI image layout (no readable oci-layout file)");
  if (auto s = check_oci_layout(*text, layout_file.string()); !s) return fail(s.error());
  return Layout(dir);
}

fs::Path Layout::blob_path(const Digest& digest) const {
  return m_dir / "blobs" / std::string(digest.algorithm_name()) / digest.hex();
}

bool Layout::has_blob(const Descriptor& descriptor) const {
  return is_complete_blob(blob_path(descriptor.digest), descriptor.size);
}

Result<fs::Fd> Layout::open_blob(const Digest& digest) const { return fs::open_own_file(blob_path(digest)); }

Status Layout::check_image_files(const Descriptor& manifest) const {
  const auto regular_or_absent = [this](const Digest& digest) -> Status {
    struct stat st {};
    const auto path = blob_path(digest);
    if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
    return fail_input(path.string() + ": " + fs::file_kind(st.st_mode) +
                      " where a blob must be; arec reads no blob through it (see arec check)");
  };
  if (auto s = regular_or_absent(manifest.digest); !s) return s;
  if (media_type::is_index(manifest.media_type)) {
    auto index = read_image_index(manifest);
    if (!index) return {};
    for (const auto& m : index->manifests) {
      if (auto s = check_image_files(m); !s) return s;
    }
    return {};
  }
  auto read = read_manifest(manifest);
  if (!read) return {};
  for (const auto& blob : blobs_of(*read)) {
    if (auto s = regular_or_absent(blob.digest); !s) return s;
  }
  return {};
}

Result<Index> Layout::read_index() const {
  const auto path = m_dir / "index.json";
  auto text = fs::read_file(path);
  if (!text) return fail(text.error());
  return parse_document<Index>(*text, path.string());
}

Result<std::string> Layout::read_blob(const Descriptor& descriptor) const {
  const auto path = blob_path(descriptor.digest);
  // A manifest or config: small, and read only up to one byte past its size.
  if (descriptor.size < 0 || descriptor.size > (std::int64_t{256} << 20)) {
    return fail_input(path.string() + ": a document of " + std::to_string(descriptor.size) +
                      " bytes is more than arec reads whole");
  }
  auto fd = open_blob(descriptor.digest);
  if (!fd) return fail(fd.error());
  std::string bytes(static_cast<std::size_t>(descriptor.size) + 1, '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    auto n = fs::read_some(fd->get(), std::as_writable_bytes(std::span(bytes.data() + got, bytes.size() - got)), path);
    if (!n) return fail(n.error());
    if (*n == 0) break;
    got += *n;
  }
  bytes.resize(got);
  if (static_cast<std::int64_t>(bytes.size()) != descriptor.size) {
    return fail_input(path.string() + ": size " +
                      (got > static_cast<std::size_t>(descriptor.size)
                           ? "larger than"
                           : std::to_string(bytes.size()) + " does not match") +
                      " the descriptor's " + std::to_string(descriptor.size));
  }
  if (digest_of(bytes, descriptor.digest.algorithm()) != descriptor.digest) {
    return fail_input(path.string() + ": content does not match its digest");
  }
  return bytes;
}

namespace {

// A small document of the layout, parsed under the name of its blob file.
template <typename Document>
Result<Document> read_document(const Layout& layout, const Descriptor& descriptor) {
  auto bytes = layout.read_blob(descriptor);
  if (!bytes) return fail(bytes.error());
  return parse_document<Document>(*bytes, layout.blob_path(descriptor.digest).string());
}

}  // namespace

Result<Manifest> Layout::read_manifest(const Descriptor& manifest) const {
  return read_document<Manifest>(*this, manifest);
}

Result<Index> Layout::read_image_index(const Descriptor& index) const { return read_document<Index>(*this, index); }

Result<ImageConfig> Layout::read_config(const Manifest& manifest) const {
  return read_document<ImageConfig>(*this, manifest.config);
}

bool Layout::holds_image(const Descriptor& manifest) const {
  auto read = read_manifest(manifest);
  return read && std::ranges::all_of(blobs_of(*read), [this](const Descriptor& d) { return has_blob(d); });
}

// ---- BlobWriter ------------------------------------------------------------------------------------

BlobWriter::BlobWriter(fs::AtomicFile file, fs::Path blobs_dir, Hashing hashing)
    : m_file(std::move(file)), m_blobs_dir(std::move(blobs_dir)) {
  if (hashing == Hashing::yes) m_hasher.emplace();
  m_buffer.reserve(k_write_buffer);
}

Status BlobWriter::write(std::span<const std::byte> data) {
  if (m_hasher) m_hasher->update(data);
  m_size += static_cast<std::int64_t>(data.size());
  if (m_buffer.size() + data.size() > k_write_buffer) {
    if (auto s = flush(); !s) return s;
  }
  if (data.size() >= k_write_buffer) return m_file.write(data);
  m_buffer.insert(m_buffer.end(), data.begin(), data.end());
  return {};
}

Status BlobWriter::flush() {
  if (m_buffer.empty()) return {};
  auto s = m_file.write(m_buffer);
  m_buffer.clear();
  return s;
}

Status BlobWriter::finish() { return flush(); }

Result<Descriptor> BlobWriter::commit(std::string_view media_type, std::optional<Digest> known) {
  if (auto s = flush(); !s) return fail(s.error());
  Descriptor d;
  d.media_type = std::string(media_type);
  d.size = m_size;
  d.digest = known ? *known : m_hasher->finish();
  const auto target = m_blobs_dir / std::string(d.digest.algorithm_name()) / d.digest.hex();
  // Already there: the temporary goes away.
  if (is_complete_blob(target, d.size)) return d;
  m_file.retarget(target);
  if (auto s = m_file.commit(); !s) return fail(s.error());
  return d;
}

}  // namespace arec
