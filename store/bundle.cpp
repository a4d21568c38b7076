#include "store/bundle.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace {

constexpr std::size_t k_block = std::size_t{1} << 20;
// index.json and oci-layout of a bundle are read whole; nothing arec writes comes near this.
constexpr std::int64_t k_max_document = std::int64_t{64} << 20;

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

LayerFile::Type file_type(archive_entry* entry) {
  if (archive_entry_hardlink(entry) != nullptr) return LayerFile::Type::hardlink;
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG: return LayerFile::Type::file;
    case AE_IFDIR: return LayerFile::Type::directory;
    case AE_IFLNK: return LayerFile::Type::symlink;
    default: return LayerFile::Type::other;
  }
}

std::string_view type_name(LayerFile::Type type) {
  switch (type) {
    case LayerFile::Type::file: return "file";
    case LayerFile::Type::directory: return "directory";
    case LayerFile::Type::symlink: return "symlink";
    case LayerFile::Type::hardlink: return "hardlink";
    case LayerFile::Type::other: return "other";
  }
  return "other";
}

// A tar entry's name as an image path: "./usr/bin/" -> "/usr/bin".
std::string image_path(std::string_view name) {
  const auto parts = path_components(name);
  return "/" + join_path(parts, parts.size());
}

nlohmann::json descriptor_json(const Descriptor& d) {
  nlohmann::json out = {{"digest", d.digest.str()}, {"size", d.size}, {"mediaType", d.media_type}};
  if (!d.artifact_type.empty()) out["artifactType"] = d.artifact_type;
  return out;
}

// The execution parameter `key` of a config ("Entrypoint", "Env"), or null.
nlohmann::json exec_field(const ImageConfig& config, const char* key) {
  if (!config.config.is_object() || !config.config.contains(key)) return nullptr;
  return config.config.at(key);
}

}  // namespace

// ---- inspect ---------------------------------------------------------------------------------------

Status for_each_layer_file(const Layout& layout, const Descriptor& layer, const LayerFileVisitor& visit) {
  const std::string what = "layer " + layer.digest.str();
  auto a = tar::open_reader(layout.blob_path(layer.digest), k_block, what);
  if (!a) return fail(a.error());
  archive_entry* entry = nullptr;
  int r = ARCHIVE_OK;
  while ((r = archive_read_next_header(a->get(), &entry)) == ARCHIVE_OK) {
    LayerFile f;
    f.type = file_type(entry);
    const char* name = archive_entry_pathname(entry);
    f.path = image_path(name != nullptr ? name : "");
    f.mode = static_cast<std::uint32_t>(archive_entry_perm(entry));
    if (f.type == LayerFile::Type::file) f.size = archive_entry_size(entry);
    if (f.type == LayerFile::Type::symlink && archive_entry_symlink(entry) != nullptr)
      f.link_target = archive_entry_symlink(entry);
    if (f.type == LayerFile::Type::hardlink) f.link_target = image_path(archive_entry_hardlink(entry));
    if (f.type == LayerFile::Type::other) {
      switch (archive_entry_filetype(entry)) {
        case AE_IFCHR: f.other_kind = 'c'; break;
        case AE_IFBLK: f.other_kind = 'b'; break;
        case AE_IFIFO: f.other_kind = 'p'; break;
        case AE_IFSOCK: f.other_kind = 's'; break;
        default: break;
      }
      f.major = static_cast<std::uint32_t>(archive_entry_rdevmajor(entry));
      f.minor = static_cast<std::uint32_t>(archive_entry_rdevminor(entry));
    }
    f.uid = archive_entry_uid(entry);
    f.gid = archive_entry_gid(entry);
    if (const char* u = archive_entry_uname(entry)) f.uname = u;
    if (const char* g = archive_entry_gname(entry)) f.gname = g;
    f.mtime = archive_entry_mtime(entry);
    const NextBlock next = [&a, &what]() -> Result<std::span<const std::byte>> {
      const void* block = nullptr;
      std::size_t size = 0;
      la_int64_t offset = 0;
      const int got = archive_read_data_block(a->get(), &block, &size, &offset);
      if (got == ARCHIVE_EOF) return std::span<const std::byte>();
      if (got != ARCHIVE_OK) return fail_input(what + ": " + tar::error_text(a->get()));
      return std::span(static_cast<const std::byte*>(block), size);
    };
    // What the visitor leaves unread is skipped by the next header (libarchive decompresses past it).
    if (auto s = visit(f, next); !s) return s;
  }
  if (r != ARCHIVE_EOF) return fail_input(what + ": " + tar::error_text(a->get()));
  return {};
}

