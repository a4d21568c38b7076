// `arec tag` and `arec rm`: changing which records the store shows, without rewriting its history.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "recorder/store.hpp"

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
  if (auto s = validate_record_part(spec.module, "module"); !s) return fail(std::move(s.error()).context("\"" + text + "\""));
  if (auto s = validate_record_part(spec.name, "name"); !s) return fail(std::move(s.error()).context("\"" + text + "\""));
  auto selector = parse_selector(text);  // the digest after '@', if any
  if (!selector) return fail(selector.error());
  spec.digest = selector->digest;
  return spec;
}

Result<int> run_tag(const Globals& globals, const std::string& text, Output output) {
  auto spec = parse_spec(text, "MODULE/NAME@sha256:...");
  if (!spec) return fail(spec.error());
  if (!spec->digest) return fail_input("\"" + text + "\": name the record to make latest by its digest (MODULE/NAME@sha256:...)");
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  auto tagged = store->tag(spec->module, spec->name, *spec->digest);
  if (!tagged) return fail(tagged.error());
  if (output == Output::json) {
    auto json = to_json(tagged->record);
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
  auto removed = store->remove(spec->module, spec->name, spec->digest);
  if (!removed) return fail(removed.error());
  if (*removed == 0) return fail_input("\"" + text + "\": no such record in " + store->dir().string());
  auto latest = store->latest(spec->module, spec->name);
  if (!latest) return fail(latest.error());
  if (output == Output::json) {
    print_json({{"removed", *removed}, {"latest", *latest ? nlohmann::json(to_json(**latest)) : nlohmann::json(nullptr)}});
  } else {
    std::cout << "removed " << *removed << " record" << (*removed == 1 ? "" : "s") << " of " << spec->module << "/"
              << spec->name << "; " << (*latest ? "latest now " + (*latest)->identity() : std::string("none left"))
              << " (arec gc removes blobs no record needs)\n";
  }
  return 0;
}

}  // namespace

void add_tag(CLI::App& app, Globals& globals, Action& action) {
  auto spec = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("tag", "Make an older record of MODULE/NAME its latest again");
  cmd->add_option("record", *spec, "The record, by digest")->type_name("MODULE/NAME@sha256:...")->required();
  cmd->add_flag("--json", *json, "Print the new latest record as JSON");
  describe(*cmd, "Adds a history entry recorded now; nothing earlier is rewritten. Compose and push then use that digest.",
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
           {{"arec rm mesh/web", "Drops every record of mesh/web; with @DIGEST, only that one."}},
           k_exit_local);
  cmd->callback([&action, &globals, spec, json] {
    action = [&globals, spec, json] { return run_rm(globals, *spec, *json ? Output::json : Output::text); };
  });
}

}  // namespace arec::cli
