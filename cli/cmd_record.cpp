// `arec record` and `arec records`.
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <variant>

#include "addressing/base_spec.hpp"
#include "cli/cli.hpp"
#include "cli/record_build.hpp"
#include "cli/record_stamp.hpp"
#include "cli/signing.hpp"
#include "recorder/elf.hpp"
#include "recorder/image.hpp"
#include "recorder/sbom.hpp"
#include "registry-client/pull.hpp"

namespace arec::cli {

std::optional<std::int64_t> ImageSizes::of(const Descriptor& manifest) {
  if (const auto known = m_sizes.find(manifest.digest); known != m_sizes.end()) return known->second;
  std::optional<std::int64_t> size;
  if (auto read = read_size(manifest)) {
    size = *read;
  } else {
    spdlog::warn("{}: size unknown: {} (see arec check)", manifest.digest.str(), read.error().message);
  }
  m_sizes.emplace(manifest.digest, size);
  return size;
}

Result<std::int64_t> ImageSizes::read_size(const Descriptor& manifest) const {
  auto parsed = m_store.read_manifest(manifest);
  if (!parsed) return fail(parsed.error());
  std::int64_t size = parsed->config.size;
  for (const auto& layer : parsed->layers) size += layer.size;
  return size;
}

nlohmann::json record_json(const Record& record, std::optional<std::int64_t> size) {
  auto json = to_json(record);
  json["size"] = size ? nlohmann::json(*size) : nlohmann::json(nullptr);
  json["manifest_size"] = record.manifest.size;
  return json;
}

namespace {

constexpr NumberKind k_layer_budget{"count", "a whole number from 1 to 100", 1, k_max_layer_budget};
static_assert(k_max_layer_budget == 100, "k_layer_budget says 100");

// Which files of a warning about many are named: the first few, or all (-v).
enum class Names { first, all };

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
  std::string platform;
  std::string sysroot;
  std::string target;
  std::string config;
  std::string revision;
  std::string sbom = "spdx";
  std::string user;
  std::vector<std::string> packages;
  std::string sign_key;                 // --sign-key, else AREC_SIGNING_KEY
  std::vector<std::string> trust_keys;  // --trust-key: what a --base of the store or a registry must be signed by
  std::string stamp;                    // --stamp: run by a build (the CMake module); see record_stamp.hpp
  BuildOptions build;                   // what a CMake build tells of its outputs (record_build.hpp)
  unsigned threads = 0;
  unsigned layers = k_default_layer_budget;
  bool json = false;
  bool no_ca_certificates = false;
};

// A base in the store (a record) or going there (an image of a registry), opened once the store is
// (open_store_base), for the platform of the record.
struct StoreBase {
  BaseSpec spec;
  std::optional<Platform> platform;
};

// The request of `arec record`, and in `store_base` its base when that is in the store.
Result<RecordRequest> make_request(const Settings& settings, const RecordOptions& o,
                                   std::optional<StoreBase>& store_base, BuildFacts& build) {
  RecordRequest request;
  if (auto s = validate_record_part(o.module, "module"); !s) return fail(s.error());
  if (auto s = validate_record_part(o.name, "name"); !s) return fail(s.error());
  request.module = o.module;
  request.name = o.name;
  std::vector<LayerInput> inputs;
  for (const auto& [specs, kind] :
       {std::pair{&o.files, LayerInput::Kind::file}, {&o.dirs, LayerInput::Kind::directory}}) {
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
  auto sboms = parse_sbom_formats(o.sbom);
  if (!sboms) return fail(sboms.error());
  request.sboms = std::move(*sboms);
  request.layers = o.layers;
  auto compression = parse_compression(o.compression);
  if (!compression) return fail(compression.error());
  auto runtime = parse_runtime(o.runtime);
  if (!runtime) return fail(runtime.error());
  request.runtime = *runtime;
  if (!o.platform.empty()) {
    auto platform = parse_platform(o.platform);
    if (!platform) return fail(platform.error());
    request.platform = std::move(*platform);
  }
  if (!o.sysroot.empty()) request.sysroot = fs::Path(o.sysroot);
  if (!o.user.empty()) {
    auto user = parse_user(o.user);
    if (!user) return fail(user.error());
    request.user = std::move(*user);
  }
  for (const auto& text : o.packages) {
    auto package = parse_package(text);
    if (!package) return fail(package.error());
    request.packages.push_back(std::move(*package));
  }
  request.ca_certificates = o.no_ca_certificates ? CaCertificates::none : CaCertificates::automatic;
  // An install component is staged (into the build tree) before the store is touched.
  auto facts = prepare_build(o.build, o.config);
  if (!facts) return fail(facts.error());
  build = std::move(*facts);
  inputs.insert(inputs.end(), build.inputs.begin(), build.inputs.end());
  // Every input is checked before the store is touched, so bad input leaves the store as it was.
  auto entries = collect_entries(inputs);
  if (!entries) return fail(entries.error());
  // A registry base is pulled into the store, so it is opened once the store is (run_record).
  if (!o.base.empty()) {
    auto base = parse_base(o.base);
    if (!base) return fail(base.error());
    // From a base of several platforms, the one of the record: --platform, else its ELF files', else this machine's.
    auto platform = inputs_platform(*entries, request.platform);
    if (!platform) return fail(platform.error());
    if (const auto* layout = std::get_if<LayoutBase>(&base->kind)) {
      auto opened = open_layout_base(layout->dir, layout->ref, base->what(), *platform);
      if (!opened) return fail(opened.error());
      request.base = std::move(*opened);
    } else {
      store_base = StoreBase{std::move(*base), *platform};
    }
  }
  request.entries = std::move(*entries);
  request.entrypoint = o.entrypoint;
  request.env = o.env;
  request.compression = *compression;
  request.threads = o.threads != 0 ? o.threads : settings.threads.value_or(default_threads());
  request.mtime = settings.source_date_epoch;
  request.target = o.target;
  request.config = o.config;
  request.revision = o.revision;
  if (auto s = apply_build(build, o.build, request); !s) return fail(s.error());
  return request;
}

// Run by a build (--stamp): warns about inputs the build changes while they are recorded, then
// leaves the stamp and the depfile naming every input, DIRECTORIES trees by each of their directories.
Status finish_build_step(const RecordOptions& o, const RecordOutcome& outcome, const BuildFacts& build,
                         std::filesystem::file_time_type started) {
  RecordInputs inputs{outcome.inputs, {}};
  std::vector<fs::Path> roots;
  for (const auto& spec : o.dirs) {
    auto input = parse_layer_input(LayerInput::Kind::directory, spec);
    if (input) roots.push_back(input->source);
  }
  inputs.directories = directories_under(roots);
  add_build_inputs(build, inputs);
  for (const auto& warning : moving_input_warnings(inputs, started, outcome.record.repository()))
    spdlog::warn("{}", warning);
  return write_record_stamp(fs::Path(o.stamp), inputs);
}

// The manifest of `platform` (else this machine's) behind an image in the store, when the store holds all its blobs.
std::optional<Descriptor> complete_local_image(const Store& store, const Digest& digest,
                                               const std::optional<Platform>& platform) {
  auto index = store.read_index();
  if (!index) return std::nullopt;
  const auto listed = std::ranges::find(index->manifests, digest, &Descriptor::digest);
  if (listed == index->manifests.end() || !store.has_blob(*listed)) return std::nullopt;
  auto manifest = select_platform_manifest(store, *listed, digest.str(), platform);
  if (!manifest || !store.holds_image(*manifest)) return std::nullopt;
  return *manifest;
}

// A base the recorder reads from the store: the latest record of MODULE/NAME, no network; or an image of
// a registry, pulled into the store once: with a digest the store's copy is used when it is complete,
// without network. Under a trust policy that checks, a base named by name or tag must be signed by a
// trusted key (exit 4 otherwise); one pinned by digest is what the team pinned, taken as it is. `taken`
// says which, for the provenance.
Result<BaseImage> open_store_base(const Globals& globals, const BaseSpec& base, Store& store,
                                  const TransferOptions& options, std::string& taken) {
  const std::string what = base.what();
  if (const auto* record = std::get_if<RecordBase>(&base.kind)) {
    auto opened = open_record_base(store, record->module, record->name, options.platform);
    if (!opened || !options.checks_trust()) return opened;
    // The record of the platform taken, judged as exactly what the recorder reads.
    auto image = store.latest_image(record->module, record->name);
    if (!image) return fail(image.error());
    const auto used = std::ranges::find(image->value().platforms, opened->manifest.digest,
                                        [](const Record& r) { return r.manifest.digest; });
    if (used == image->value().platforms.end()) return fail_input(what + ": changed while it was read");
    auto verdict = judge_record(store, *used, options.policy());
    if (!verdict) return fail(verdict.error());
    if (verdict->state != SignatureState::trusted) {
      return fail(Error::trust(what + ": the record " + used->identity() + " is " + refusal(*verdict) +
                               "; a base named by module/name must be signed by a trusted key"));
    }
    taken = "signed by trusted key " + verdict->fingerprint;
    return opened;
  }
  const auto& registry = std::get<RegistryBase>(base.kind);
  TransferOptions pull_options = options;
  if (registry.digest) {
    // Pinned by digest: the bytes are what the team pinned, whoever signed them or not.
    pull_options.trust.reset();
    if (options.checks_trust()) {
      taken = "pinned by digest: taken without a signature check";
      spdlog::info("{}: pinned by digest, taken as it is (no signature checked; the provenance says so)", what);
    }
    if (auto local = complete_local_image(store, *registry.digest, options.platform)) {
      spdlog::debug("{}: using the store's copy of {}", what, registry.digest->str());
      return BaseImage{store, *local};
    }
  }
  auto address = registry_for(globals, registry.reference.domain);
  if (!address) return fail(std::move(address.error()).context(what));
  auto pulled = pull_image(store, registry.reference, *address, pull_options);
  if (!pulled) return fail(std::move(pulled.error()).context(what));
  if (!pulled->signed_by.empty()) taken = "signed by trusted key " + pulled->signed_by;
  return BaseImage{store, pulled->manifest};
}

// The lines a warning of a record is said in: the summary of many files, or each file's own warning (with
// -v, every file's).
std::vector<std::string> warning_lines(const RecordWarning& warning, Names names) {
  if (warning.summary.empty() || names == Names::all) return warning.each;
  return {warning.summary + "; -v names each"};
}

// A record's warnings in --json: as the text says them, with the count of files and those named.
nlohmann::json warnings_json(const std::vector<RecordWarning>& warnings, Names names) {
  auto out = nlohmann::json::array();
  for (const auto& w : warnings) {
    const std::size_t named = names == Names::all ? w.files.size() : std::min(w.files.size(), k_warning_named_files);
    out.push_back({{"kind", w.kind},
                   {"count", w.files.size()},
                   {"files", std::vector<std::string>(w.files.begin(), w.files.begin() + named)},
                   {"messages", warning_lines(w, names)}});
  }
  return out;
}

Result<int> run_record(const Globals& globals, const RecordOptions& o) {
  std::optional<StoreBase> store_base;
  BuildFacts build;  // holds the staged install tree until the record is made
  auto request = make_request(globals.settings, o, store_base, build);
  if (!request) return fail(request.error());
  // A key that does not load stops the record before the store is touched.
  auto key = signing_key(globals, o.sign_key);
  if (!key) return fail(key.error());
  if (*key) {
    request->sign_key = &**key;
    request->builder_id = provenance_facts(globals).builder_id;
  }
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  if (store_base) {
    auto options = transfer_options(globals);
    options.platform = store_base->platform;
    auto policy = trust_policy(globals, o.trust_keys);
    if (!policy) return fail(policy.error());
    options.trust = std::make_shared<const TrustPolicy>(std::move(*policy));
    auto base = open_store_base(globals, store_base->spec, *store, options, request->base_taken);
    if (!base) return fail(base.error());
    request->base = std::move(*base);
  }
  const auto started = std::filesystem::file_time_type::clock::now();
  auto outcome = record_image(*request, *store);
  if (!outcome) return fail(outcome.error());
  // A warning of many files is one line, its files counted; -v names every one.
  const Names names = globals.verbose > 0 ? Names::all : Names::first;
  for (const auto& warning : outcome->warnings) {
    for (const auto& line : warning_lines(warning, names)) spdlog::warn("{}", line);
  }
  for (const auto& note : outcome->notes) spdlog::info("{}", note);
  if (!o.stamp.empty()) {
    if (auto s = finish_build_step(o, *outcome, build, started); !s) return fail(s.error());
  }
  if (!outcome->changed) spdlog::debug("{} already recorded; nothing changed", outcome->record.identity());
  if (o.json) {
    auto json = record_json(outcome->record, ImageSizes(*store).of(outcome->record.manifest));
    json["changed"] = outcome->changed;
    json["warnings"] = warnings_json(outcome->warnings, names);
    print_json(json);
  } else {
    std::cout << outcome->record.identity() << '\n';
  }
  return 0;
}

enum class Columns { standard, wide };

struct RecordsOptions {
  std::string filter;
  std::string config;
  bool history = false;
  bool json = false;
  bool wide = false;
};

// What `arec records` lists: MODULE, MODULE/ (the same) or MODULE/NAME; empty for everything.
struct RecordsFilter {
  std::string module;
  std::string name;
};

Result<RecordsFilter> parse_records_filter(const std::string& text) {
  RecordsFilter filter;
  if (text.empty()) return filter;
  const auto slash = text.find('/');
  filter.module = text.substr(0, slash);
  if (slash != std::string::npos) filter.name = text.substr(slash + 1);
  const bool name_ok = slash == std::string::npos || filter.name.empty() || is_path_component(filter.name);
  if (!is_path_component(filter.module) || !name_ok) {
    return fail_input("records \"" + text +
                      "\": expected MODULE, MODULE/ or MODULE/NAME, each of lowercase letters and "
                      "digits separated by '.', '_', '__' or '-'");
  }
  return filter;
}

// The records `filter` names: one module/name's own through the history, so that listing one does not
// read every record.
Result<std::vector<Record>> read_filtered_records(const Store& store, const RecordsFilter& filter, History history,
                                                  const ConfigChoice& choice) {
  std::vector<std::string> notes;
  Result<std::vector<Record>> records = std::vector<Record>();
  if (!filter.name.empty()) {
    if (history == History::all) {
      records = store.history_of(filter.module, filter.name);
    } else {
      auto latest = store.latest(filter.module, filter.name, choice);
      if (!latest) return fail(latest.error());
      if (!latest->note.empty()) notes.push_back(std::move(latest->note));
      if (latest->record) records->push_back(std::move(*latest->record));
    }
  } else {
    records = history == History::all ? store.records(history) : store.latest_records(choice, notes);
  }
  if (!records) return fail(records.error());
  for (const auto& note : notes) spdlog::info("{}", note);
  // The history of one configuration, when one is asked for.
  std::erase_if(*records, [&](const Record& r) {
    return (!filter.module.empty() && r.module != filter.module) ||
           (history == History::all && choice.asked && r.config != *choice.asked);
  });
  return records;
}

// `records --history --json` of the whole store: streamed, one record at a time, as print_json would
// print the array.
Status print_history_json(const Store& store, ImageSizes& sizes) {
  std::string out = "[";
  bool first = true;
  auto s = store.for_each_record(History::all, [&](Record&& r) -> Status {
    if (!first) out.push_back(',');
    first = false;
    out += record_json(r, sizes.of(r.manifest)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (out.size() > (std::size_t{1} << 16)) {
      std::cout << out;
      out.clear();
    }
    return {};
  });
  if (!s) return s;
  std::cout << out << "]\n" << std::flush;
  return {};
}

Result<int> run_records(const Globals& globals, const RecordsOptions& o) {
  auto filter = parse_records_filter(o.filter);
  if (!filter) return fail(filter.error());
  const auto dir = store_dir(globals);
  const auto nothing = [&](const std::string& why) {
    if (o.json) print_json(nlohmann::json::array());
    spdlog::info("{}", why);
    return 0;
  };
  // Nothing recorded yet is an answer, not an error, whether the directory is missing or empty.
  if (const auto why = never_recorded(dir)) return nothing("no records: the store " + dir.string() + " " + *why);
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  ImageSizes sizes(*store);
  if (o.json && o.history && o.filter.empty() && o.config.empty()) {
    if (auto s = print_history_json(*store, sizes); !s) return fail(s.error());
    return 0;
  }
  auto all = read_filtered_records(*store, *filter, o.history ? History::all : History::latest,
                                   config_choice(globals, o.config));
  if (!all) return fail(all.error());
  std::vector<Record> records = std::move(*all);
  // The latest of a module/name recorded for several platforms is an index over the newest record of
  // each: one row per platform, since each is an image of its own (digest, time, revision), with the
  // PLATFORM column shown then, and the index digest (what compose and push name) in --json.
  std::map<std::string, std::string> index_of;  // identity -> digest of the index it is in
  if (!o.history) {
    auto indexes = store->indexes();
    if (!indexes) return fail(indexes.error());
    if (!indexes->empty()) {
      std::vector<Record> expanded;
      for (auto& r : records) {
        auto found = indexes->find(r.repository());
        if (found == indexes->end()) {
          expanded.push_back(std::move(r));
          continue;
        }
        for (auto& p : found->second.platforms) {
          index_of[p.identity()] = found->second.descriptor.digest.str();
          expanded.push_back(std::move(p));
        }
      }
      records = std::move(expanded);
    }
  }
  if (records.empty())
    return nothing("no records" + (o.filter.empty() ? "" : " for " + o.filter) + " in " + dir.string());
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : records) {
      auto entry = record_json(r, sizes.of(r.manifest));
      if (const auto it = index_of.find(r.identity()); it != index_of.end()) entry["index"] = it->second;
      out.push_back(std::move(entry));
    }
    print_json(out);
    return 0;
  }
  const auto columns = o.wide ? Columns::wide : Columns::standard;
  const bool platform_column = columns == Columns::standard && !index_of.empty();
  const auto platform_of = [](const Record& r) {
    return r.manifest.platform ? platform_text(*r.manifest.platform) : std::string("-");
  };
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"REPOSITORY", "DIGEST", "RECORDED", "CONFIG", "TARGET", "REVISION"});
  if (platform_column) rows.front().insert(rows.front().begin() + 1, "PLATFORM");
  if (columns == Columns::wide) {
    for (const char* name : {"SIZE", "MANIFEST_SIZE", "PLATFORM", "MEDIA_TYPE", "BASE", "SIGNED_BY", "BUILDER"})
      rows.front().push_back(name);
  }
  const auto cell = [](const std::string& value) { return value.empty() ? std::string("-") : value; };
  for (const auto& r : records) {
    auto& row = rows.emplace_back();
    row = {r.repository(), r.manifest.digest.str(), r.recorded, cell(r.config), cell(r.target), cell(r.revision)};
    if (platform_column) row.insert(row.begin() + 1, platform_of(r));
    if (columns == Columns::wide) {
      const auto size = sizes.of(r.manifest);
      const auto& p = r.manifest.platform;
      row.push_back(size ? std::to_string(*size) : "-");
      row.push_back(std::to_string(r.manifest.size));
      row.push_back(p ? platform_text(*p) : "-");
      row.push_back(r.manifest.media_type);
      row.push_back(cell(r.base_digest));
      // Who the bundles say signed it; `arec verify --trust-key` checks the signatures.
      auto verdict = judge_record(*store, r, {});
      if (!verdict) return fail(verdict.error());
      row.push_back(verdict->fingerprint.empty() ? "-" : verdict->fingerprint.substr(0, 16));
      row.push_back(cell(verdict->builder));
    }
  }
  // Fields of imported records came from outside: printed with their control characters escaped.
  for (auto& row : rows) {
    for (auto& value : row) value = printable(value);
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out.append(row[i]);
      if (i + 1 < row.size()) out.append(widths[i] + 2 - row[i].size(), ' ');
    }
    out.push_back('\n');
  }
  std::cout << out;
  return 0;
}

