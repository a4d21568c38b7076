// `arec resolve`, `arec compose` and `arec read-port`: where services are, filling declarations, and
// the reader of what a declaration handed a consumer.
#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "addressing/compose.hpp"
#include "addressing/nodes.hpp"
#include "cli/cli.hpp"
#include "cli/record_stamp.hpp"
#include "cli/signing.hpp"
#include "port-reader/port_reader.hpp"

namespace arec::cli {

namespace {

using nlohmann::ordered_json;

// --- resolve ---

Result<int> run_resolve(const Globals& globals, const std::string& service, Output output) {
  if (!is_service_name(service))
    return fail_input("service \"" + service + "\" is not a service name ([a-z0-9][a-z0-9-]*)");
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  auto r = resolve(*settings, service);
  if (!r) return fail(r.error());
  const bool loopback = r->address_from == Resolution::AddressFrom::loopback;
  const auto endpoint = r->endpoint();
  if (output == Output::json) {
    print_json(ordered_json{{"service", r->service},
                            {"node", r->node},
                            {"address", r->address},
                            {"address_from", loopback ? "loopback" : "node"},
                            {"port", r->port ? ordered_json(*r->port) : ordered_json(nullptr)},
                            {"port_from", r->port ? "node" : "not given"},
                            {"endpoint", endpoint ? ordered_json(*endpoint) : ordered_json(nullptr)},
                            {"insecure_registry", r->insecure_registry},
                            {"settings", settings->source}});
    return 0;
  }
  const std::string address_why =
      loopback ? "loopback: node " + r->node + " has no address and is self" : "the address of node " + r->node;
  const std::string port_why = r->port ? "given to node " + r->node + " for " + r->service
                                       : "port not given: node " + r->node + " has no port for " + r->service;
  std::cout << "service   " << r->service << '\n'
            << "node      " << r->node << '\n'
            << "address   " << r->address << "  (" << address_why << ")\n"
            << "port      " << (r->port ? std::to_string(*r->port) : "-") << "  (" << port_why << ")\n"
            << "endpoint  " << (endpoint ? *endpoint : "-") << '\n'
            << "settings  " << settings->source << '\n';
  return 0;
}

// --- compose ---

struct ComposeArgs {
  std::string template_path;
  std::string out;
  std::string format;
  std::string depfile;
  std::string config;
  std::vector<std::string> trust_keys;  // --trust-key
  bool strict = false;
};

// `-` as the template: standard input.
bool from_stdin(const ComposeArgs& args) { return args.template_path == "-"; }

// True when `a` and `b` name one existing file, whatever the path or symlink (same device and inode).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Result<std::string> read_template(const ComposeArgs& args) {
  const fs::Path what = from_stdin(args) ? fs::Path("standard input") : fs::Path(args.template_path);
  std::optional<fs::Fd> opened;
  if (!from_stdin(args)) {
    auto fd = fs::open_read(args.template_path);
    if (!fd) return fail(fd.error());
    opened.emplace(std::move(*fd));
  }
  return fs::read_all(opened ? opened->get() : STDIN_FILENO, what, k_max_template_size);
}

Result<int> run_compose(const Globals& globals, const ComposeArgs& args) {
  if (!args.depfile.empty() && args.out.empty())
    return fail_input("--depfile needs -o OUT: it says what OUT was composed from");
  // Writing over the template would lose the requests it holds for good.
  if (!from_stdin(args)) {
    for (const auto& [option, path] : {std::pair{"-o", &args.out}, {"--depfile", &args.depfile}}) {
      if (!path->empty() && same_file(*path, args.template_path)) {
        return fail_input(std::string(option) + " " + *path + ": is the template " + args.template_path +
                          " itself; write to another file");
      }
    }
  }
  auto text = read_template(args);
  if (!text) return fail(std::move(text.error()).context("reading template"));
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());

