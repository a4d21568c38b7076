// inspect's view of an image and a layer's entries, streamed with libarchive.
#include "store/bundle.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "store/bundle_internal.hpp"
#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace {

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

}  // namespace arec