Result<int> run_sbom(const Globals& globals, const std::string& spec, const std::string& config,
                     const std::string& format_name) {
  auto format = parse_sbom_format(format_name);
  if (!format) return fail(format.error());
  const auto at = spec.find('@');
  const std::string repository = spec.substr(0, at);
  const auto slash = repository.find('/');
  if (slash == std::string::npos) return fail_input("\"" + spec + "\": expected MODULE/NAME[@sha256:...]");
  const std::string module = repository.substr(0, slash);
  const std::string name = repository.substr(slash + 1);
  if (auto s = validate_record_part(module, "module"); !s) return fail(s.error());
  if (auto s = validate_record_part(name, "name"); !s) return fail(s.error());
  auto selector = parse_selector(spec);  // the digest after '@', if any
  if (!selector) return fail(selector.error());
  const std::optional<Digest>& digest = selector->digest;
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  auto records = store->history_of(module, name);
  if (!records) return fail(records.error());
  // The latest is the last of the history in the configuration meant; an older one is named by its digest.
  auto chosen = choose_config(repository, configs_of(*records), config_choice(globals, config));
  if (!chosen && !digest) return fail(chosen.error());
  if (chosen && !digest && !chosen->note.empty()) spdlog::info("{}", chosen->note);
  const auto found = std::find_if(records->rbegin(), records->rend(), [&](const Record& r) {
    return digest ? r.manifest.digest == *digest : !chosen->config || r.config == *chosen->config;
  });
  if (found == records->rend()) return fail_input("\"" + spec + "\": no such record in " + store->dir().string());
  auto document = read_sbom(*store, found->manifest.digest, *format);
  if (!document) return fail(document.error());
  if (!*document) {
    std::string kept;  // the formats it has, to say which to ask for
    for (const auto other : {SbomFormat::spdx, SbomFormat::cyclonedx}) {
      auto held = read_sbom(*store, found->manifest.digest, other);
      if (held && *held) kept += std::string(kept.empty() ? "" : ", ") + std::string(sbom_format_name(other));
    }
    if (kept.empty())
      return fail_input(found->identity() + ": no SBOM was recorded for it (recorded with --sbom none)");
    return fail_input(found->identity() + ": no " + std::string(sbom_format_name(*format)) +
                      " SBOM was recorded for it (it has " + kept + "; record again with --sbom " +
                      std::string(sbom_format_name(*format)) + " to add one)");
  }
  // The stored bytes exactly, so the output hashes to the blob's digest.
  std::cout << **document;
  if (::isatty(STDOUT_FILENO) != 0) std::cout << '\n';
  return 0;
}

}  // namespace