Result<std::vector<LayerFile>> list_layer_files(const Layout& layout, const Descriptor& layer) {
  std::vector<LayerFile> files;
  auto listed = for_each_layer_file(layout, layer, [&files](const LayerFile& f, const NextBlock&) -> Status {
    files.push_back(f);
    return {};
  });
  if (!listed) return fail(listed.error());
  return files;
}

std::string ImageDescription::platform() const {
  if (config.os.empty() && config.architecture.empty()) return "";
  return config.os + "/" + config.architecture + (config.variant.empty() ? "" : "/" + config.variant);
}

Result<ImageDescription> describe_image(const Layout& layout, const Descriptor& manifest, LayerListing listing) {
  ImageDescription out;
  out.manifest_descriptor = manifest;
  auto parsed = layout.read_manifest(manifest);
  if (!parsed) return fail(parsed.error());
  out.manifest = std::move(*parsed);
  // An artifact's config (an SBOM's empty one) is no image config: nothing to show of it.
  if (out.manifest.config.media_type == media_type::k_config ||
      out.manifest.config.media_type == media_type::k_docker_config) {
    auto config = layout.read_config(out.manifest);
    if (!config) return fail(config.error());
    out.config = std::move(*config);
  }
  if (listing == LayerListing::yes) {
    for (const auto& layer : out.manifest.layers) {
      auto files = list_layer_files(layout, layer);
      if (!files) return fail(files.error());
      out.files.push_back(std::move(*files));
    }
  }
  return out;
}

Result<std::vector<ReferrerDescription>> describe_referrers(const Layout& layout,
                                                            const std::vector<Descriptor>& referrers) {
  std::vector<ReferrerDescription> out;
  for (const auto& r : referrers) {
    auto manifest = layout.read_manifest(r);
    if (!manifest) return fail(std::move(manifest.error()).context("referrer " + r.digest.str()));
    // The document is the artifact's layer (an SBOM, a record); an artifact carrying none has its config.
    std::int64_t size = 0;
    for (const auto& layer : manifest->layers) size += layer.size;
    if (manifest->layers.empty()) size = manifest->config.size;
    out.push_back({r, size});
  }
  return out;
}

std::string mode_string(const LayerFile& file) {
  std::string out;
  switch (file.type) {
    case LayerFile::Type::directory: out = "d"; break;
    case LayerFile::Type::symlink: out = "l"; break;
    case LayerFile::Type::hardlink: out = "h"; break;
    case LayerFile::Type::other: out = std::string(1, file.other_kind); break;
    case LayerFile::Type::file: out = "-"; break;
  }
  constexpr std::string_view k_letters = "rwxrwxrwx";
  for (int bit = 0; bit < 9; ++bit)
    out.push_back((file.mode & (0400u >> bit)) != 0 ? k_letters[static_cast<std::size_t>(bit)] : '-');
  // As ls and tar: s (t) over an execute bit that is set, S (T) where it is not.
  const auto special = [&out, &file](std::uint32_t bit, std::size_t at, char letter) {
    if ((file.mode & bit) == 0) return;
    out[at] = out[at] == 'x' ? letter : static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
  };
  special(04000, 3, 's');
  special(02000, 6, 's');
  special(01000, 9, 't');
  return out;
}

nlohmann::json to_json(const LayerFile& file) {
  nlohmann::json out = {{"path", file.path}, {"type", type_name(file.type)}, {"mode", mode_string(file)}};
  if (file.type == LayerFile::Type::file) out["size"] = file.size;
  if (!file.link_target.empty()) out["linkTarget"] = file.link_target;
  if (file.other_kind == 'c' || file.other_kind == 'b') {
    out["major"] = file.major;
    out["minor"] = file.minor;
  }
  return out;
}

