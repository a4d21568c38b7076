// Shared pieces of the `arec` command line: global options, the command table's shape, output helpers.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "addressing/nodes.hpp"
#include "recorder/error.hpp"
#include "recorder/store.hpp"
#include "registry-client/registry.hpp"

namespace arec::cli {

// Options accepted before or after any command name.
struct Globals {
  std::string store;  // --store / AREC_STORE
  std::string nodes;  // --nodes / AREC_NODES
  std::string self;   // --self / AREC_SELF
  std::string ca_file;  // --ca-file / AREC_CA_FILE: a CA bundle to trust for registry TLS
  int verbose = 0;    // -v, repeatable
  bool quiet = false;
};

// How a command prints what it found: for people, or as JSON (--json).
enum class Output { text, json };

// What a command does once its arguments are parsed: an exit code (0, or 1 when a query found
// something), or an error that main turns into exit 2 or 3.
using Action = std::function<Result<int>()>;

// Adds one command to `app`; its callback stores the work to do in `action`.
using AddCommand = void (*)(CLI::App& app, Globals& globals, Action& action);

// The store directory from --store, AREC_STORE, or the default.
fs::Path store_dir(const Globals& globals);

// The store's records; none when nobody has recorded into it yet (the directory does not exist).
Result<std::vector<Record>> read_store_records(const Globals& globals, History history);

// The node settings from --nodes / AREC_NODES (or the built-in default) and --self / AREC_SELF.
Result<NodeSettings> load_settings(const Globals& globals);

// Writes a JSON document and a newline to stdout.
void print_json(const nlohmann::json& json);

// The registry of a reference's domain, or for an empty domain the registry the node settings give,
// read now (rule 3: an address is read where it is used, never kept).
Result<RegistryAddress> registry_for(const Globals& globals, std::string_view domain);

void add_record(CLI::App& app, Globals& globals, Action& action);
void add_records(CLI::App& app, Globals& globals, Action& action);
void add_sbom(CLI::App& app, Globals& globals, Action& action);
void add_ref(CLI::App& app, Globals& globals, Action& action);
void add_check(CLI::App& app, Globals& globals, Action& action);
void add_gc(CLI::App& app, Globals& globals, Action& action);
void add_needs_rebuild(CLI::App& app, Globals& globals, Action& action);
void add_move(CLI::App& app, Globals& globals, Action& action);
void add_resolve(CLI::App& app, Globals& globals, Action& action);
void add_compose(CLI::App& app, Globals& globals, Action& action);
void add_read_port(CLI::App& app, Globals& globals, Action& action);
void add_push(CLI::App& app, Globals& globals, Action& action);
void add_pull(CLI::App& app, Globals& globals, Action& action);
void add_verify(CLI::App& app, Globals& globals, Action& action);
void add_tag(CLI::App& app, Globals& globals, Action& action);
void add_rm(CLI::App& app, Globals& globals, Action& action);

}  // namespace arec::cli
