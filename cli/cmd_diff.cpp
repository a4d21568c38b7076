// `arec diff`: why two records (or images of OCI layouts) differ, in the terms of the build that made them.
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "addressing/base_spec.hpp"
#include "cli/cli.hpp"
#include "diff/image_diff.hpp"
#include "recorder/image.hpp"

namespace arec::cli {

namespace {

struct DiffOptions {
  std::vector<std::string> sides;
  std::vector<std::string> configs;  // --config: one for both sides, or one per side
  std::string platform;
  std::vector<std::string> paths;  // --path GLOB
  bool json = false;
  bool stat = false;
  bool files_only = false;
};

constexpr std::string_view k_side_grammar = "MODULE/NAME, MODULE/NAME@DIGEST, MODULE/NAME~K or oci:DIR[:REF]";

// What a side names, once opened: the layout it is read from stays open as long as the diff runs.
struct OpenedSide {
  std::optional<BaseImage> layout_image;  // oci:DIR:REF
  DiffSide side;
};

// `M/N~K`: K records older than the latest of its configuration (and platform); `M/N@D`: that record.
Result<OpenedSide> open_record_side(const Store& store, const Globals& globals, const std::string& text,
                                    const std::string& config, const std::optional<Platform>& platform) {
  std::string repository = text;
  std::size_t back = 0;
  std::optional<Digest> digest;
  if (const auto tilde = text.find('~'); tilde != std::string::npos) {
    repository = text.substr(0, tilde);
    const std::string count = text.substr(tilde + 1);
    if (count.empty() || count.size() > 6 || count.find_first_not_of("0123456789") != std::string::npos) {
      return fail_input("\"" + text +
                        "\": ~K counts records back from the latest, as a number (M/N~1: the one before)");
    }
    back = std::stoul(count);
  } else {
    auto selector = parse_selector(text);
    if (!selector) return fail(selector.error());
    repository = selector->repository;
    digest = selector->digest;
  }
  const auto slash = repository.find('/');
  if (slash == std::string::npos || !is_path_component(repository.substr(0, slash)) ||
      !is_path_component(repository.substr(slash + 1))) {
    return fail_input("\"" + text + "\": not " + std::string(k_side_grammar));
  }
  auto history = store.history_of(repository.substr(0, slash), repository.substr(slash + 1));
  if (!history) return fail(history.error());
  if (history->empty())
    return fail_input("\"" + text + "\": no record of " + repository + " in the store " + store.dir().string());
  std::vector<const Record*> candidates;
  if (digest) {
    for (const auto& r : *history)
      if (r.manifest.digest == *digest) candidates.assign(1, &r);
    if (candidates.empty()) return fail_input("\"" + text + "\": no such record in the store " + store.dir().string());
  } else {
    auto chosen = choose_config(repository, configs_of(*history), config_choice(globals, config));
    if (!chosen) return fail(std::move(chosen.error()).context("\"" + text + "\""));
    if (!chosen->note.empty()) spdlog::info("{}", chosen->note);
    // Several platforms recorded: the one asked for, else this machine's, as a base is taken.
    bool several = false;
    for (const auto& r : *history) {
      several = several || (r.manifest.platform && history->front().manifest.platform &&
                            platform_text(*r.manifest.platform) != platform_text(*history->front().manifest.platform));
    }
    const Platform wanted = platform.value_or(host_platform());
    for (const auto& r : *history) {
      if (chosen->config && r.config != *chosen->config) continue;
      if ((several || platform) && r.manifest.platform && !serves(*r.manifest.platform, wanted)) continue;
      candidates.push_back(&r);
    }
    if (back >= candidates.size()) {
      return fail_input("\"" + text + "\": " + repository + " has " + counted(candidates.size(), "record") +
                        (chosen->config ? " of configuration " + *chosen->config : "") + ", so no ~" +
                        std::to_string(back));
    }
  }
  const Record& record = *candidates[candidates.size() - 1 - back];
  return OpenedSide{std::nullopt, DiffSide{&store, record.manifest, record, record.identity()}};
}

Result<OpenedSide> open_side(const std::optional<Store>& store, const Globals& globals, const std::string& text,
                             const std::string& config, const std::optional<Platform>& platform) {
  if (text.starts_with("oci:")) {
    auto spec = parse_base(text);
    if (!spec) return fail(spec.error());
    const auto* layout = std::get_if<LayoutBase>(&spec->kind);
    if (!layout) return fail_input("\"" + text + "\": not " + std::string(k_side_grammar));
    auto image = open_layout_base(layout->dir, layout->ref, "\"" + text + "\"", platform);
    if (!image) return fail(image.error());
    OpenedSide out{std::move(*image), {}};
    out.side = DiffSide{&out.layout_image->layout, out.layout_image->manifest, std::nullopt, text};
    return out;
  }
  if (!store) return fail_input("\"" + text + "\": no store at " + store_dir(globals).string() + " to read it from");
  return open_record_side(*store, globals, text, config, platform);
}

Result<int> run_diff(const Globals& globals, const DiffOptions& o) {
  if (o.sides.empty() || o.sides.size() > 2) return fail_input("diff: give one record (M/N) or two sides to compare");
  if (o.configs.size() > 2)
    return fail_input("--config: once for both sides, or twice (the first side's, the second's)");
  std::optional<Platform> platform;
  if (!o.platform.empty()) {
    auto parsed = parse_platform(o.platform);
    if (!parsed) return fail(parsed.error());
    platform = std::move(*parsed);
  }
  std::vector<std::string> sides = o.sides;
  if (sides.size() == 1) {
    if (sides[0].starts_with("oci:") || sides[0].find_first_of("@~") != std::string::npos) {
      return fail_input("\"" + sides[0] + "\": one side alone is MODULE/NAME (its latest against the record before)");
    }
    // With two configurations, the latest of each; else the latest against the one before it.
    sides = o.configs.size() == 2 ? std::vector{sides[0], sides[0]} : std::vector{sides[0] + "~1", sides[0]};
  }
  std::optional<Store> store;
  const bool reads_store = !sides[0].starts_with("oci:") || !sides[1].starts_with("oci:");
  if (reads_store) {
    const auto dir = store_dir(globals);
    if (auto why = never_recorded(dir)) return fail_input("the store " + dir.string() + " " + *why);
    auto opened = Store::open_existing(dir);
    if (!opened) return fail(opened.error());
    store = std::move(*opened);
  }
  const auto config_of = [&o](std::size_t i) {
    return o.configs.empty() ? std::string() : o.configs[std::min(i, o.configs.size() - 1)];
  };
  auto a = open_side(store, globals, sides[0], config_of(0), platform);
  if (!a) return fail(a.error());
  auto b = open_side(store, globals, sides[1], config_of(1), platform);
  if (!b) return fail(b.error());
  // A side read from a layout points into its OpenedSide: taken from there now that both are in place.
  if (a->layout_image) a->side.layout = &a->layout_image->layout;
  if (b->layout_image) b->side.layout = &b->layout_image->layout;
  auto diff = diff_images(a->side, b->side,
                          arec::DiffOptions{o.files_only ? FileDetail::files_only : FileDetail::full, o.paths});
  if (!diff) return fail(diff.error());
  if (o.json) {
    print_json(to_json(*diff));
  } else {
    std::cout << text_report(*diff, o.stat ? ReportStyle::stat : ReportStyle::full);
  }
  return diff->differs() ? 1 : 0;
}

}  // namespace

void add_diff(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<DiffOptions>();
  auto* cmd = app.add_subcommand("diff", "Show why two records differ: record, config, layers, files, ELF details");
  cmd->add_option("sides", o->sides, "The record before and the record after (" + std::string(k_side_grammar) + ")")
      ->required()
      ->expected(1, 2)
      ->type_name("A [B]");
  cmd->add_option("--config", o->configs,
                  "The configuration of a side's latest record (repeat: the first side's, then the second's)")
      ->type_name("NAME");
  cmd->add_option("--platform", o->platform, "Of a module/name of several platforms, the records of this one")
      ->type_name("OS/ARCH[/VARIANT]");
  cmd->add_flag("--json", o->json, "Print as JSON (schema version 1, docs/diff.md)");
  cmd->add_flag("--stat", o->stat, "Only each layer's status and the counts and bytes of its files");
  cmd->add_flag("--files-only", o->files_only, "List the changed files without looking into ELF or text files");
  cmd->add_option("--path", o->paths,
                  "Of a changed layer, only the files whose image path this glob matches ('*' matches '/' too): "
                  "compared, counted and listed (repeatable)")
      ->type_name("GLOB");
  describe(*cmd,
           "Each side is MODULE/NAME (its latest record), MODULE/NAME@DIGEST, MODULE/NAME~K (K records before\n"
           "the latest of its configuration, as git counts) or an image of an OCI layout, oci:DIR[:REF]. With one\n"
           "MODULE/NAME, its latest record is compared with the one before it; with one and --config given twice,\n"
           "the latest of each configuration.\n"
           "The report goes from the most telling difference to the least: the records' fields (revision,\n"
           "target, config, base, platform), the image config (entrypoint, env, user, working dir, labels),\n"
           "the layers matched by origin (a package's layer by its name: same, changed with the versions before\n"
           "and after, added, removed), the files of a changed layer (size, mode, owner, link, content digest,\n"
           "mtime), and inside a changed ELF file the build-id, compiler (.comment), RPATH/RUNPATH, needed\n"
           "libraries and the sections whose bytes differ, with the strings of .rodata, .comment and the debug\n"
           "strings that differ; a text file shows a unified diff (files up to 64 KiB and 1000 lines, 200 lines\n"
           "shown). Hints name known causes: a build path (-ffile-prefix-map), a time (SOURCE_DATE_EPOCH),\n"
           "another compiler, another configuration (Debug against Release: the flags that differ, from the debug\n"
           "info's DW_AT_producer). Layers of the same digest are never read; the others are streamed, never\n"
           "unpacked, and of a changed file at most 32 MiB is read into memory (a larger one is compared by digest).\n"
           "Whatever the images hold, the diff stays under 128 MiB of memory and its report is bounded: a layer of\n"
           "more entries than 48 MiB holds is compared by digest, an ELF file of more than 4096 sections too; 2000\n"
           "changed files are listed (the rest counted), 100 lines about each and 2000 in all, each cut saying\n"
           "what was left out; --path GLOB narrows it to some files. Every name is printed escaped.",
           {{"arec diff mesh/app", "What changed in mesh/app's latest record since the one before."},
            {"arec diff mesh/app~1 mesh/app --stat", "Per layer, the files added, removed and changed in two records."},
            {"arec diff mesh/app --json | jq -r '.hints[].text'",
             "The hints alone, for a script (schema in docs/diff.md)."}},
           "0 the same, 1 different, 2 bad input or no such record");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_diff(globals, *o); }; });
}

}  // namespace arec::cli
