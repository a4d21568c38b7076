// `arec inspect`: what a record (or an image in a registry) is: manifest, config, layers, referrers,
// and with --files the entries of each layer, read from the tar streams without unpacking them.
#include <stdlib.h>

#include <iomanip>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli/cli.hpp"
#include "cli/signing.hpp"
#include "registry-client/pull.hpp"
#include "store/bundle.hpp"

namespace arec::cli {

namespace {

struct InspectOptions {
  std::string reference;
  bool files = false;
  bool json = false;
  std::string config;
  std::string platform;  // --platform OS/ARCH[/VARIANT]: the record of that platform of an image index
};

constexpr std::string_view k_grammar = "MODULE/NAME[@DIGEST], or HOST[:PORT]/MODULE/NAME[:TAG][@DIGEST] for a registry";

// A directory of this run's own, removed with everything in it when the command ends.
class TemporaryDirectory {
 public:
  static Result<TemporaryDirectory> create() {
    std::error_code ec;  // temp_directory_path follows TMPDIR
    const auto tmp = std::filesystem::temp_directory_path(ec);
    std::string pattern = (ec ? std::string("/tmp") : tmp.string()) + "/arec-inspect.XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      return fail_input("creating a directory in " + pattern + ": " + fs::errno_text(errno));
    return TemporaryDirectory(pattern);
  }
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : m_path(std::exchange(other.m_path, {})) {}
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  ~TemporaryDirectory() {
    std::error_code ec;
    if (!m_path.empty()) std::filesystem::remove_all(m_path, ec);
  }
  const fs::Path& path() const { return m_path; }

