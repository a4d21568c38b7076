// `arec tag`, `arec rm` and `arec index`: changing which records the store shows, without rewriting
// its history.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "store/store.hpp"

namespace arec::cli {

namespace {

struct Spec {
  std::string module;
  std::string name;
  std::optional<Digest> digest;
};

// MODULE/NAME[@sha256:...], each part checked.
Result<Spec> parse_spec(const std::string& text, const char* grammar) {
  const auto at = text.find('@');
  const std::string repository = text.substr(0, at);
  const auto slash = repository.find('/');
  if (slash == std::string::npos) return fail_input("\"" + text + "\": expected " + grammar);
  Spec spec{repository.substr(0, slash), repository.substr(slash + 1), std::nullopt};
  if (auto s = validate_record_part(spec.module, "module"); !s)
    return fail(std::move(s.error()).context("\"" + text + "\""));
  if (auto s = validate_record_part(spec.name, "name"); !s)
    return fail(std::move(s.error()).context("\"" + text + "\""));
  auto selector = parse_selector(text);  // the digest after '@', if any
  if (!selector) return fail(selector.error());
  spec.digest = selector->digest;
  return spec;
}

Result<int> run_tag(const Globals& globals, const std::string& text, Output output) {
  auto spec = parse_spec(text, "MODULE/NAME@sha256:...");
  if (!spec) return fail(spec.error());
  if (!spec->digest)
    return fail_input("\"" + text + "\": name the record to make latest by its digest (MODULE/NAME@sha256:...)");
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  auto tagged =
      store->with_writer([&](StoreWriter& writer) { return writer.tag(spec->module, spec->name, *spec->digest); });
  if (!tagged) return fail(tagged.error());
  if (output == Output::json) {
    auto json = record_json(tagged->record, ImageSizes(*store).of(tagged->record.manifest));
    json["changed"] = tagged->changed;
    print_json(json);
  } else {
    if (!tagged->changed) spdlog::info("{} is the latest already; nothing changed", tagged->record.identity());
    std::cout << tagged->record.identity() << '\n';
  }
  return 0;
}

Result<int> run_rm(const Globals& globals, const std::string& text, Output output) {
  auto spec = parse_spec(text, "MODULE/NAME[@sha256:...]");
  if (!spec) return fail(spec.error());
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  auto removed =
      store->with_writer([&](StoreWriter& writer) { return writer.remove(spec->module, spec->name, spec->digest); });
  if (!removed) return fail(removed.error());
  if (*removed == 0) return fail_input("\"" + text + "\": no such record in " + store->dir().string());
  auto latest = store->latest(spec->module, spec->name);
  if (!latest) return fail(latest.error());
  if (output == Output::json) {
    const auto latest_json =
        *latest ? record_json(**latest, ImageSizes(*store).of((*latest)->manifest)) : nlohmann::json(nullptr);
    print_json({{"removed", *removed}, {"latest", latest_json}});
  } else {
    std::cout << "removed " << *removed << " record" << (*removed == 1 ? "" : "s") << " of " << spec->module << "/"
              << spec->name << "; " << (*latest ? "latest now " + (*latest)->identity() : std::string("none left"))
              << " (arec gc removes blobs no record needs)\n";
  }
  return 0;
}

// The image of module/name: each platform's record, and the index over them when there are several.
void print_image(const std::string& repository, const Store::LatestImage& image, Output output) {
  if (output == Output::json) {
    nlohmann::json platforms = nlohmann::json::array();
    for (const auto& r : image.platforms) {
      platforms.push_back({{"platform", r.manifest.platform ? platform_text(*r.manifest.platform) : ""},
                           {"digest", r.manifest.digest.str()}});
    }
    print_json({{"repository", repository},
                {"digest", image.descriptor.digest.str()},
                {"media_type", image.descriptor.media_type},
                {"platforms", platforms}});
    return;
  }
  std::cout << repository << "@" << image.descriptor.digest.str() << (image.is_index() ? " (image index)" : "") << '\n';
  for (const auto& r : image.platforms) {
    std::cout << "  " << (r.manifest.platform ? platform_text(*r.manifest.platform) : std::string("-")) << "  "
              << r.manifest.digest.str() << '\n';
  }
}

struct IndexOptions {
  std::string repository;
  std::vector<std::string> platforms;
  bool all = false;
  bool json = false;
};

Result<int> run_index(const Globals& globals, const IndexOptions& o) {
  auto spec = parse_spec(o.repository, "MODULE/NAME");
  if (!spec) return fail(spec.error());
  if (spec->digest)
    return fail_input("\"" + o.repository +
                      "\": expected MODULE/NAME (the image is made of each platform's newest record)");
  std::vector<std::string> platforms;
  for (const auto& text : o.platforms) {
    auto platform = parse_platform(text);
    if (!platform) return fail(platform.error());
    platforms.push_back(platform_text(*platform));
  }
  const auto output = o.json ? Output::json : Output::text;
  if (platforms.empty() && !o.all) {
    if (never_recorded(store_dir(globals)))
      return fail_input(o.repository + ": no record in " + store_dir(globals).string());
    auto store = Store::open_existing(store_dir(globals));
    if (!store) return fail(store.error());
    auto image = store->latest_image(spec->module, spec->name);
    if (!image) return fail(image.error());
    if (!*image) return fail_input(o.repository + ": no record in " + store->dir().string());
    print_image(o.repository, **image, output);
    return 0;
  }
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  auto image = store->with_writer(
      [&](StoreWriter& writer) { return writer.set_platforms(spec->module, spec->name, platforms); });
  if (!image) return fail(image.error());
  print_image(o.repository, *image, output);
  return 0;
}

}  // namespace

void add_index(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<IndexOptions>();
  auto* cmd = app.add_subcommand("index", "Show or choose the platforms MODULE/NAME's image is made of");
  cmd->add_option("repository", o->repository, "The module/name")->type_name("MODULE/NAME")->required();
  auto* platform =
      cmd->add_option("--platform", o->platforms, "Make the image of these platforms' newest records only (repeat it)")
          ->type_name("OS/ARCH[/VARIANT]");
  cmd->add_flag("--all", o->all, "Make the image of every platform recorded, each its newest record")
      ->excludes(platform);
  cmd->add_flag("--json", o->json, "Print the image as JSON");
  describe(*cmd,
           "Recording MODULE/NAME for a platform replaces that platform's record in its image; with records for\n"
           "two or more platforms the image is an OCI image index over them, which compose names and push\n"
           "tags `latest`. Without options, shows the image; --platform keeps only the platforms named (one\n"
           "platform makes its newest record the latest again); --all brings back every platform recorded.",
           {{"arec index mesh/app", "The image of mesh/app: its digest and each platform's record."},
            {"arec index mesh/app --all",
             "Every platform recorded for mesh/app back in its image, each its newest record."}},
           k_exit_local);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_index(globals, *o); }; });
}