nlohmann::json to_json(const ImageDescription& d) {
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t i = 0; i < d.manifest.layers.size(); ++i) {
    auto layer = descriptor_json(d.manifest.layers[i]);
    // null for a layer that does not say (a base's, or one recorded before layers had origins).
    const auto origin = d.manifest.layers[i].annotation(annotation::k_layer_origin);
    layer["origin"] = origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(origin);
    if (i < d.files.size()) {
      layer["files"] = nlohmann::json::array();
      for (const auto& f : d.files[i]) layer["files"].push_back(to_json(f));
    }
    layers.push_back(std::move(layer));
  }
  nlohmann::json referrers = nlohmann::json::array();
  for (const auto& r : d.referrers) {
    // As for records: `size` is what the referrer carries (its document), `manifest_size` its manifest's.
    auto referrer = descriptor_json(r.descriptor);
    referrer["size"] = r.document_size;
    referrer["manifest_size"] = r.descriptor.size;
    referrers.push_back(std::move(referrer));
  }
  nlohmann::json config = descriptor_json(d.manifest.config);
  config["platform"] = d.platform();
  config["created"] = d.config.created;
  for (const auto& [key, field] : {std::pair{"entrypoint", "Entrypoint"},
                                   {"cmd", "Cmd"},
                                   {"env", "Env"},
                                   {"workingDir", "WorkingDir"},
                                   {"user", "User"},
                                   {"labels", "Labels"}}) {
    config[key] = exec_field(d.config, field);
  }
  std::int64_t size = d.manifest.config.size;
  for (const auto& l : d.manifest.layers) size += l.size;
  // The record as `records --json` shows it: `size` the image's, `manifest_size` its manifest's.
  nlohmann::json record = nullptr;
  if (d.record) {
    record = to_json(*d.record);
    record["size"] = size;
    record["manifest_size"] = d.record->manifest.size;
  }
  return {{"reference", d.reference},
          {"record", record},
          {"manifest", descriptor_json(d.manifest_descriptor)},
          {"size", size},
          {"config", std::move(config)},
          {"layers", std::move(layers)},
          {"referrers", std::move(referrers)}};
}

// ---- export ----------------------------------------------------------------------------------------

