// `arec record` and `arec records`.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "recorder/image.hpp"
#include "recorder/sbom.hpp"
#include "registry-client/transfer.hpp"

namespace arec::cli {

namespace {

struct RecordOptions {
  std::string module;
  std::string name;
  std::vector<std::string> files;
  std::vector<std::string> dirs;
  std::string base;
  std::vector<std::string> entrypoint;
  std::vector<std::string> env;
  std::string compression = "gzip";
  std::string runtime = "auto";
  std::string target;
  std::string config;
  std::string revision;
  std::string sbom = "spdx";
  unsigned threads = 0;
  bool json = false;
};

Result<RecordRequest> make_request(const RecordOptions& o) {
  RecordRequest request;
  if (auto s = validate_record_part(o.module, "module"); !s) return fail(s.error());
  if (auto s = validate_record_part(o.name, "name"); !s) return fail(s.error());
  request.module = o.module;
  request.name = o.name;
  std::vector<LayerInput> inputs;
  for (const auto& [specs, kind] : {std::pair{&o.files, LayerInput::Kind::file}, {&o.dirs, LayerInput::Kind::directory}}) {
    for (const auto& spec : *specs) {
      auto input = parse_layer_input(kind, spec);
      if (!input) return fail(input.error());
      inputs.push_back(std::move(*input));
    }
  }
  for (const auto& kv : o.env) {
    if (kv.find('=') == std::string::npos || kv.front() == '=') {
      return fail_input("--env \"" + kv + "\": expected KEY=VALUE");
    }
  }
  if (o.sbom != "spdx" && o.sbom != "none") return fail_input("--sbom \"" + o.sbom + "\": expected spdx or none");
  request.sbom = o.sbom == "none" ? SbomFormat::none : SbomFormat::spdx;
  auto compression = parse_compression(o.compression);
  if (!compression) return fail(compression.error());
  auto mtime = source_date_epoch();
  if (!mtime) return fail(mtime.error());
  auto runtime = parse_runtime(o.runtime);
  if (!runtime) return fail(runtime.error());
  request.runtime = *runtime;
  // Every input is checked before the store is touched, so bad input leaves the store as it was.
  auto entries = collect_entries(inputs);
  if (!entries) return fail(entries.error());
  // A registry base is pulled into the store, so it is opened once the store is (run_record).
  if (o.base.starts_with("oci:")) {
    auto base = open_layout_base(o.base);
    if (!base) return fail(base.error());
    request.base = std::move(*base);
  } else if (!o.base.empty()) {
    if (auto reference = parse_base_reference(o.base); !reference) return fail(reference.error());
  }
  request.entries = std::move(*entries);
  request.entrypoint = o.entrypoint;
  request.env = o.env;
  request.compression = *compression;
  request.threads = o.threads == 0 ? default_threads() : o.threads;
  request.mtime = *mtime;
  request.target = o.target;
  request.config = o.config;
  request.revision = o.revision;
  return request;
}

Result<int> run_record(const Globals& globals, const RecordOptions& o) {
  auto request = make_request(o);
  if (!request) return fail(request.error());
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  if (!o.base.empty() && !request->base) {
    TransferOptions options;
    options.progress = progress_display_for_stderr(globals.quiet ? ProgressDisplay::none : ProgressDisplay::terminal);
    auto base = open_base(o.base, *store, [&globals](std::string_view domain) { return registry_for(globals, domain); }, options);
    if (!base) return fail(base.error());
    request->base = std::move(*base);
  }
  auto outcome = record_image(*request, *store);
  if (!outcome) return fail(outcome.error());
  for (const auto& warning : outcome->warnings) spdlog::warn("{}", warning);
  if (!outcome->changed) spdlog::debug("{} already recorded; nothing changed", outcome->record.identity());
  if (o.json) {
    auto json = to_json(outcome->record);
    json["changed"] = outcome->changed;
    print_json(json);
  } else {
    std::cout << outcome->record.identity() << '\n';
  }
  return 0;
}

// The records `filter` (MODULE or MODULE/NAME) names: a module/name's own through the history, so
// that listing one does not read every record.
Result<std::vector<Record>> read_filtered_records(const fs::Path& dir, const std::string& filter, History history) {
  if (!std::filesystem::exists(dir)) return std::vector<Record>();
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  if (const auto slash = filter.find('/'); slash != std::string::npos) {
    const auto module = std::string_view(filter).substr(0, slash);
    const auto name = std::string_view(filter).substr(slash + 1);
    if (history == History::all) return store->history_of(module, name);
    auto latest = store->latest(module, name);
    if (!latest) return fail(latest.error());
    return *latest ? std::vector<Record>{**latest} : std::vector<Record>();
  }
  auto records = store->records(history);
  if (!records) return fail(records.error());
  std::erase_if(*records, [&](const Record& r) { return !filter.empty() && r.module != filter; });
  return records;
}

// `records --history --json`: streamed, one record at a time, as print_json would print the array.
Result<int> print_history_json(const fs::Path& dir) {
  if (!std::filesystem::exists(dir)) {
    print_json(nlohmann::json::array());
    return 0;
  }
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  std::string out = "[";
  bool first = true;
  auto s = store->for_each_record(History::all, [&](Record&& r) -> Status {
    if (!first) out.push_back(',');
    first = false;
    out += to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (out.size() > (std::size_t{1} << 16)) {
      std::cout << out;
      out.clear();
    }
    return {};
  });
  if (!s) return fail(s.error());
  std::cout << out << "]\n" << std::flush;
  return 0;
}

Result<int> run_records(const Globals& globals, const std::string& filter, History history, Output output) {
  const auto dir = store_dir(globals);
  if (output == Output::json && history == History::all && filter.empty()) return print_history_json(dir);
  auto all = read_filtered_records(dir, filter, history);
  if (!all) return fail(all.error());
  std::vector<Record> records = std::move(*all);
  if (output == Output::json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : records) out.push_back(to_json(r));
    print_json(out);
    return 0;
  }
  if (records.empty()) {
    spdlog::info("no records{} in {}", filter.empty() ? "" : " for " + filter, dir.string());
    return 0;
  }
  std::size_t width = 10;
  for (const auto& r : records) width = std::max(width, r.repository().size());
  std::string out;
  auto row = [&](std::string_view repo, std::string_view digest, std::string_view recorded, std::string_view config) {
    out.append(repo).append(width + 2 - repo.size(), ' ');
    out.append(digest).append("  ").append(recorded);
    if (!config.empty()) out.append("  ").append(config);
    out.push_back('\n');
  };
  row("REPOSITORY", std::string("DIGEST") + std::string(65, ' '), "RECORDED", "");
  for (const auto& r : records) row(r.repository(), r.manifest.digest.str(), r.recorded, r.config);
  std::cout << out;
  return 0;
}

Result<int> run_sbom(const Globals& globals, const std::string& spec) {
  const auto at = spec.find('@');
  const std::string repository = spec.substr(0, at);
  const auto slash = repository.find('/');
  if (slash == std::string::npos) return fail_input("\"" + spec + "\": expected MODULE/NAME[@sha256:...]");
  const std::string module = repository.substr(0, slash);
  const std::string name = repository.substr(slash + 1);
  if (auto s = validate_record_part(module, "module"); !s) return fail(s.error());
  if (auto s = validate_record_part(name, "name"); !s) return fail(s.error());
  std::optional<Digest> digest;
  if (at != std::string::npos) {
    auto parsed = Digest::parse(spec.substr(at + 1));
    if (!parsed) return fail(std::move(parsed.error()).context("\"" + spec + "\""));
    digest = *parsed;
  }
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  auto records = digest ? store->history_of(module, name) : store->records(History::latest);
  if (!records) return fail(records.error());
  const auto found = std::find_if(records->begin(), records->end(), [&](const Record& r) {
    return r.module == module && r.name == name && (!digest || r.manifest.digest == *digest);
  });
  if (found == records->end()) return fail_input("\"" + spec + "\": no such record in " + store->dir().string());
  auto document = read_sbom(*store, found->manifest.digest);
  if (!document) return fail(document.error());
  if (!*document) return fail_input(found->identity() + ": no SBOM was recorded for it (recorded with --sbom none)");
  // The stored bytes exactly, so the output hashes to the blob's digest.
  std::cout << **document;
  if (::isatty(STDOUT_FILENO) != 0) std::cout << '\n';
  return 0;
}

}  // namespace

