// The layers of a record: packed (or found packed before, by DiffID or by what their files are) and the
// base's copied.
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/image_internal.hpp"

namespace arec {

namespace {

// Counts what a pass writes and keeps none of it: the DiffID pre-pass needs only the tar's hash and size.
class CountingSink final : public ByteSink {
 public:
  Status write(std::span<const std::byte> data) override {
    m_size += static_cast<std::int64_t>(data.size());
    return {};
  }
  Status finish() override { return {}; }
  std::int64_t size() const { return m_size; }

 private:
  std::int64_t m_size = 0;
};

std::string oci_layer_type(const std::string& media_type) {
  // Docker's layer types name the same bytes; the manifest arec writes is pure OCI.
  if (media_type == media_type::k_docker_layer_gzip) return std::string(media_type::k_layer_gzip);
  if (media_type == media_type::k_docker_layer_tar) return std::string(media_type::k_layer_tar);
  return media_type;
}

}  // namespace

// Packs the layer. When the module/name was recorded before, a relink often produced identical bytes:
// a hash-only pass finds the DiffID first, and a layer already compressed for it is reused instead of
// being compressed again. New content pays one extra read of its inputs for that chance.
Result<Layer> pack_layer(const RecordRequest& request, const std::vector<LayerEntry>& entries, Store& store,
                         RecordedBefore recorded, SbomHashes& sbom) {
  TarOptions tar;
  tar.mtime = request.mtime;
  const Compression compression = request.compression;
  std::optional<Digest> expected;
  if (recorded == RecordedBefore::yes) {
    CountingSink counter;
    HashingSink hashing(counter);
    if (auto s = write_tar(entries, tar, hashing); !s) return fail(s.error());
    const Digest diff_id = hashing.digest();
    const Descriptor tar_blob{std::string(layer_media_type(compression)), diff_id, counter.size(), {}, {}, {}, {}};
    if (compression == Compression::none && store.has_blob(tar_blob)) return Layer{tar_blob, diff_id};
    if (auto cached = store.cached_layer(diff_id, compression)) return Layer{*cached, diff_id};
    expected = diff_id;
  }
  sbom.start();
  const TarOptions packing = sbom.tar_options(request.mtime);
  // Uncompressed, the blob is the tar and its digest the DiffID: hashed once, not twice.
  auto writer = store.begin_blob(compression == Compression::none ? Hashing::no : Hashing::yes);
  if (!writer) return fail(writer.error());
  // The blob file is written on a thread of its own, so hashing and compressing never wait for the disk.
  auto to_disk = make_background_sink(*writer);
  auto compressor = make_compressor(compression, CompressOptions{request.threads, -1}, *to_disk);
  HashingSink hashing(*compressor);
  // gzip's workers keep both cores busy, and the DiffID is hashed as the tar is made. Uncompressed,
  // hashing is the slowest stage, and beside zstd's workers it is one the calling thread can hand off:
  // it gets a thread of its own, so reading the inputs does not wait for it (zstd 5% quicker).
  auto hash_thread = compression != Compression::gzip ? make_background_sink(hashing) : nullptr;
  if (auto s = write_tar(entries, packing, hash_thread ? *hash_thread : static_cast<ByteSink&>(hashing)); !s) {
    return fail(s.error());
  }
  const Digest diff_id = hashing.digest();
  if (expected && *expected != diff_id) return fail_input("the inputs changed while being recorded; record again");
  auto descriptor = writer->commit(layer_media_type(compression),
                                   compression == Compression::none ? std::optional(diff_id) : std::nullopt);
  if (!descriptor) return fail(descriptor.error());
  if (compression != Compression::none) store.remember_layer(diff_id, compression, *descriptor);
  return Layer{*descriptor, diff_id};
}

// What a package's layer is made of, as it is on disk now: every entry, and for each file where it is
// read from with its size, inode, modification and change times (the change time no tool can set back).
// A layer of the same files is the same layer: found by this key, it is reused without its files being
// read again, where the DiffID would need all of them read and hashed (23 MB for a program on OpenSSL).
// Nothing for a file that cannot be seen, or uncompressed layers (their blob is the tar itself).
std::optional<fs::Path> files_identity(const RecordRequest& request, const std::vector<LayerEntry>& entries,
                                       const Store& store) {
  if (request.compression == Compression::none) return std::nullopt;
  std::string text = std::string(compression_name(request.compression)) + " " + std::to_string(request.mtime) + "\n";
  for (const auto& e : entries) {
    text += std::to_string(static_cast<int>(e.type)) + " " + std::to_string(e.mode) + " " + e.path + "\0" +
            e.link_target + "\0";
    if (e.type == LayerEntry::Type::file && e.source.empty()) {
      text += "generated " + digest_of(e.content).hex();
    } else if (e.type == LayerEntry::Type::file) {
      struct stat st {};
      if (::lstat(e.source.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != e.size) return std::nullopt;
      text += e.source.string() + "\0" + std::to_string(st.st_size) + " " + std::to_string(st.st_dev) + " " +
              std::to_string(st.st_ino) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
              std::to_string(st.st_ctim.tv_nsec);
    }
    text += "\n";
  }
  return store.files_shortcut_path(digest_of(text));
}

// The layer compressed before from files of that identity, when the store still has it.
std::optional<Layer> layer_of_identity(const RecordRequest& request, const fs::Path& identity, const Store& store) {
  if (::access(identity.c_str(), F_OK) != 0) return std::nullopt;
  auto text = fs::read_file(identity);
  if (!text) return std::nullopt;
  auto diff_id = Digest::parse(*text);
  if (!diff_id) return std::nullopt;
  auto cached = store.cached_layer(*diff_id, request.compression);
  if (!cached) return std::nullopt;
  return Layer{*cached, *diff_id};
}

// The base's layers, copied into the store as they are (reused by digest, never re-packed).
Result<std::vector<Descriptor>> copy_base_layers(const RecordRequest& request, const std::optional<BaseParts>& base,
                                                 Store& store) {
  std::vector<Descriptor> layers;
  if (!base) return layers;
  for (const auto& layer : base->manifest.layers) {
    auto copied = store.copy_blob(request.base->layout, layer);
    if (!copied) return fail(std::move(copied.error()).context("base image " + request.base->manifest.digest.str()));
    Descriptor d = layer;
    d.media_type = oci_layer_type(layer.media_type);
    layers.push_back(std::move(d));
  }
  return layers;
}

}  // namespace arec
