#include "diff/image_diff.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "diff/entry_table.hpp"
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

// Compares the files of two layers matched by origin (those `wanted` takes), then looks into the changed
// ones. Each side's entries are held at most k_max_entry_bytes at once, and freed before the files are
// looked into; the first k_max_files_listed changed files of the whole diff are listed (`listed` counts
// them), the others counted.
Status compare_layer(const DiffSide& before, const DiffSide& after, LayerChange& layer, const DiffOptions& options,
                     const std::function<bool(std::string_view)>& wanted, std::vector<Hint>& hints,
                     std::size_t& text_diffs, std::size_t& listed) {
  {
    auto a = EntryTable::read(*before.layout, *layer.before, k_max_entry_bytes, wanted);
    if (!a) return fail(a.error());
    std::optional<Result<std::optional<EntryTable>>> b;
    if (*a) b.emplace(EntryTable::read(*after.layout, *layer.after, k_max_entry_bytes, wanted));
    if (b && !*b) return fail(b->error());
    if (!*a || !**b) {
      layer.note = "its entries are more than arec diff holds in memory (" + std::to_string(k_max_entry_bytes >> 20) +
                   " MiB a side): compared by digest; --path GLOB compares the files it matches";
      return {};
    }
    const EntryTable& x = **a;
    const EntryTable& y = ***b;
    LayerStat stat;
    const auto add = [&](FileChange::Kind kind, std::optional<std::size_t> i, std::optional<std::size_t> j,
                         std::vector<std::string> changes) {
      if (listed == k_max_files_listed) {
        ++layer.files_left_out;
        return;
      }
      ++listed;
      FileChange change;
      change.kind = kind;
      change.path = std::string(i ? x.path(*i) : y.path(*j));
      if (i) change.before = x.file(*i), change.before_digest = x.digest_hex(*i);
      if (j) change.after = y.file(*j), change.after_digest = y.digest_hex(*j);
      change.changes = std::move(changes);
      layer.files.push_back(std::move(change));
    };
    // Both sorted by path: one walk.
    std::size_t i = 0, j = 0;
    while (i < x.size() || j < y.size()) {
      const int order = i == x.size() ? 1 : j == y.size() ? -1 : x.path(i).compare(y.path(j));
      if (order < 0) {
        ++stat.removed;
        stat.bytes += x.file_size(i);
        add(FileChange::Kind::removed, i++, std::nullopt, {});
      } else if (order > 0) {
        ++stat.added;
        stat.bytes += y.file_size(j);
        add(FileChange::Kind::added, std::nullopt, j++, {});
      } else {
        auto changes = x.changes(i, y, j);
        if (changes.empty()) {
          ++stat.same;
        } else {
          ++stat.changed;
          stat.bytes += y.file_size(j);
          add(FileChange::Kind::changed, i, j, std::move(changes));
        }
        ++i, ++j;
      }
    }
    layer.stat = stat;
  }
  header_hints(layer, hints);
  if (options.detail == FileDetail::files_only) return {};
  return look_into_files(before, after, layer, hints, text_diffs);
}

// CMake's own flags of its configurations for GCC, where a project sets none of its own.
std::string cmake_default_flags(const std::string& config) {
  if (config == "Debug") return "-g";
  if (config == "Release") return "-O3 -DNDEBUG";
  if (config == "RelWithDebInfo") return "-O2 -g -DNDEBUG";
  if (config == "MinSizeRel") return "-Os -DNDEBUG";
  return "";
}

// Two records of other configurations (Debug against Release): their compiler flags differ.
void configuration_hint(const DiffSide& before, const DiffSide& after, std::vector<Hint>& hints) {
  if (!before.record || !after.record || before.record->config == after.record->config) return;
  const std::string& a = before.record->config;
  const std::string& b = after.record->config;
  const auto named = [](const std::string& config) {
    const std::string flags = cmake_default_flags(config);
    return (config.empty() ? std::string("(none)") : config) +
           (flags.empty() ? "" : " (CMake's default: " + flags + ")");
  };
  hints.push_back({"configuration", "",
                   "built in another configuration: " + named(a) + " before, " + named(b) +
                       " after; their compiler flags differ (see the flags hints of the files, from DW_AT_producer), "
                       "so everything compiled differs: compare like with like with --config NAME"});
}

}  // namespace

bool ImageDiff::differs() const {
  if (!record.empty() || !config.empty() || !hints.empty()) return true;
  return std::any_of(layers.begin(), layers.end(),
                     [](const LayerChange& l) { return l.kind != LayerChange::Kind::same; });
}

Result<ImageDiff> diff_images(const DiffSide& before, const DiffSide& after, const DiffOptions& options) {
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

  configuration_hint(before, after, out.hints);

  std::function<bool(std::string_view)> wanted;
  if (!options.paths.empty()) {
    wanted = [&options](std::string_view path) {
      const std::string text(path);
      return std::ranges::any_of(
          options.paths, [&](const std::string& glob) { return ::fnmatch(glob.c_str(), text.c_str(), 0) == 0; });
    };
  }
  std::size_t listed = 0;
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
    if (auto s = compare_layer(before, after, layer, options, wanted, out.hints, text_diffs, listed); !s)
      return fail(s.error());
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