namespace {

// One entry of a bundle: a directory, a blob streamed from the store, or a small generated document.
struct BundleEntry {
  std::string path;
  enum class Kind { directory, blob, text } kind = Kind::text;
  Descriptor blob;
  std::string text;
};

struct TarOutput {
  fs::AtomicFile* file;
  Status status;
};

la_ssize_t write_to_file(archive*, void* context, const void* buffer, std::size_t length) {
  auto* out = static_cast<TarOutput*>(context);
  if (auto s = out->file->write(std::span(static_cast<const std::byte*>(buffer), length)); !s) {
    out->status = s;
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

// Streams a blob into the tar entry whose header was just written, checking its size and digest.
Status copy_blob_data(archive* a, const Layout& store, const Descriptor& blob, std::vector<std::byte>& buffer,
                      const TarOutput& out) {
  const auto path = store.blob_path(blob.digest);
  auto fd = store.open_blob(blob.digest);
  if (!fd) return fail(fd.error());
  Hasher hasher(blob.digest.algorithm());
  std::int64_t remaining = blob.size;
  while (remaining > 0) {
    const auto want =
        static_cast<std::size_t>(std::min<std::int64_t>(remaining, static_cast<std::int64_t>(buffer.size())));
    auto n = fs::read_some(fd->get(), std::span(buffer.data(), want), path);
    if (!n) return fail(n.error());
    if (*n == 0)
      return fail_input(path.string() + ": shorter than its descriptor's " + std::to_string(blob.size) + " bytes");
    hasher.update(std::span(buffer.data(), *n));
    if (archive_write_data(a, buffer.data(), *n) < 0) {
      if (!out.status) return out.status;
      return fail_input("writing the bundle: " + tar::error_text(a));
    }
    remaining -= static_cast<std::int64_t>(*n);
  }
  if (hasher.finish() != blob.digest) return fail_input(path.string() + ": content does not match its digest");
  return {};
}

Status write_bundle_tar(const Layout& store, std::vector<BundleEntry> entries, const fs::Path& output,
                        std::int64_t mtime) {
  std::sort(entries.begin(), entries.end(), [](const BundleEntry& x, const BundleEntry& y) { return x.path < y.path; });
  auto file = fs::AtomicFile::create(fs::directory_of(output), output);
  if (!file) return fail(std::move(file.error()).context("writing " + output.string()));
  TarOutput out{&*file, {}};
  tar::Writer a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_per_block(a.get(), static_cast<int>(k_block));
  // No padding after the end blocks: the bytes depend on the entries only.
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &out, nullptr, write_to_file, nullptr, nullptr) != ARCHIVE_OK) {
    return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
  }
  tar::Entry e(archive_entry_new());
  std::vector<std::byte> buffer(k_block);
  for (const auto& entry : entries) {
    archive_entry_clear(e.get());
    archive_entry_copy_pathname(e.get(), entry.path.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), mtime, 0);
    if (entry.kind == BundleEntry::Kind::directory) {
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      archive_entry_set_perm(e.get(), 0755);
    } else {
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_perm(e.get(), 0644);
      archive_entry_set_size(e.get(), entry.kind == BundleEntry::Kind::blob
                                          ? entry.blob.size
                                          : static_cast<std::int64_t>(entry.text.size()));
    }
    if (archive_write_header(a.get(), e.get()) < ARCHIVE_WARN) {
      if (!out.status) return out.status;
      return fail_input("writing " + output.string() + ": " + entry.path + ": " + tar::error_text(a.get()));
    }
    if (entry.kind == BundleEntry::Kind::blob) {
      if (auto s = copy_blob_data(a.get(), store, entry.blob, buffer, out); !s) return s;
    } else if (entry.kind == BundleEntry::Kind::text && !entry.text.empty()) {
      if (archive_write_data(a.get(), entry.text.data(), entry.text.size()) < 0) {
        if (!out.status) return out.status;
        return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    if (!out.status) return out.status;
    return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
  }
  return file->commit();
}

std::string blob_entry_path(const Digest& digest) {
  return "blobs/" + std::string(digest.algorithm_name()) + "/" + digest.hex();
}

}  // namespace

nlohmann::json to_json(const BundleSummary& s) {
  return {{"records", s.records}, {"referrers", s.referrers}, {"blobs", s.blobs}, {"bytes", s.bytes}};
}

Result<BundleSummary> export_bundle(const Store& store, const std::vector<Record>& records, const fs::Path& output,
                                    BundleFormat format, std::int64_t mtime) {
  BundleSummary summary;
  std::map<Digest, Descriptor> blobs;
  auto add_blob = [&](const Descriptor& d, const std::string& of) -> Status {
    if (!store.has_blob(d))
      return fail_input(of + ": the store lacks its blob " + d.digest.str() + " (see arec check)");
    blobs.emplace(d.digest, d);
    return {};
  };
  // The last record of each module/name is the bundle's latest, unless the module/name's image is an
  // index over records the bundle holds: then the index is, for OCI tools (arec import derives it again
  // from the records).
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < records.size(); ++i) last[records[i].repository()] = i;
  auto indexes = store.indexes_of(records);
  if (!indexes) return fail(indexes.error());
  std::set<std::string> exported;
  for (const auto& r : records) exported.insert(r.identity());
  std::vector<BundleEntry> index_blobs;
  Index index;
  if (format == BundleFormat::oci) {
    for (const auto& image : *indexes) {
      if (!std::ranges::all_of(image.platforms, [&](const Record& p) { return exported.contains(p.identity()); }))
        continue;
      const auto repository = image.platforms.front().repository();
      last.erase(repository);
      Descriptor d = image.descriptor;
      d.annotations.emplace(annotation::k_ref_name, repository);
      index.manifests.push_back(std::move(d));
      index_blobs.push_back({blob_entry_path(image.descriptor.digest), BundleEntry::Kind::text, {}, image.index});
    }
  }