void add_sbom(CLI::App& app, Globals& globals, Action& action) {
  auto spec = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("sbom", "Print the SBOM (SPDX 2.3 JSON) kept for a record: the latest, or the one of DIGEST");
  cmd->add_option("record", *spec, "The record")->type_name("MODULE/NAME[@sha256:...]")->required();
  cmd->footer("Prints the stored document byte for byte: its SHA-256 is the digest of the SBOM's blob.");
  cmd->callback([&action, &globals, spec] { action = [&globals, spec] { return run_sbom(globals, *spec); }; });
}

void add_record(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand("record", "Pack outputs into a reproducible OCI image and record it as MODULE/NAME@DIGEST");
  cmd->add_option("--module", o->module, "Module the artifact belongs to (a repository path component)")->required();
  cmd->add_option("--name", o->name, "Name of the artifact within its module")->required();
  cmd->add_option("--file", o->files, "A file to pack; DEST defaults to /usr/local/bin/<basename>")
      ->type_name("SRC[=DEST]");
  cmd->add_option("--dir", o->dirs, "A directory tree to pack under DEST (default /)")->type_name("SRC[=DEST]");
  cmd->add_option("--base", o->base,
                  "Image to build on: a local OCI layout, the latest record of MODULE/NAME in the store, or a registry "
                  "reference with its domain (pulled once, by digest)")
      ->type_name("oci:DIR[:REF]|M/N|REF");
  cmd->add_option("--entrypoint", o->entrypoint, "Entrypoint argument (repeat for each)")->type_name("ARG");
  cmd->add_option("--env", o->env, "Environment variable of the image (repeatable)")->type_name("K=V");
  cmd->add_option("--compression", o->compression, "Layer compression: gzip, zstd or none")->capture_default_str();
  cmd->add_option("--runtime", o->runtime,
                  "auto: add what the dynamic loader needs to run the recorded ELF files (its loader, libraries "
                  "and their links) unless the base holds it; none: only what is named")
      ->type_name("auto|none")
      ->capture_default_str();
  cmd->add_option("--target", o->target, "Build target that produced the outputs (recorded)");
  cmd->add_option("--config", o->config, "Build configuration, e.g. Release (recorded)");
  cmd->add_option("--revision", o->revision, "Source revision to record (default: git HEAD of the working directory)");
  cmd->add_option("--sbom", o->sbom, "SBOM kept beside the record: spdx (SPDX 2.3 JSON, a referrer of the image) or none")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Compression threads (default: AREC_THREADS or all cores)");
  cmd->add_flag("--json", o->json, "Print the whole record as JSON");
  cmd->footer("Prints MODULE/NAME@sha256:... on success. Recording identical content again changes nothing.\n"
              "The mtime of every entry is SOURCE_DATE_EPOCH (default 0), so the same inputs give the same digest.");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_record(globals, *o); }; });
}

void add_records(CLI::App& app, Globals& globals, Action& action) {
  auto filter = std::make_shared<std::string>();
  auto history = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("records", "List records: the latest of each module/name, or every one");
  cmd->add_option("filter", *filter, "Only MODULE or MODULE/NAME")->type_name("M[/N]");
  cmd->add_flag("--history", *history, "Every record ever made, oldest first");
  cmd->add_flag("--json", *json, "Print a JSON array of records");
  cmd->callback([&action, &globals, filter, history, json] {
    action = [&globals, filter, history, json] { return run_records(globals, *filter, *history ? History::all : History::latest, *json ? Output::json : Output::text); };
  });
}

}  // namespace arec::cli
