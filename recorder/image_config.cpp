// A record's base image (a layout's or a record's, the platform of an index chosen) and what is written
// of it beside the layers: the config, the manifest and the record.
#include "recorder/image_internal.hpp"

namespace arec {

namespace {

void merge_env(nlohmann::json& config, const std::vector<std::string>& env) {
  if (env.empty()) return;
  nlohmann::json list = config.contains("Env") && config["Env"].is_array() ? config["Env"] : nlohmann::json::array();
  for (const auto& kv : env) {
    const std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (auto& existing : list) {
      if (existing.is_string() && existing.get<std::string>().substr(0, existing.get<std::string>().find('=')) == key) {
        existing = kv;
        replaced = true;
      }
    }
    if (!replaced) list.push_back(kv);
  }
  config["Env"] = std::move(list);
}

}  // namespace

// The base's manifest and config, checked against each other; nothing without a base.
Result<std::optional<BaseParts>> read_base(const RecordRequest& request) {
  if (!request.base) return std::nullopt;
  const BaseImage& base = *request.base;
  const std::string what = "base image " + base.manifest.digest.str();
  auto manifest = base.layout.read_manifest(base.manifest);
  if (!manifest) return fail(std::move(manifest.error()).context(what));
  auto config = base.layout.read_config(*manifest);
  if (!config) return fail(std::move(config.error()).context(what));
  if (config->diff_ids.size() != manifest->layers.size()) {
    return fail_input(what + ": config lists " + std::to_string(config->diff_ids.size()) + " layers, manifest " +
                      std::to_string(manifest->layers.size()));
  }
  return BaseParts{std::move(*manifest), std::move(*config)};
}

Result<Descriptor> select_platform_manifest(const Layout& layout, const Descriptor& descriptor, std::string_view what,
                                            const std::optional<Platform>& platform) {
  if (!media_type::is_index(descriptor.media_type)) {
    return descriptor;
  }
  auto index = layout.read_image_index(descriptor);
  if (!index) return fail(std::move(index.error()).context(what));
  const Platform wanted = platform.value_or(host_platform());
  for (const auto& m : index->manifests) {
    if (m.platform && serves(*m.platform, wanted)) return m;
  }
  return fail_input(std::string(what) + ": no image for " + platform_text(wanted));
}

Result<BaseImage> open_layout_base(const std::string& dir, const std::string& ref, const std::string& what,
                                   const std::optional<Platform>& platform) {
  auto layout = Layout::open(dir);
  if (!layout) return fail(std::move(layout.error()).context(what));
  auto index = layout->read_index();
  if (!index) return fail(std::move(index.error()).context(what));
  std::optional<Descriptor> found;
  if (ref.empty()) {
    if (index->manifests.size() != 1) {
      return fail_input(what + ": the layout holds " + std::to_string(index->manifests.size()) +
                        " images; name one as oci:" + dir + ":REF");
    }
    found = index->manifests.front();
  } else {
    for (const auto& d : index->manifests) {
      if (d.annotation(annotation::k_ref_name) == ref) found = d;
    }
    if (!found) return fail_input(what + ": no image named \"" + ref + "\" in " + dir);
  }
  auto manifest = select_platform_manifest(*layout, *found, what, platform);
  if (!manifest) return fail(manifest.error());
  return BaseImage{std::move(*layout), *manifest};
}

Result<BaseImage> open_record_base(const Store& store, std::string_view module, std::string_view name,
                                   const std::optional<Platform>& platform) {
  const std::string what = "base \"" + std::string(module) + "/" + std::string(name) + "\"";
  auto latest = store.latest_image(module, name);
  if (!latest) return fail(std::move(latest.error()).context(what));
  if (!*latest) {
    return fail_input(what + ": no record of " + std::string(module) + "/" + std::string(name) + " in the store " +
                      store.dir().string() + " (an image of a registry is written with its domain: HOST[:PORT]/PATH)");
  }
  if (!(*latest)->is_index()) return BaseImage{store, (*latest)->platforms.front().manifest};
  const Platform wanted = platform.value_or(host_platform());
  std::string recorded;
  for (const auto& r : (*latest)->platforms) {
    if (serves(*r.manifest.platform, wanted)) return BaseImage{store, r.manifest};
    recorded += (recorded.empty() ? "" : ", ") + platform_text(*r.manifest.platform);
  }
  return fail_input(what + ": no record for " + platform_text(wanted) + " (recorded for " + recorded + ")");
}

// A base is for the platform of the inputs, when they have one.
Status check_base_platform(const RecordRequest& request, const std::optional<BaseParts>& base,
                           const std::optional<Platform>& platform) {
  if (!base || !platform) return {};
  const ImageConfig& config = base->config;
  if (config.os == platform->os && config.architecture == platform->architecture) return {};
  return fail_input("base image " + request.base->manifest.digest.str() + " is for " +
                    platform_text({config.architecture, config.os, config.variant}) + ", the inputs for " +
                    platform_text(*platform));
}

// The base's config (or the inputs' platform, else this machine's) with the new layer, environment and
// entrypoint.
ImageConfig image_config(const RecordRequest& request, const std::optional<BaseParts>& base,
                         const std::optional<Platform>& platform, const std::vector<Layer>& layers,
                         const std::vector<LayerGroup>& groups, const std::string& user) {
  ImageConfig config;
  if (base) {
    config = base->config;
  } else {
    const Platform chosen = platform.value_or(host_platform());
    config.architecture = chosen.architecture;
    config.os = chosen.os;
    config.variant = chosen.variant;
  }
  const std::string created = rfc3339(request.mtime);
  config.created = created;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    config.diff_ids.push_back(layers[i].diff_id);
    // One layer is the record as it always was; of several, each says where its files come from.
    config.history.push_back(
        {created, "arec record", "", layers.size() == 1 ? std::string() : groups[i].origin, false});
  }
  merge_env(config.config, request.env);
  if (!user.empty()) config.config["User"] = user;
  if (!request.entrypoint.empty()) {
    config.config["Entrypoint"] = request.entrypoint;
    config.config.erase("Cmd");  // as Dockerfile ENTRYPOINT does: an inherited command no longer applies
  }
  return config;
}