  ComposeOptions options;
  options.source = from_stdin(args) ? std::string("<stdin>") : args.template_path;
  options.format = format_of(args.template_path);
  if (args.format == "json") options.format = TemplateFormat::json;
  if (args.format == "text") options.format = TemplateFormat::text;
  options.strictness = args.strict ? Strictness::strict : Strictness::lenient;
  options.configs = config_choice(globals, args.config);
  const auto store = store_dir(globals);
  options.store = store.string();
  // Each module/name a request names, read through the store's history.
  std::optional<Result<Store>> opened;
  // The image indexes the store derives over several platforms, which read_history adds to a history:
  // by digest, with the records each is made of.
  std::map<Digest, Store::LatestImage> derived;
  const HistoryReader read_history = [&](std::string_view module,
                                         std::string_view name) -> Result<std::vector<Record>> {
    if (never_recorded(store)) return std::vector<Record>();
    if (!opened) opened.emplace(Store::open_existing(store));
    if (!*opened) return fail(opened->error());
    auto history = (*opened)->history_of(module, name);
    if (!history || history->empty()) return history;
    // A module/name of several platforms is named by its index: it goes last, as the latest.
    auto image = (*opened)->latest_image(module, name);
    if (!image) return fail(image.error());
    if (*image && (*image)->is_index()) {
      // The index stands for the configuration its records are of (compose picks by configuration).
      const auto& platforms = (*image)->platforms;
      const auto& config = platforms.front().config;
      if (std::ranges::all_of(platforms, [&](const Record& r) { return r.config == config; })) {
        Record index = history->back();
        index.manifest = (*image)->descriptor;
        index.config = config;
        history->push_back(std::move(index));
        derived.emplace((*image)->descriptor.digest, **image);
      }
    }
    return history;
  };

  auto policy = trust_policy(globals, args.trust_keys);
  if (!policy) return fail(policy.error());
  if (policy->checks()) {
    // Only what a trusted key signed is filled in, judged as exactly what fills the request: the record
    // itself (whatever its history row claims it to be), or an index the store derived, through the
    // records it is made of.
    options.admit = [&](const Record& record) -> Status {
      const auto index = derived.find(record.manifest.digest);
      auto verdict = index != derived.end() ? judge_image(**opened, index->second, *policy)
                                            : judge_record(**opened, record, *policy);
      if (!verdict) return fail(verdict.error());
      if (verdict->state != SignatureState::trusted) {
        return fail(Error::trust("the record " + record.identity() + " is " + refusal(*verdict) +
                                 ", and only records signed by a trusted key are composed (sign it: arec sign)"));
      }
      return {};
    };
  }
  auto composed = compose(*text, options, *settings, read_history);
  if (!composed) return fail(composed.error());
  // At most k_max_warnings, then how many more: a template of nothing but unknown requests would
  // otherwise print a line for each of them.
  constexpr std::size_t k_max_warnings = 20;
  for (std::size_t i = 0; i < std::min(composed->warnings.size(), k_max_warnings); ++i)
    spdlog::warn("{}", composed->warnings[i]);
  if (composed->warnings.size() > k_max_warnings) {
    spdlog::warn("... and {} more warnings like these", composed->warnings.size() - k_max_warnings);
  }
  for (const auto& note : composed->notes) spdlog::info("{}", note);

  if (args.out.empty()) {
    std::cout << composed->text << std::flush;
    return 0;
  }
  const fs::Path out(args.out);
  // The depfile first: once OUT is replaced, nothing can fail any more.
  if (!args.depfile.empty()) {
    std::string rule = make_escaped(out) + ":";
    if (!from_stdin(args)) rule += " " + make_escaped(args.template_path);
    if (!globals.settings.nodes.empty()) rule += " " + make_escaped(globals.settings.nodes);
    if (composed->reads_records) rule += " " + make_escaped(store / "index.json");
    const fs::Path depfile(args.depfile);
    if (auto s = fs::write_file_atomic(fs::directory_of(depfile), depfile, rule + "\n"); !s) return fail(s.error());
  }
  if (auto s = fs::write_file_atomic(fs::directory_of(out), out, composed->text); !s) return fail(s.error());
  spdlog::debug("composed {} requests from {} into {}", composed->requests, args.template_path, args.out);
  return 0;
}

// --- read-port ---

Result<int> run_read_port(const std::string& value, std::optional<std::uint16_t> sealed, Output output) {
  auto reading = read_port(value, sealed);
  if (!reading) return fail(reading.error());
  const std::string stands =
      sealed ? "the sealed port " + std::to_string(*sealed) + " stands" : "no --sealed port was given";
  std::string_view said = "port";
  switch (reading->said) {
    case PortReading::Said::port: break;
    case PortReading::Said::empty:
      said = "empty";
      spdlog::debug("empty value: nothing said; {}", stands);
      break;
    case PortReading::Said::unfilled_request:
      said = "unfilled request";
      spdlog::warn("unfilled request {}: nothing said (was it composed by an older arec?); {}", reading->request,
                   stands);
      break;
  }
  if (output == Output::json) {
    ordered_json out{{"port", reading->port ? ordered_json(*reading->port) : ordered_json(nullptr)}, {"said", said}};
    if (!reading->request.empty()) out["request"] = reading->request;
    print_json(out);
  } else {
    std::cout << (reading->port ? std::to_string(*reading->port) : std::string()) << '\n';
  }
  return 0;
}

}  // namespace