void add_tag(CLI::App& app, Globals& globals, Action& action) {
  auto spec = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("tag", "Make an older record of MODULE/NAME its latest again");
  cmd->add_option("record", *spec, "The record, by digest")->type_name("MODULE/NAME@sha256:...")->required();
  cmd->add_flag("--json", *json, "Print the new latest record as JSON");
  describe(*cmd,
           "Adds a history entry recorded now; nothing earlier is rewritten. Compose and push then use that digest.",
           {{"arec tag \"mesh/app@$(arec records mesh/app --history --json | jq -r '.[0].digest')\"",
             "Makes the first record of mesh/app its latest again."}},
           k_exit_local);
  cmd->callback([&action, &globals, spec, json] {
    action = [&globals, spec, json] { return run_tag(globals, *spec, *json ? Output::json : Output::text); };
  });
}

void add_rm(CLI::App& app, Globals& globals, Action& action) {
  auto spec = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("rm", "Drop the records of MODULE/NAME, or the one of DIGEST, from the store");
  cmd->add_option("record", *spec, "The records")->type_name("MODULE/NAME[@sha256:...]")->required();
  cmd->add_flag("--json", *json, "Print what was removed as JSON");
  describe(*cmd, "The latest becomes the newest record left. Blobs stay until `arec gc` removes them.",
           {{"arec rm mesh/web", "Drops every record of mesh/web; with @DIGEST, only that one."}}, k_exit_local);
  cmd->callback([&action, &globals, spec, json] {
    action = [&globals, spec, json] { return run_rm(globals, *spec, *json ? Output::json : Output::text); };
  });
}

}  // namespace arec::cli