// Writes the config and the manifest (the base's layers, then the new one); returns the manifest's descriptor.
Result<Descriptor> write_image(const RecordRequest& request, const ImageConfig& config, std::vector<Descriptor> layers,
                               Store& store) {
  Manifest manifest;
  auto config_text = canonical_json(to_json(config));
  if (!config_text) return fail(std::move(config_text.error()).context("writing the image config"));
  auto config_descriptor = store.put_blob(*config_text, media_type::k_config);
  if (!config_descriptor) return fail(config_descriptor.error());
  manifest.config = *config_descriptor;
  manifest.layers = std::move(layers);
  if (request.base) manifest.annotations.emplace(annotation::k_base_digest, request.base->manifest.digest.str());
  auto manifest_text = canonical_json(to_json(manifest));
  if (!manifest_text) return fail(manifest_text.error());
  auto descriptor = store.put_blob(*manifest_text, media_type::k_manifest);
  if (!descriptor) return fail(descriptor.error());
  descriptor->platform = Platform{config.architecture, config.os, config.variant};
  return descriptor;
}

// The record of `manifest`, made now.
Record new_record(const RecordRequest& request, const Descriptor& manifest, std::string revision) {
  Record record;
  record.module = request.module;
  record.name = request.name;
  record.manifest = manifest;
  record.recorded = now_rfc3339();
  record.target = request.target;
  record.config = request.config;
  record.revision = std::move(revision);
  if (request.base) record.base_digest = request.base->manifest.digest.str();
  return record;
}

}  // namespace arec