  nlohmann::json docker = nlohmann::json::array();
  std::set<Digest> listed;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& record = records[i];
    const auto found = last.find(record.repository());
    const bool latest = found != last.end() && found->second == i;
    const std::string of = record.identity();
    auto manifest = store.read_manifest(record.manifest);
    if (!manifest) return fail(std::move(manifest.error()).context(of));
    if (format == BundleFormat::oci) {
      if (auto s = add_blob(record.manifest, of); !s) return fail(s.error());
    }
    if (auto s = add_blob(manifest->config, of); !s) return fail(s.error());
    for (const auto& layer : manifest->layers) {
      if (auto s = add_blob(layer, of); !s) return fail(s.error());
    }
    ++summary.records;
    if (format == BundleFormat::docker) {
      // docker's archive format (docker save): config and layers named by path; layers may be compressed.
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& layer : manifest->layers) layers.push_back(blob_entry_path(layer.digest));
      nlohmann::json tags = nlohmann::json::array();
      if (latest) tags.push_back(record.repository() + ":latest");
      docker.push_back({{"Config", blob_entry_path(manifest->config.digest)}, {"RepoTags", tags}, {"Layers", layers}});
      continue;
    }
    index.manifests.push_back(to_descriptor(record, latest ? Latest::yes : Latest::no));
    auto referrers = store.referrers(record.manifest.digest);
    if (!referrers) return fail(referrers.error());
    for (const auto& referrer : *referrers) {
      if (!listed.insert(referrer.digest).second) continue;
      const std::string referrer_of = "referrer " + referrer.digest.str() + " of " + of;
      auto referrer_manifest = store.read_manifest(referrer);
      if (!referrer_manifest) return fail(std::move(referrer_manifest.error()).context(referrer_of));
      if (auto s = add_blob(referrer, referrer_of); !s) return fail(s.error());
      if (auto s = add_blob(referrer_manifest->config, referrer_of); !s) return fail(s.error());
      for (const auto& layer : referrer_manifest->layers) {
        if (auto s = add_blob(layer, referrer_of); !s) return fail(s.error());
      }
      index.manifests.push_back(referrer);
      ++summary.referrers;
    }
  }

  std::vector<BundleEntry> entries;
  std::set<std::string> directories{"blobs"};
  for (const auto& [digest, d] : blobs) {
    directories.insert("blobs/" + std::string(digest.algorithm_name()));
    entries.push_back({blob_entry_path(digest), BundleEntry::Kind::blob, d, {}});
    ++summary.blobs;
    summary.bytes += d.size;
  }
  for (auto& entry : index_blobs) {
    summary.bytes += static_cast<std::int64_t>(entry.text.size());
    ++summary.blobs;
    entries.push_back(std::move(entry));
  }
  for (const auto& dir : directories) entries.push_back({dir + "/", BundleEntry::Kind::directory, {}, {}});
  if (format == BundleFormat::oci) {
    auto text = canonical_json(to_json(index));
    if (!text) return fail(text.error());
    entries.push_back({"index.json", BundleEntry::Kind::text, {}, *text});
    entries.push_back({"oci-layout", BundleEntry::Kind::text, {}, std::string(k_oci_layout_document)});
  } else {
    auto text = canonical_json(docker);
    if (!text) return fail(text.error());
    entries.push_back({"manifest.json", BundleEntry::Kind::text, {}, *text});
  }
  if (auto s = write_bundle_tar(store, std::move(entries), output, mtime); !s) return fail(s.error());
  return summary;
}

// ---- import ----------------------------------------------------------------------------------------

namespace {

// A digest and size of a blob the bundle holds.
using BundleBlobs = std::map<Digest, std::int64_t>;

struct CheckedBundle {
  BundleBlobs blobs;
  std::string index;
};

// The entry's path with "./" and a trailing "/" dropped, or why it is refused.
Result<std::string> bundle_path(std::string_view name, const std::string& what) {
  if (name.empty()) return fail_input(what + ": an entry without a name");
  if (name.front() == '/') return fail_input(what + ": entry " + in_quotes(name) + ": an absolute path");
  auto normal = normalise_path(name);
  if (!normal) return fail_input(what + ": entry " + in_quotes(name) + ": climbs out of the bundle (\"..\")");
  return std::move(*normal);
}

// The digest a blob entry's path (blobs/ALGORITHM/HEX) names.
Result<Digest> blob_digest(std::string_view path) {
  const auto slash = path.find('/', 6);
  if (!path.starts_with("blobs/") || slash == std::string_view::npos) return fail_input("not blobs/ALGORITHM/HEX");
  return Digest::parse(std::string(path.substr(6, slash - 6)) + ":" + std::string(path.substr(slash + 1)));
}

// Whether a link at `path` to `target` resolves outside the bundle's root.
bool points_out(const std::string& path, std::string_view target, LayerFile::Type type) {
  if (target.starts_with('/')) return true;
  // A hard link's target is a path from the root; a symbolic link's from its directory.
  int depth = 0;
  if (type == LayerFile::Type::symlink) depth = static_cast<int>(std::count(path.begin(), path.end(), '/'));
  std::size_t pos = 0;
  while (pos <= target.size()) {
    const std::size_t end = std::min(target.find('/', pos), target.size());
    const std::string_view part = target.substr(pos, end - pos);
    if (part == "..") {
      if (--depth < 0) return true;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    pos = end + 1;
  }
  return false;
}

Result<std::string> read_document(archive* a, archive_entry* entry, const std::string& what, const std::string& path) {
  const std::int64_t size = archive_entry_size(entry);
  if (size > k_max_document) return fail_input(what + ": entry " + in_quotes(path) + ": larger than 64 MiB");
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const la_ssize_t n = archive_read_data(a, text.data() + got, text.size() - got);
    if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != text.size()) return fail_input(what + ": entry " + in_quotes(path) + ": cut short");
  return text;
}

// Hashes the data of a blob entry; its size and digest must be what its name and header say.
Status check_blob_data(archive* a, const Digest& digest, std::int64_t size, std::vector<std::byte>& buffer,
                       const std::string& what, const std::string& path) {
  Hasher hasher(digest.algorithm());
  std::int64_t got = 0;
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
    if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
    if (n == 0) break;
    hasher.update(std::span(buffer.data(), static_cast<std::size_t>(n)));
    got += n;
  }
  if (got != size) return fail_input(what + ": entry " + in_quotes(path) + ": cut short");
  if (hasher.finish() != digest)
    return fail_input(what + ": entry " + in_quotes(path) + ": content does not match its digest");
  return {};
}

