#include "diff/image_diff.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "diff/file_diff.hpp"
#include "oci/digest.hpp"
#include "recorder/layering.hpp"

namespace arec {

namespace {

void compare_field(std::vector<FieldChange>& out, std::string field, nlohmann::json before, nlohmann::json after) {
  if (before != after) out.push_back({std::move(field), std::move(before), std::move(after)});
}

std::string platform_of(const ImageConfig& config) {
  if (config.os.empty() && config.architecture.empty()) return "";
  return config.os + "/" + config.architecture + (config.variant.empty() ? "" : "/" + config.variant);
}

// The image config of a manifest, or an empty one for an artifact (it has no image config to compare).
Result<ImageConfig> config_of(const Layout& layout, const Manifest& manifest) {
  if (manifest.config.media_type != media_type::k_config && manifest.config.media_type != media_type::k_docker_config)
    return ImageConfig{};
  return layout.read_config(manifest);
}

// The record's fields: only where both sides are records (an image of a layout has none to compare).
std::vector<FieldChange> record_changes(const DiffSide& before, const DiffSide& after, const ImageConfig& a,
                                        const ImageConfig& b) {
  std::vector<FieldChange> out;
  if (before.record && after.record) {
    const Record& x = *before.record;
    const Record& y = *after.record;
    compare_field(out, "revision", text_or_null(x.revision), text_or_null(y.revision));
    compare_field(out, "target", text_or_null(x.target), text_or_null(y.target));
    compare_field(out, "config", text_or_null(x.config), text_or_null(y.config));
    compare_field(out, "base", text_or_null(x.base_digest), text_or_null(y.base_digest));
  }
  compare_field(out, "platform", text_or_null(platform_of(a)), text_or_null(platform_of(b)));
  return out;
}

// The config's execution parameters, key by key (Entrypoint, Env, User, WorkingDir, Labels, ...), and
// its creation time; the history and the DiffIDs are what the layers below explain.
std::vector<FieldChange> config_changes(const ImageConfig& a, const ImageConfig& b) {
  std::vector<FieldChange> out;
  compare_field(out, "created", text_or_null(a.created), text_or_null(b.created));
  compare_field(out, "author", text_or_null(a.author), text_or_null(b.author));
  std::set<std::string> keys;
  for (const auto* c : {&a.config, &b.config}) {
    if (!c->is_object()) continue;
    for (const auto& [key, value] : c->items()) keys.insert(key);
  }
  const auto value = [](const nlohmann::json& c, const std::string& key) {
    return c.is_object() && c.contains(key) ? c.at(key) : nlohmann::json(nullptr);
  };
  for (const auto& key : keys) compare_field(out, key, value(a.config, key), value(b.config, key));
  return out;
}

// What layers are matched by: a package's name and architecture without its version ("deb:libc6:amd64"),
// else the origin as written ("files", "own-libraries"), else the position among the layers without
// one ("layer 1": a base's). The n-th layer of the same key is "KEY #n" from the second on.
std::vector<std::string> layer_keys(const std::vector<Descriptor>& layers) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  int unnamed = 0;
  for (const auto& layer : layers) {
    std::string key = layer.annotation(annotation::k_layer_origin);
    if (auto package = package_of_origin(key)) {
      key = "deb:" + package->name + ":" + package->architecture;
    } else if (key.empty()) {
      key = "layer " + std::to_string(++unnamed);
    }
    const int n = ++seen[key];
    out.push_back(n == 1 ? key : key + " #" + std::to_string(n));
  }
  return out;
}

std::vector<PackageChange> origin_packages(const std::string& before, const std::string& after) {
  auto a = package_of_origin(before);
  auto b = package_of_origin(after);
  if ((!a && !b) || (a && b && a->version == b->version)) return {};
  return {{a ? a->name : b->name, a ? a->version : "", b ? b->version : ""}};
}

Result<Entries> read_entries(const Layout& layout, const Descriptor& layer) {
  Entries out;
  auto s = for_each_layer_file(layout, layer, [&out](const LayerFile& f, const NextBlock& next) -> Status {
    EntryState state{f, {}};
    if (f.type == LayerFile::Type::file) {
      Hasher hasher;
      for (;;) {
        auto block = next();
        if (!block) return fail(block.error());
        if (block->empty()) break;
        hasher.update(*block);
      }
      state.digest = hasher.finish().hex();
    } else if (f.type == LayerFile::Type::hardlink) {
      if (auto target = out.find(f.link_target); target != out.end()) state.digest = target->second.digest;
    }
    out[f.path] = std::move(state);
    return {};
  });
  if (!s) return fail(s.error());
  return out;
}

std::string owner_text(const LayerFile& f) {
  return std::to_string(f.uid) + ":" + std::to_string(f.gid) +
         (f.uname.empty() && f.gname.empty() ? "" : " (" + f.uname + ":" + f.gname + ")");
}

// What differs between two entries of one path, in the order a reader weighs it.
std::vector<std::string> entry_changes(const EntryState& a, const EntryState& b) {
  std::vector<std::string> out;
  if (a.file.type != b.file.type) out.push_back("type");
  if (a.digest != b.digest) out.push_back("content");
  if (a.file.size != b.file.size) out.push_back("size");
  if (a.file.mode != b.file.mode) out.push_back("mode");
  if (owner_text(a.file) != owner_text(b.file)) out.push_back("owner");
  if (a.file.link_target != b.file.link_target) out.push_back("link");
  if (a.file.major != b.file.major || a.file.minor != b.file.minor) out.push_back("device");
  if (a.file.mtime != b.file.mtime) out.push_back("mtime");
  return out;
}

// Compares the files of two layers matched by origin, then looks into the changed ones.
Status compare_layer(const DiffSide& before, const DiffSide& after, LayerChange& layer, FileDetail detail,
                     std::vector<Hint>& hints, std::size_t& text_diffs) {
  auto a = read_entries(*before.layout, *layer.before);
  if (!a) return fail(a.error());
  auto b = read_entries(*after.layout, *layer.after);
  if (!b) return fail(b.error());
  LayerStat stat;
  const auto add = [&layer](FileChange::Kind kind, const std::string& path, const EntryState* x, const EntryState* y) {
    FileChange change;
    change.kind = kind;
    change.path = path;
    if (x) change.before = x->file, change.before_digest = x->digest;
    if (y) change.after = y->file, change.after_digest = y->digest;
    layer.files.push_back(std::move(change));
  };
  for (const auto& [path, x] : *a) {
    auto y = b->find(path);
    if (y == b->end()) {
      add(FileChange::Kind::removed, path, &x, nullptr);
      ++stat.removed;
      stat.bytes += x.file.size;
      continue;
    }
    auto changes = entry_changes(x, y->second);
    if (changes.empty()) {
      ++stat.same;
      continue;
    }
    add(FileChange::Kind::changed, path, &x, &y->second);
    layer.files.back().changes = std::move(changes);
    ++stat.changed;
    stat.bytes += y->second.file.size;
  }
  for (const auto& [path, y] : *b) {
    if (a->contains(path)) continue;
    add(FileChange::Kind::added, path, nullptr, &y);
    ++stat.added;
    stat.bytes += y.file.size;
  }
  std::sort(layer.files.begin(), layer.files.end(),
            [](const FileChange& x, const FileChange& y) { return x.path < y.path; });
  layer.stat = stat;
  header_hints(layer, hints);
  if (detail == FileDetail::files_only) return {};
  return look_into_files(before, after, layer, hints, text_diffs);
}

}  // namespace