void add_sbom(CLI::App& app, Globals& globals, Action& action) {
  auto spec = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("spdx");
  auto* cmd = app.add_subcommand(
      "sbom", "Print an SBOM kept for a record (SPDX 2.3 or CycloneDX 1.6 JSON): the latest, or the one of DIGEST");
  cmd->add_option("record", *spec, "The record")->type_name("MODULE/NAME[@sha256:...]")->required();
  add_config_option(*cmd, *config);
  cmd->add_option("--format", *format,
                  "Which document: spdx (SPDX 2.3) or cyclonedx (CycloneDX 1.6), as record --sbom kept them")
      ->type_name("spdx|cyclonedx")
      ->capture_default_str();
  describe(*cmd,
           "Prints the stored document byte for byte: its SHA-256 is the digest of the SBOM's blob, and the one a\n"
           "signed record's signature statement names (MODULE/NAME.spdx.json, MODULE/NAME.cdx.json).",
           {{"arec sbom mesh/app > app.spdx.json", "The SPDX SBOM of the latest record of mesh/app, into a file."},
            {"arec sbom --format cyclonedx mesh/app > app.cdx.json",
             "Its CycloneDX SBOM (recorded with --sbom spdx,cyclonedx), which Trivy and Grype read."}},
           k_exit_local);
  cmd->callback([&action, &globals, spec, config, format] {
    action = [&globals, spec, config, format] { return run_sbom(globals, *spec, *config, *format); };
  });
}