// Calls `visit` with each entry of the bundle and its path inside it, checked by bundle_path.
using EntryVisitor = std::function<Status(archive* a, archive_entry* entry, const std::string& path)>;
Status for_each_entry(const fs::Path& bundle, const std::string& what, const EntryVisitor& visit) {
  auto a = tar::open_reader(bundle, k_block, what);
  if (!a) return fail(a.error());
  archive_entry* entry = nullptr;
  int r = ARCHIVE_OK;
  while ((r = archive_read_next_header(a->get(), &entry)) == ARCHIVE_OK) {
    const char* raw = archive_entry_pathname(entry);
    auto path = bundle_path(raw != nullptr ? raw : "", what);
    if (!path) return fail(path.error());
    if (auto s = visit(a->get(), entry, *path); !s) return s;
  }
  if (r != ARCHIVE_EOF) return fail_input(what + ": " + tar::error_text(a->get()));
  return {};
}

// The first pass: every entry checked, every blob verified, nothing written.
Result<CheckedBundle> check_bundle(const fs::Path& bundle, const std::string& what, std::int64_t max_expansion) {
  std::error_code ec;
  const auto bundle_size = static_cast<std::int64_t>(std::filesystem::file_size(bundle, ec));
  // A gzip stream expands up to about a thousand times: a few megabytes could fill the disk with a blob.
  const std::int64_t allowed = std::max<std::int64_t>(ec ? 0 : bundle_size * max_expansion, std::int64_t{1} << 20);
  std::int64_t expanded = 0;
  CheckedBundle out;
  std::set<std::string> seen;
  std::optional<std::string> layout;
  bool docker_manifest = false;
  std::vector<std::byte> buffer(k_block);
  auto read = for_each_entry(bundle, what, [&](archive* a, archive_entry* entry, const std::string& path) -> Status {
    const std::string name = archive_entry_pathname(entry);
    const auto type = file_type(entry);
    if (type == LayerFile::Type::symlink || type == LayerFile::Type::hardlink) {
      const char* target_text =
          type == LayerFile::Type::symlink ? archive_entry_symlink(entry) : archive_entry_hardlink(entry);
      const std::string target = target_text != nullptr ? target_text : "";
      const std::string kind = type == LayerFile::Type::symlink ? "a symbolic link" : "a hard link";
      if (points_out(path, target, type)) {
        return fail_input(what + ": entry " + in_quotes(name) + ": " + kind + " pointing out of the bundle (to " +
                          in_quotes(target) + ")");
      }
      return fail_input(what + ": entry " + in_quotes(name) + ": " + kind + " (to " + in_quotes(target) +
                        "), not a regular file");
    }
    if (type == LayerFile::Type::other)
      return fail_input(what + ": entry " + in_quotes(name) + ": not a regular file or directory");
    if (path.empty()) return {};
    if (!seen.insert(path).second) return fail_input(what + ": entry " + in_quotes(name) + ": appears twice");
    if (type == LayerFile::Type::directory) return {};
    expanded += std::max<std::int64_t>(archive_entry_size(entry), 0);
    if (expanded > allowed) {
      return fail_input(what + ": its entries hold more than " + std::to_string(allowed) + " bytes, " +
                        std::to_string(max_expansion) + " times the bundle's " + std::to_string(bundle_size) +
                        " (--max-expansion allows more)");
    }
    if (path.starts_with("blobs/")) {
      auto digest = blob_digest(path);
      if (!digest)
        return fail_input(what + ": entry " + in_quotes(name) + ": not a blob name (" + digest.error().message + ")");
      // The store keeps sha256 blobs (blobs/sha256/): another algorithm is refused here, before the
      // store is created or a byte written.
      if (digest->algorithm() != DigestAlgorithm::sha256) {
        return fail_input(what + ": entry " + in_quotes(name) + ": a blob under " +
                          std::string(digest->algorithm_name()) + ", which arec does not accept (only sha256)");
      }
      if (auto s = check_blob_data(a, *digest, archive_entry_size(entry), buffer, what, name); !s)
        return fail(s.error());
      out.blobs.emplace(*digest, archive_entry_size(entry));
    } else if (path == "index.json") {
      auto text = read_document(a, entry, what, name);
      if (!text) return fail(text.error());
      out.index = std::move(*text);
    } else if (path == "oci-layout") {
      auto text = read_document(a, entry, what, name);
      if (!text) return fail(text.error());
      layout = std::move(*text);
    } else if (path == "manifest.json") {
      docker_manifest = true;
    }
    return {};
  });
  if (!read) return fail(read.error());
  if (!layout || out.index.empty()) {
    if (docker_manifest)
      return fail_input(what + ": a docker archive; arec import reads OCI bundles (arec export --format oci)");
    return fail_input(what + ": not an OCI bundle (no " + std::string(layout ? "index.json" : "oci-layout") + ")");
  }
  if (auto s = check_oci_layout(*layout, what + ": oci-layout"); !s) return fail(s.error());
  return out;
}