void add_resolve(CLI::App& app, Globals& globals, Action& action) {
  auto service = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("resolve", "Where a service is: node, address and port, and how each was decided");
  cmd->add_option("service", *service, "The service, e.g. registry, store, bus")->required();
  cmd->add_flag("--json", *json, "Print service, node, address, address_from, port, port_from, endpoint as JSON");
  describe(*cmd,
           "A holder with no address resolves to 127.0.0.1 only when it is this node (--self); a port the\n"
           "holder was not given resolves to none, and no other value is guessed.",
           {{"arec resolve registry", "Where the registry is, by the node settings (built in: 127.0.0.1:5000)."},
            {"arec --nodes nodes.json --self n2 resolve registry --json",
             "The same as node n2 of nodes.json sees it, as JSON."}},
           k_exit_local);
  cmd->callback([&action, &globals, service, json] {
    action = [&globals, service, json] { return run_resolve(globals, *service, *json ? Output::json : Output::text); };
  });
}

void add_compose(CLI::App& app, Globals& globals, Action& action) {
  auto args = std::make_shared<ComposeArgs>();
  auto* cmd =
      app.add_subcommand("compose", "Fill every arec:// request of a declaration from the store and the node settings");
  cmd->add_option("template", args->template_path,
                  "The declaration to fill (YAML, JSON, .env, any text); - reads stdin")
      ->required();
  cmd->add_option("-o,--output", args->out, "Write here, atomically (default: stdout); never the template itself")
      ->type_name("OUT");
  cmd->add_flag("--strict", args->strict, "An arec:// kind this arec does not know is an error, not a warning");
  cmd->add_option("--format", args->format, "text or json (default: json for *.json and *.json.in, else text)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--depfile", args->depfile, "Also write a Makefile rule naming what OUT was composed from")
      ->type_name("FILE");
  add_config_option(*cmd, args->config);
  add_trust_key_option(*cmd, args->trust_keys);
  describe(*cmd,
           "Requests: arec://image/M/N[:TAG][@sha256:HEX][?config=C], arec://endpoint/S, arec://address/S,\n"
           "arec://port/S. An image is the latest record of M/N in the configuration the request names, else\n"
           "--config's, else the one recorded, else (several) the default (Release, or --default-config).\n"
           "A request ends where its grammar ends, so it can sit inside a connection string.\n"
           "On any error nothing is written. With a trusted key (--trust-key, AREC_TRUST_KEYS, the node\n"
           "settings' trust.keys), an image request whose record no trusted key signed is refused (exit 4).",
           {{"arec compose deploy.yaml.in -o deploy.yaml", "Fills the requests of deploy.yaml.in into deploy.yaml."},
            {"arec --nodes nodes.json compose deploy.yaml.in -o deploy.yaml --depfile deploy.yaml.d",
             "With the node settings of nodes.json, and a depfile for the build that runs it."}},
           "0 done, 2 bad input or usage, 4 a record refused by the trust policy");
  cmd->callback([&action, &globals, args] { action = [&globals, args] { return run_compose(globals, *args); }; });
}

void add_read_port(CLI::App& app, Globals&, Action& action) {
  auto value = std::make_shared<std::string>();
  auto sealed = std::make_shared<int>(0);
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("read-port", "Read a port value as a consumer does: a port, or nothing said");
  cmd->add_option("value", *value, "The value a declaration handed over (may be empty)")->required();
  auto* sealed_option =
      cmd->add_option("--sealed", *sealed, "The port sealed at genesis, which stands when nothing is said")
          ->check(number_check(k_port))
          ->type_name("PORT");
  cmd->add_flag("--json", *json, "Print port, said (port, empty, unfilled request) and the request as JSON");
  describe(*cmd,
           "Prints the port: the value's, or the sealed one when the value is empty or an unfilled arec://\n"
           "request (with a warning naming it). Anything else is an error, \"not a port\" (exit 2).",
           {{"arec read-port 5432", "Prints 5432."},
            {"arec read-port '' --sealed 5432", "Nothing said: the sealed 5432 stands."},
            {"arec read-port arec://port/db --sealed 5432 --json",
             "An unfilled request: a warning, and the sealed port as JSON."}},
           k_exit_local);
  cmd->callback([&action, value, sealed, sealed_option, json] {
    std::optional<std::uint16_t> given;
    if (sealed_option->count() > 0) given = static_cast<std::uint16_t>(*sealed);
    action = [value, given, json] { return run_read_port(*value, given, *json ? Output::json : Output::text); };
  });
}

}  // namespace arec::cli