void add_record(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<RecordOptions>();
  auto* cmd =
      app.add_subcommand("record", "Pack outputs into a reproducible OCI image and record it as MODULE/NAME@DIGEST");
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
  cmd->add_option("--platform", o->platform,
                  "Platform of the image when no recorded file is ELF (default: this machine's); ELF files give their "
                  "own, which this must not contradict")
      ->type_name("OS/ARCH[/VARIANT]");
  cmd->add_option("--sysroot", o->sysroot,
                  "The target's root the runtime closure is taken from (default: this machine for its own platform, "
                  "/usr/TRIPLET for another, e.g. /usr/aarch64-linux-gnu of Debian's cross packages)")
      ->type_name("DIR");
  cmd->add_option("--user", o->user,
                  "The user the image runs as (the config's User, written UID:GID): a name of the image's /etc/passwd "
                  "(without a base arec writes root 0 and nonroot 65532) or a number. Without it, an image of a "
                  "program without a base runs as nonroot (65532:65532); root or 0 asks for root")
      ->type_name("NAME|UID[:GROUP|GID]");
  cmd->add_option("--package", o->packages,
                  "An installed Debian package to add as a layer of its own: its files (documentation, man pages and "
                  "locales left out) and their runtime closure; NAME:ARCH for another architecture's (repeatable)")
      ->type_name("NAME[:ARCH]");
  cmd->add_flag(
      "--no-ca-certificates", o->no_ca_certificates,
      "Leave out the CA certificates --runtime auto adds to an image holding a TLS library (libssl, libcrypto, "
      "libgnutls, libcurl)");
  cmd->add_option("--target", o->target, "Build target that produced the outputs (recorded)");
  cmd->add_option("--config", o->config, "Build configuration, e.g. Release (recorded)");
  cmd->add_option("--revision", o->revision, "Source revision to record (default: git HEAD of the working directory)");
  cmd->add_option("--stamp", o->stamp,
                  "Run by a build: once recorded, write STAMP and STAMP.d, a depfile naming every input (the CMake "
                  "module uses it)")
      ->type_name("STAMP");
  add_sign_key_option(*cmd, o->sign_key);
  add_trust_key_option(*cmd, o->trust_keys);
  add_build_options(*cmd, o->build);
  cmd->add_option("--sbom", o->sbom,
                  "SBOMs kept beside the record, each a referrer of the image: spdx (SPDX 2.3 JSON), cyclonedx "
                  "(CycloneDX 1.6 JSON), both (spdx,cyclonedx), or none")
      ->type_name("spdx|cyclonedx|spdx,cyclonedx|none")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Compression threads (default: AREC_THREADS or all cores)")
      ->check(number_check(k_threads))
      ->type_name("N");
  cmd->add_option("--layers", o->layers,
                  "At most N layers of its own (1-100; with the base's at most 127): one per Debian package of the "
                  "runtime closure, its files of no package, the build's shared libraries, the other files; past N "
                  "the smallest packages share one layer. 1: one layer of everything")
      ->check(number_check(k_layer_budget))
      ->type_name("N")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the whole record as JSON");
  describe(
      *cmd,
      "Prints MODULE/NAME@sha256:... on success. Recording identical content again changes nothing.\n"
      "The mtime of every entry is SOURCE_DATE_EPOCH (default 0), so the same inputs give the same digest.\n"
      "A program with its runtime closure is several layers, each annotated dev.arec.layer.origin: one per Debian\n"
      "package (all of its libraries, so images on the same packages share them), then files of no package, the\n"
      "build's own shared libraries and the other files; a rebuild changes only the last ones.\n"
      "An image of a program without a base (--runtime auto) has /etc/passwd and /etc/group (root 0, nonroot 65532)\n"
      "and /tmp (1777); one holding a TLS library has the CA certificates of ca-certificates, said on one line.\n"
      "With a trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys), a --base of the store\n"
      "(M/N) or of a registry named by tag must be signed by one (exit 4 otherwise); a base pinned by digest\n"
      "(REF@sha256:...) is taken as the team pinned it, and a signed record's provenance says which it was.",
      {{"arec record --module mesh --name app --file build/app",
        "Records build/app as /usr/local/bin/app in an image of mesh/app; prints mesh/app@sha256:..."},
       {"arec record --module mesh --name web --file build/server --dir public=/srv/www --entrypoint "
        "/usr/local/bin/server",
        "A program and a directory tree in one image, started as /usr/local/bin/server."},
       {"SOURCE_DATE_EPOCH=1700000000 arec record --module mesh --name app --file build/app --sbom spdx,cyclonedx "
        "--json",
        "Every mtime at that second, an SPDX and a CycloneDX SBOM beside it; the whole record printed as JSON."}},
      k_exit_trust);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_record(globals, *o); }; });
}