// Calls `visit` with each regular entry under blobs/ of the bundle and the digest its name gives
// (nothing when the name is not one); entries that `visit` does not read are skipped.
using BlobEntryVisitor =
    std::function<Status(archive* a, archive_entry* entry, const std::string& path, const Result<Digest>& digest)>;
Status for_each_blob_entry(const fs::Path& bundle, const std::string& what, const BlobEntryVisitor& visit) {
  return for_each_entry(bundle, what, [&](archive* a, archive_entry* entry, const std::string& path) -> Status {
    if (!path.starts_with("blobs/") || file_type(entry) != LayerFile::Type::file) return {};
    return visit(a, entry, path, blob_digest(path));
  });
}

// The second pass: the blobs the store lacks, streamed into it. Each is hashed again as it is written
// and committed under the digest of what was written, so a bundle changed since the first pass cannot
// put wrong bytes under a name.
Status write_blobs(const fs::Path& bundle, const std::string& what, Store& store, const BundleBlobs& blobs,
                   ImportSummary& summary) {
  std::vector<std::byte> buffer(k_block);
  return for_each_blob_entry(
      bundle, what, [&](archive* a, archive_entry*, const std::string& path, const Result<Digest>& digest) -> Status {
        if (!digest || !blobs.contains(*digest)) return fail_input(what + ": changed while it was being read");
        const Descriptor d{"", *digest, blobs.at(*digest), {}, {}, {}, {}};
        if (store.has_blob(d)) {
          ++summary.blobs_present;
          return {};
        }
        auto writer = store.begin_blob(Hashing::yes);
        if (!writer) return fail(writer.error());
        for (;;) {
          const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
          if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
          if (n == 0) break;
          if (auto s = writer->write(std::span(buffer.data(), static_cast<std::size_t>(n))); !s) return s;
        }
        auto written = writer->commit("");
        if (!written) return fail(written.error());
        if (written->digest != d.digest || written->size != d.size)
          return fail_input(what + ": changed while it was being read");
        ++summary.blobs_written;
        summary.bytes += d.size;
        return {};
      });
}

// The manifests `wanted` (those index.json lists), read from the bundle; the other entries are skipped,
// which for an uncompressed tarball is a seek.
Result<std::map<Digest, Manifest>> read_bundle_manifests(const fs::Path& bundle, const std::string& what,
                                                         const std::set<Digest>& wanted) {
  std::map<Digest, Manifest> out;
  auto s = for_each_blob_entry(
      bundle, what,
      [&](archive* a, archive_entry* entry, const std::string& path, const Result<Digest>& digest) -> Status {
        if (!digest || !wanted.contains(*digest)) return {};
        auto text = read_document(a, entry, what, path);
        if (!text) return fail(text.error());
        if (digest_of(*text, digest->algorithm()) != *digest)
          return fail_input(what + ": changed while it was being read");
        auto manifest = parse_document<Manifest>(*text, what + ": manifest " + digest->str());
        if (!manifest) return fail(manifest.error());
        out.emplace(*digest, std::move(*manifest));
        return {};
      });
  if (!s) return fail(s.error());
  return out;
}

}  // namespace