 private:
  explicit TemporaryDirectory(fs::Path path) : m_path(std::move(path)) {}
  fs::Path m_path;
};

// "0", "0:0", "0:GID": uid 0, as a runtime reads the config's User.
bool is_root_user(const std::string& user) {
  const auto name = user.substr(0, user.find(':'));
  return name == "0" || name == "root";
}

void print_text(const ImageDescription& d, const std::optional<SignatureVerdict>& verdict) {
  const auto row = [](std::string_view key, const std::string& value) {
    // Values come from the image's config and the record: printed with their control characters escaped.
    std::cout << std::left << std::setw(12) << key << printable(value) << '\n';
  };
  const auto json_list = [](const nlohmann::json& value) {
    if (value.is_null()) return std::string();
    if (value.is_string()) return value.get<std::string>();
    std::string out;
    for (const auto& item : value)
      out += (out.empty() ? "" : " ") + (item.is_string() ? item.get<std::string>() : item.dump());
    return out;
  };
  row("reference", d.reference);
  if (d.record) {
    row("recorded", d.record->recorded);
    if (!d.record->target.empty()) row("target", d.record->target);
    if (!d.record->config.empty()) row("build", d.record->config);
    if (!d.record->revision.empty()) row("revision", d.record->revision);
    if (!d.record->base_digest.empty()) row("base", d.record->base_digest);
  }
  if (verdict) {
    row("signed by", verdict->fingerprint.empty() ? "nobody (unsigned)" : verdict->fingerprint);
    if (!verdict->builder.empty()) row("builder", verdict->builder);
    // A record made elsewhere and signed here on request: who signed it, besides who built it.
    if (!verdict->signer.empty()) row("signer", verdict->signer);
    // How the base was taken, as the signed provenance says: signed by a trusted key, or pinned by digest.
    if (!verdict->base.empty()) row("base taken", verdict->base);
  }
  row("manifest", d.manifest_descriptor.digest.str() + " " + d.manifest_descriptor.media_type + " " +
                      std::to_string(d.manifest_descriptor.size) + " bytes");
  row("config", d.manifest.config.digest.str() + " " + std::to_string(d.manifest.config.size) + " bytes");
  row("platform", d.platform());
  if (!d.config.created.empty()) row("created", d.config.created);
  const auto exec = to_json(d)["config"];
  if (auto v = json_list(exec["entrypoint"]); !v.empty()) row("entrypoint", v);
  if (auto v = json_list(exec["cmd"]); !v.empty()) row("cmd", v);
  if (auto v = json_list(exec["workingDir"]); !v.empty()) row("workdir", v);
  // Who the image runs as: a runtime runs an image that names no user as root, so that is said too.
  const auto user = json_list(exec["user"]);
  row("user", user.empty() ? "root (the config names no user)" : user + (is_root_user(user) ? " (root)" : ""));
  if (exec["env"].is_array()) {
    for (const auto& e : exec["env"]) row("env", e.is_string() ? e.get<std::string>() : e.dump());
  }
  for (std::size_t i = 0; i < d.manifest.layers.size(); ++i) {
    const auto& layer = d.manifest.layers[i];
    const auto origin = layer.annotation(annotation::k_layer_origin);
    row("layer", layer.digest.str() + " " + layer.media_type + " " + std::to_string(layer.size) + " bytes" +
                     (origin.empty() ? "" : " " + origin));
    if (i >= d.files.size()) continue;
    for (const auto& f : d.files[i]) {
      // A device shows "major,minor" where a file shows its size, as `tar tv` does.
      const bool device = f.other_kind == 'c' || f.other_kind == 'b';
      const std::string size =
          device ? std::to_string(f.major) + "," + std::to_string(f.minor) : std::to_string(f.size);
      std::cout << "  " << mode_string(f) << ' ' << std::right << std::setw(10) << size << ' ' << printable(f.path);
      if (f.type == LayerFile::Type::symlink) std::cout << " -> " << printable(f.link_target);
      if (f.type == LayerFile::Type::hardlink) std::cout << " link to " << printable(f.link_target);
      std::cout << '\n';
    }
  }
  for (const auto& r : d.referrers) {
    const Descriptor& m = r.descriptor;
    row("referrer", m.digest.str() + " " + (m.artifact_type.empty() ? m.media_type : m.artifact_type) + " " +
                        std::to_string(r.document_size) + " bytes");
  }
}

// A record of the store: the latest of MODULE/NAME, or the one of its history with that digest.
Result<ImageDescription> inspect_record(const Globals& globals, const std::string& text, LayerListing listing,
                                        const std::string& config, const std::optional<Platform>& platform) {
  const auto at = text.find('@');
  const std::string repository = text.substr(0, at);
  const auto slash = repository.find('/');
  if (slash == std::string::npos || !is_path_component(repository.substr(0, slash)) ||
      !is_path_component(repository.substr(slash + 1))) {
    return fail_input("\"" + text + "\": not " + std::string(k_grammar));
  }
  auto selector = parse_selector(text);  // the digest after '@', if any
  if (!selector) return fail(selector.error());
  std::optional<Digest> digest = selector->digest;
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  // The module/name's own history, newest last: the latest, or the newest record of the digest.
  auto records = store->history_of(repository.substr(0, slash), repository.substr(slash + 1));
  if (!records) return fail(records.error());
  // The latest of a module/name of several platforms is an index: which platform is meant must be said,
  // rather than one shown as if it were the only one.
  if (!digest) {
    auto image = store->latest_image(repository.substr(0, slash), repository.substr(slash + 1));
    if (!image) return fail(image.error());
    if (*image && (platform || (*image)->is_index())) {
      std::string each;
      for (const auto& r : (*image)->platforms) {
        each += (each.empty() ? "" : ", ") + r.identity() +
                (r.manifest.platform ? " (" + platform_text(*r.manifest.platform) + ")" : "");
        if (platform && !digest && r.manifest.platform && serves(*r.manifest.platform, *platform))
          digest = r.manifest.digest;
      }
      if (platform && !digest) {
        return fail_input("\"" + text + "\": no record for --platform " + platform_text(*platform) +
                          " in its image: " + each);
      }
      if (!digest) {
        return fail_input("\"" + text + "\" is an image of " + std::to_string((*image)->platforms.size()) +
                          " platforms; name one with --platform OS/ARCH[/VARIANT] or by its digest: " + each);
      }
    }
  } else if (platform) {
    return fail_input(
        "\"" + text +
        "\": --platform chooses among the platforms of the latest image; a digest names one record already");
  }
  // Without a digest, the newest of the configuration meant (choose_config).
  std::optional<ChosenConfig> chosen;
  if (!digest) {
    auto c = choose_config(repository, configs_of(*records), config_choice(globals, config));
    if (!c) return fail(c.error());
    if (!c->note.empty()) spdlog::info("{}", c->note);
    chosen = std::move(*c);
  }
  std::optional<Record> found;
  for (const auto& r : *records) {
    if (digest ? r.manifest.digest == *digest : !chosen->config || r.config == *chosen->config) found = r;
  }
  if (!found) return fail_input("\"" + text + "\": no such record in the store " + store->dir().string());
  auto description = describe_image(*store, found->manifest, listing);
  if (!description) return fail(description.error());
  description->record = found;
  description->reference = found->identity();
  auto referrers = store->referrers(found->manifest.digest);
  if (!referrers) return fail(referrers.error());
  auto described = describe_referrers(*store, *referrers);
  if (!described) return fail(described.error());
  description->referrers = std::move(*described);
  return description;
}

// An image of a registry, pulled into a layout of this run's own (the store is left as it is).
Result<ImageDescription> inspect_remote(const Globals& globals, const Reference& reference, LayerListing listing) {
  auto registry = registry_for(globals, reference.domain);
  if (!registry) return fail(registry.error());
  auto dir = TemporaryDirectory::create();
  if (!dir) return fail(dir.error());
  auto layout = Store::open(dir->path() / "layout");
  if (!layout) return fail(layout.error());
  auto pulled = pull_image(*layout, reference, *registry, TransferOptions{});
  if (!pulled) return fail(pulled.error());
  auto description = describe_image(*layout, pulled->manifest, listing);
  if (!description) return fail(description.error());
  description->reference = reference.name() + "@" + pulled->manifest.digest.str();
  auto referrers = layout->referrers(pulled->image.digest);
  if (!referrers) return fail(referrers.error());
  auto described = describe_referrers(*layout, *referrers);
  if (!described) return fail(described.error());
  description->referrers = std::move(*described);
  return description;
}

Result<int> run_inspect(const Globals& globals, const InspectOptions& o) {
  const auto listing = o.files ? LayerListing::yes : LayerListing::no;
  std::optional<Platform> platform;
  if (!o.platform.empty()) {
    auto parsed = parse_platform(o.platform);
    if (!parsed) return fail(parsed.error());
    platform = std::move(*parsed);
  }
  auto reference = Reference::parse(o.reference);
  const bool remote = reference && !reference->domain.empty();
  if (remote && platform)
    return fail_input("--platform: for a record of the store; a registry image is inspected as pull picks it");
  Result<ImageDescription> description = remote ? inspect_remote(globals, *reference, listing)
                                                : inspect_record(globals, o.reference, listing, o.config, platform);
  if (!description) return fail(description.error());
  // Who the record's bundles say signed it (`arec verify --trust-key` checks them).
  std::optional<SignatureVerdict> verdict;
  if (description->record) {
    auto store = Store::open_existing(store_dir(globals));
    if (!store) return fail(store.error());
    auto judged = judge_record(*store, *description->record, {});
    if (!judged) return fail(judged.error());
    verdict = std::move(*judged);
  }
  if (o.json) {
    auto json = to_json(*description);
    if (verdict) json["signature"] = to_json(*verdict);
    print_json(json);
  } else {
    print_text(*description, verdict);
  }
  return 0;
}

}  // namespace

void add_inspect(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "Show a record's manifest, config, layers and referrers");
  cmd->add_option("reference", o->reference, std::string(k_grammar))->required()->type_name("M/N[@DIGEST]|REFERENCE");
  cmd->add_flag("--files", o->files, "List each layer's files (read from the layer, never unpacked)");
  cmd->add_flag("--json", o->json, "Print as JSON");
  cmd->add_option("--platform", o->platform, "Of a module/name of several platforms, the record of this one")
      ->type_name("OS/ARCH[/VARIANT]");
  add_config_option(*cmd, o->config);
  describe(*cmd,
           "MODULE/NAME[@DIGEST] is read from the store; a reference with a registry (HOST[:PORT]/PATH[:TAG|@DIGEST])\n"
           "from that registry, into a temporary layout: the store is not changed.",
           {{"arec inspect mesh/app", "The latest mesh/app: platform, entrypoint, environment, layers, SBOM."},
            {"arec inspect mesh/app --files --json", "The same with the layer's files, as JSON."}},
           "0 shown, 2 bad input or no such record, 3 registry or network failure");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_inspect(globals, *o); }; });
}

}  // namespace arec::cli