bool ImageDiff::differs() const {
  if (!record.empty() || !config.empty() || !hints.empty()) return true;
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerChange& l) { return l.kind != LayerChange::Kind::same; });
}

Result<ImageDiff> diff_images(const DiffSide& before, const DiffSide& after, FileDetail detail) {
  ImageDiff out{before, after, {}, {}, {}, {}};
  auto ma = before.layout->read_manifest(before.manifest);
  if (!ma) return fail(std::move(ma.error()).context(before.name));
  auto mb = after.layout->read_manifest(after.manifest);
  if (!mb) return fail(std::move(mb.error()).context(after.name));
  auto ca = config_of(*before.layout, *ma);
  if (!ca) return fail(std::move(ca.error()).context(before.name));
  auto cb = config_of(*after.layout, *mb);
  if (!cb) return fail(std::move(cb.error()).context(after.name));
  out.record = record_changes(before, after, *ca, *cb);
  if (ma->config.digest != mb->config.digest) out.config = config_changes(*ca, *cb);
  for (const auto& c : out.config) {
    if (c.field == "created") {
      out.hints.push_back({"timestamp", "",
                           "the config's creation time differs: record both with the same SOURCE_DATE_EPOCH "
                           "(arec uses it for every time it writes)"});
    }
  }

  const auto keys_a = layer_keys(ma->layers);
  const auto keys_b = layer_keys(mb->layers);
  std::map<std::string, std::size_t> index_a;
  for (std::size_t i = 0; i < keys_a.size(); ++i) index_a[keys_a[i]] = i;
  std::set<std::string> matched;
  std::size_t text_diffs = 0;
  for (std::size_t j = 0; j < keys_b.size(); ++j) {
    LayerChange layer;
    layer.key = keys_b[j];
    layer.after = mb->layers[j];
    layer.after_origin = mb->layers[j].annotation(annotation::k_layer_origin);
    auto i = index_a.find(keys_b[j]);
    if (i == index_a.end()) {
      layer.kind = LayerChange::Kind::added;
      layer.packages = origin_packages("", layer.after_origin);
      out.layers.push_back(std::move(layer));
      continue;
    }
    matched.insert(keys_b[j]);
    layer.before = ma->layers[i->second];
    layer.before_origin = layer.before->annotation(annotation::k_layer_origin);
    // The same digest is the same bytes: the layer is never read.
    if (layer.before->digest == layer.after->digest) {
      out.layers.push_back(std::move(layer));
      continue;
    }
    layer.kind = LayerChange::Kind::changed;
    layer.packages = origin_packages(layer.before_origin, layer.after_origin);
    if (auto s = compare_layer(before, after, layer, detail, out.hints, text_diffs); !s) return fail(s.error());
    out.layers.push_back(std::move(layer));
  }
  for (std::size_t i = 0; i < keys_a.size(); ++i) {
    if (matched.contains(keys_a[i])) continue;
    LayerChange layer;
    layer.kind = LayerChange::Kind::removed;
    layer.key = keys_a[i];
    layer.before = ma->layers[i];
    layer.before_origin = ma->layers[i].annotation(annotation::k_layer_origin);
    layer.packages = origin_packages(layer.before_origin, "");
    out.layers.push_back(std::move(layer));
  }
  return out;
}

}  // namespace arec