nlohmann::json to_json(const ImportSummary& s) {
  return {{"records_added", s.records_added}, {"records_present", s.records_present}, {"referrers", s.referrers},
          {"blobs_written", s.blobs_written}, {"blobs_present", s.blobs_present},     {"bytes", s.bytes}};
}

Result<ImportSummary> import_bundle(const fs::Path& bundle, const fs::Path& store_dir, std::int64_t max_expansion) {
  const std::string what = "bundle " + bundle.string();
  auto checked = check_bundle(bundle, what, max_expansion);
  if (!checked) return fail(checked.error());
  auto index = parse_document<Index>(checked->index, what + ": index.json");
  if (!index) return fail(index.error());

  std::vector<Record> records;
  std::map<std::string, std::vector<Descriptor>> referrers;  // by subject digest
  for (const auto& d : index->manifests) {
    if (auto subject = d.annotation(annotation::k_subject); !subject.empty()) {
      referrers[subject].push_back(d);
    } else if (auto record = record_from_descriptor(d)) {
      records.push_back(std::move(*record));
    }
  }
  if (records.empty())
    return fail_input(what + ": index.json lists no records (arec import reads what arec export writes)");
  for (const auto& record : records) {
    if (auto s = validate_record_fields(record, what + ": index.json"); !s) return fail(s.error());
  }
  // Everything named must be in the bundle before anything is written: the manifests index.json lists,
  // and their configs and layers.
  const auto held = [&](const Descriptor& d) {
    const auto found = checked->blobs.find(d.digest);
    return found != checked->blobs.end() && found->second == d.size;
  };
  std::vector<Descriptor> listed;
  for (const auto& r : records) listed.push_back(r.manifest);
  for (const auto& [subject, of_subject] : referrers) listed.insert(listed.end(), of_subject.begin(), of_subject.end());
  std::set<Digest> wanted;
  for (const auto& d : listed) {
    if (!held(d)) return fail_input(what + ": index.json lists " + d.digest.str() + ", which the bundle does not hold");
    wanted.insert(d.digest);
  }
  auto manifests = read_bundle_manifests(bundle, what, wanted);
  if (!manifests) return fail(manifests.error());
  for (const auto& [digest, manifest] : *manifests) {
    for (const auto& blob : manifest.layers) {
      if (!held(blob))
        return fail_input(what + ": manifest " + digest.str() + " needs the layer " + blob.digest.str() +
                          ", which the bundle does not hold");
    }
    if (!held(manifest.config)) {
      return fail_input(what + ": manifest " + digest.str() + " needs the config " + manifest.config.digest.str() +
                        ", which the bundle does not hold");
    }
  }

  auto store = Store::open(store_dir);
  if (!store) return fail(store.error());
  ImportSummary summary;
  if (auto s = write_blobs(bundle, what, *store, checked->blobs, summary); !s) return fail(s.error());

  auto history = store->records(History::all);
  if (!history) return fail(history.error());
  // Looked up in a set, not by a walk of the history per record: an import is O(N log N) in records.
  std::set<std::tuple<std::string, Digest, std::string>> held_records;
  for (const auto& r : *history) held_records.emplace(r.repository(), r.manifest.digest, r.recorded);
  // Added in one transaction and one write of the view, so an import is O(N) in records.
  std::vector<std::pair<Record, std::vector<Descriptor>>> to_add;
  for (const auto& record : records) {
    if (held_records.contains({record.repository(), record.manifest.digest, record.recorded})) {
      ++summary.records_present;
      continue;
    }
    to_add.emplace_back(record, referrers[record.manifest.digest.str()]);
  }
  auto writer = store->writer();
  if (!writer) return fail(writer.error());
  auto committed = writer->commit_all(to_add);
  if (!committed) return fail(committed.error());
  // Records of one image (the same bytes built again) share its referrers: each is counted once, as
  // export counts them.
  std::set<Digest> referrers_added;
  for (std::size_t i = 0; i < committed->size(); ++i) {
    if ((*committed)[i].changed) {
      ++summary.records_added;
      for (const auto& r : to_add[i].second) referrers_added.insert(r.digest);
    } else {
      ++summary.records_present;
    }
  }
  summary.referrers = static_cast<int>(referrers_added.size());
  return summary;
}

}  // namespace arec
