#include "recorder/image.hpp"

#include <algorithm>
#include <functional>
#include <future>

#include "recorder/process.hpp"
#include "recorder/sbom.hpp"

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

struct Layer {
  Descriptor descriptor;
  Digest diff_id;
};

// The SBOM's hashes of the layer's files (SHA-1 and SHA-256 of each, a read of their own). New content
// needs them, so they are made on a thread beside its compression, reading what the page cache holds;
// an unchanged relink, whose SBOM the store has, never asks for them.
class SbomHashes {
 public:
  SbomHashes(const RecordRequest& request, const std::vector<LayerEntry>& entries) : m_request(request), m_entries(entries) {}
  void start() {
    if (m_request.sbom == SbomFormat::none || m_files.valid()) return;
    m_files = std::async(std::launch::async, [this] { return sbom_files(m_entries, DpkgDatabase()); });
  }
  Result<std::vector<SbomFile>> take() {
    start();
    return m_files.get();
  }

 private:
  const RecordRequest& m_request;
  const std::vector<LayerEntry>& m_entries;
  std::future<Result<std::vector<SbomFile>>> m_files;
};

// Packs the layer. When the module/name was recorded before, a relink often produced identical bytes:
// a hash-only pass finds the DiffID first, and a layer already compressed for it is reused instead of
// being compressed again. New content pays one extra read of its inputs for that chance.
Result<Layer> pack_layer(const RecordRequest& request, const std::vector<LayerEntry>& entries, Store& store,
                         bool seen_before, SbomHashes& sbom) {
  const TarOptions tar{request.mtime};
  const Compression compression = request.compression;
  std::optional<Digest> expected;
  if (seen_before) {
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
  if (auto s = write_tar(entries, tar, hash_thread ? *hash_thread : static_cast<ByteSink&>(hashing)); !s) {
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

// What a record takes from its base image: the manifest (its layers) and the config it extends.
struct BaseParts {
  Manifest manifest;
  ImageConfig config;
};

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

std::string oci_layer_type(const std::string& media_type) {
  // Docker's layer types name the same bytes; the manifest arec writes is pure OCI.
  if (media_type == media_type::k_docker_layer_gzip) return std::string(media_type::k_layer_gzip);
  if (media_type == "application/vnd.docker.image.rootfs.diff.tar") return std::string(media_type::k_layer_tar);
  return media_type;
}

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

// The source revision of the git work tree around the working directory, or empty. "<sha>-dirty" when
// tracked files differ from HEAD, as `git describe --dirty` says: untracked files do not count.
std::string git_revision() {
  auto run = run_process({"git", "rev-parse", "--verify", "-q", "HEAD"}, {}, std::chrono::seconds(30), 256);
  if (!run || run->exit_code != 0) return {};
  std::string out = std::move(run->out);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.size() != 40 && out.size() != 64) return {};
  // git status refreshes the index first, so a file only touched is not a change.
  auto status = run_process({"git", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none"}, {},
                            std::chrono::seconds(60), 1);
  if (status && status->exit_code == 0 && !status->out.empty()) out += "-dirty";
  return out;
}

// The SBOM of the layer as a referrer of `image`, unless the store has one for that image already (an
// unchanged relink costs no second read of its files) or none is wanted.
Result<std::vector<Descriptor>> sbom_referrers(const RecordRequest& request, SbomHashes& hashes, Store& store, const Descriptor& image,
                                               const std::function<const std::string&()>& revision) {
  if (request.sbom == SbomFormat::none) return std::vector<Descriptor>{};
  auto listed = store.referrers(image.digest);
  if (!listed) return fail(listed.error());
  for (const auto& d : *listed) {
    // One cut short by a power loss does not count: it is made again like any other blob.
    if (d.artifact_type == media_type::k_spdx_json && store.holds_image(d)) return std::vector<Descriptor>{};
  }
  SbomFacts facts;
  auto files = hashes.take();
  if (!files) return fail(files.error());
  facts.files = std::move(*files);
  facts.module = request.module;
  facts.name = request.name;
  facts.revision = revision();
  facts.image = image.digest;
  facts.created = request.mtime;
  auto text = canonical_json(spdx_document(facts));
  if (!text) return fail(std::move(text.error()).context("writing the SBOM"));
  auto referrer = put_referrer(store, image, media_type::k_spdx_json, *text, {{std::string(annotation::k_created), rfc3339(request.mtime)}});
  if (!referrer) return fail(referrer.error());
  return std::vector<Descriptor>{*referrer};
}

}  // namespace

namespace {

// A manifest naming no variant serves one asked for with a variant (most arm64 images name none, v8
// being the default); one naming another variant does not.
bool is_for(const Platform& candidate, const Platform& wanted) {
  return candidate.os == wanted.os && candidate.architecture == wanted.architecture &&
         (wanted.variant.empty() || candidate.variant.empty() || candidate.variant == wanted.variant);
}

}  // namespace

Result<Descriptor> select_platform_manifest(const Layout& layout, const Descriptor& descriptor, std::string_view what,
                                            const std::optional<Platform>& platform) {
  if (descriptor.media_type != media_type::k_index && descriptor.media_type != media_type::k_docker_list) {
    return descriptor;
  }
  auto index = layout.read_image_index(descriptor);
  if (!index) return fail(std::move(index.error()).context(what));
  const Platform wanted = platform.value_or(host_platform());
  for (const auto& m : index->manifests) {
    if (m.platform && is_for(*m.platform, wanted)) return m;
  }
  return fail_input(std::string(what) + ": no image for " + platform_text(wanted));
}

Result<BaseImage> open_layout_base(std::string_view spec) {
  const std::string what = "base \"" + std::string(spec) + "\"";
  if (!spec.starts_with("oci:")) return fail_input(what + ": expected oci:DIR[:REF]");
  const auto rest = spec.substr(4);
  const auto colon = rest.find(':');
  const std::string dir(rest.substr(0, colon));
  const std::string ref = colon == std::string_view::npos ? std::string() : std::string(rest.substr(colon + 1));
  if (dir.empty()) return fail_input(what + ": the layout directory is empty");
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
  auto manifest = select_platform_manifest(*layout, *found, what);
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
    if (is_for(*r.manifest.platform, wanted)) return BaseImage{store, r.manifest};
    recorded += (recorded.empty() ? "" : ", ") + platform_text(*r.manifest.platform);
  }
  return fail_input(what + ": no record for " + platform_text(wanted) + " (recorded for " + recorded + ")");
}

namespace {

// The recorded entries and their runtime closure; `base_manifest` is the base's, when there is one.
Result<std::vector<LayerEntry>> layer_entries(const RecordRequest& request, const Manifest* base_manifest) {
  if (request.runtime == Runtime::none) return request.entries;
  ClosureOptions options;
  options.sysroot = request.sysroot;
  std::optional<ImageFiles> base_files;
  if (request.base) {
    options.base = [&]() -> Result<const ImageFiles*> {
      auto files = ImageFiles::read(request.base->layout, base_manifest->layers, "base image " + request.base->manifest.digest.str());
      if (!files) return fail(files.error());
      base_files = std::move(*files);
      return &*base_files;
    };
  }
  auto closure = runtime_closure(request.entries, options);
  if (!closure) return fail(closure.error());
  return merge_entries(request.entries, std::move(*closure), "the runtime closure");
}

// Dynamically linked files recorded with neither their runtime closure nor a base to provide it.
Result<std::vector<std::string>> unrunnable_warnings(const RecordRequest& request) {
  std::vector<std::string> warnings;
  if (request.runtime != Runtime::none || request.base) return warnings;
  auto dynamic = dynamic_executables(request.entries);
  if (!dynamic) return fail(dynamic.error());
  // A few are named one by one; a whole tree of them (say /usr/bin) is one warning, not a screenful.
  constexpr std::size_t k_named = 3;
  if (dynamic->size() <= k_named) {
    for (const auto& path : *dynamic) {
      warnings.push_back(path + " is dynamically linked and recorded with --runtime none and no --base: the image "
                         "holds neither its loader nor its libraries, so it cannot run it");
    }
    return warnings;
  }
  std::string named;
  for (std::size_t i = 0; i < k_named; ++i) named += (*dynamic)[i] + ", ";
  warnings.push_back(std::to_string(dynamic->size()) + " programs (" + named + "and " + std::to_string(dynamic->size() - k_named) +
                     " more) are dynamically linked and recorded with --runtime none and no --base: the image holds "
                     "neither their loader nor their libraries, so it cannot run them");
  return warnings;
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
                         const std::optional<Platform>& platform, const Layer& layer) {
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
  config.diff_ids.push_back(layer.diff_id);
  config.history.push_back({created, "arec record", "", "", false});
  merge_env(config.config, request.env);
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

}  // namespace

Result<RecordOutcome> record_image(const RecordRequest& request, Store& store) {
  // The image's platform is its files': a mix or a contradicting --platform is refused before anything else.
  auto platform = inputs_platform(request.entries, request.platform);
  if (!platform) return fail(platform.error());
  auto base = read_base(request);
  if (!base) return fail(base.error());
  if (auto s = check_base_platform(request, *base, *platform); !s) return fail(s.error());
  // The closure is resolved first: a missing library or a base too old refuses before anything is written.
  auto entries = layer_entries(request, *base ? &(*base)->manifest : nullptr);
  if (!entries) return fail(entries.error());
  auto warnings = unrunnable_warnings(request);
  if (!warnings) return fail(warnings.error());
  auto previous = store.latest(request.module, request.name);
  if (!previous) return fail(previous.error());

  auto layers = copy_base_layers(request, *base, store);
  if (!layers) return fail(layers.error());
  SbomHashes sbom(request, *entries);
  auto layer = pack_layer(request, *entries, store, previous->has_value(), sbom);
  if (!layer) return fail(layer.error());
  layers->push_back(layer->descriptor);
  auto manifest = write_image(request, image_config(request, *base, *platform, *layer), std::move(*layers), store);
  if (!manifest) return fail(manifest.error());

  // git runs once per record: the SBOM, a new record and an unchanged relink (is it a newer revision?) need it.
  std::optional<std::string> revision;
  auto revision_of_sources = [&]() -> const std::string& {
    if (!revision) revision = request.revision.empty() ? git_revision() : request.revision;
    return *revision;
  };
  auto referrers = sbom_referrers(request, sbom, store, *manifest, revision_of_sources);
  if (!referrers) return fail(referrers.error());
  // The same bytes built from a newer revision (a commit after a dirty build) are a new history entry,
  // so that `records` names the newest build that produced them; same bytes, same revision: nothing.
  if (*previous && (*previous)->manifest.digest == manifest->digest && referrers->empty() &&
      (*previous)->revision == revision_of_sources()) {
    return RecordOutcome{**previous, false, std::move(*warnings)};  // nothing new: no lock, no write
  }
  auto commit = store.commit(new_record(request, *manifest, revision_of_sources()), *referrers);
  if (!commit) return fail(commit.error());
  return RecordOutcome{commit->record, commit->changed, std::move(*warnings)};
}

}  // namespace arec