void add_records(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<RecordsOptions>();
  auto* cmd = app.add_subcommand("records", "List records: the latest of each module/name, or every one");
  cmd->add_option("filter", o->filter, "Only MODULE (also written MODULE/) or MODULE/NAME")->type_name("M|M/|M/N");
  cmd->add_flag("--history", o->history, "Every record ever made, oldest first");
  add_config_option(*cmd, o->config);
  auto* json = cmd->add_flag("--json", o->json, "Print a JSON array of records, every field");
  cmd->add_flag("--wide", o->wide,
                "Also the columns SIZE (config and layers), MANIFEST_SIZE, PLATFORM, MEDIA_TYPE, BASE, SIGNED_BY (the "
                "signing key's fingerprint, its first 16 digits) and BUILDER (its provenance's)")
      ->excludes(json);
  describe(*cmd,
           "Columns: REPOSITORY, DIGEST, RECORDED, CONFIG, TARGET, REVISION (- when not recorded).\n"
           "A module/name recorded in several configurations is listed in the default one (Release, or\n"
           "--default-config), saying so; --config NAME lists each module/name's latest of that one.\n"
           "A store that does not exist yet or is empty has no records: nothing is listed, exit 0.",
           {{"arec records", "The latest record of each module/name."},
            {"arec records mesh --history", "Every record of module mesh, oldest first."},
            {"arec records mesh/app --json", "The latest record of mesh/app, as JSON."}},
           k_exit_local);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_records(globals, *o); }; });
}

}  // namespace arec::cli
