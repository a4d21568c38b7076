// Shared pieces of the `arec` command line: global options, the command table's shape, output helpers.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "addressing/nodes.hpp"
#include "cli/settings.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"
#include "util/error.hpp"

namespace arec::cli {

// What every command sees: the settings (flags over environment), read once by main after the command
// line is parsed and before any command runs, and the verbosity.
struct Globals {
  Settings settings;
  int verbose = 0;  // -v, repeatable
  bool quiet = false;
};

// How a command prints what it found: for people, or as JSON (--json).
enum class Output { text, json };

// What a command does once its arguments are parsed: an exit code (0, 1 when a query found something,
// 4 when verify found a record a trusting pull would refuse), or an error that main turns into exit 2,
// 3 or 4 (ErrorKind).
using Action = std::function<Result<int>()>;

// Adds one command to `app`; its callback stores the work to do in `action`.
using AddCommand = void (*)(CLI::App& app, Globals& globals, Action& action);

// An example on a command's page: a command line that works as written, and what it does.
struct Example {
  std::string_view line;
  std::string_view does;
};

// Exit codes as a command's page states them.
inline constexpr std::string_view k_exit_local = "0 done, 2 bad input or usage";
inline constexpr std::string_view k_exit_registry = "0 done, 2 bad input or usage, 3 registry or network failure";
// Of the commands that take records in or send them out under a trust policy (docs/guarantees.md).
inline constexpr std::string_view k_exit_trust =
    "0 done, 2 bad input or usage, 3 registry or network failure, 4 refused by the trust policy";

// Sets what a command's page says after its options: notes, one to three examples, the exit codes.
// Each add_* function calls it, so a command's page lives beside the command.
void describe(CLI::App& cmd, std::string_view notes, std::initializer_list<Example> examples,
              std::string_view exit_codes);

// The page `arec help COMMAND` and `arec COMMAND --help` print.
std::string command_page(const CLI::App& cmd);
// The end of `arec --help`: exit codes, where the store and node settings come from, the environment.
std::string main_footer();

// The visible commands of `app`, and the options a command takes (its own, then the global ones).
std::vector<std::string> command_names(const CLI::App& app);
std::vector<std::string> option_names(const CLI::App& cmd);
// The candidate at most two edits from `word`, nearest first; empty when none is.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// The check of a numeric flag: read by read_number as its variable is, refused naming the range as
// "--threads 40000: at most 256". Every numeric flag has it (the test of the flags finds them by it).
inline constexpr const char* k_number_check = "NUMBER";
CLI::Validator number_check(const NumberKind& number);

// A usage error as one line naming the command and pointing to its page.
std::string usage_message(const CLI::App& app, const CLI::ParseError& e);
// After parsing: an unknown command, option or argument, with the nearest known one; nothing when all
// words were known.
std::optional<std::string> unknown_word(const CLI::App& app);

// `arec completion bash|zsh|fish` and the manual page, both from the command table.
std::string completion_script(const CLI::App& app, std::string_view shell);
std::string manual_page(const CLI::App& app);

// "1 record", "2 records": a count and its noun, in the number the count takes.
inline std::string counted(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// The store directory from --store, AREC_STORE, or the default.
fs::Path store_dir(const Globals& globals);

// How a registry command transfers: the chunk size and retry budget of the settings, 4 jobs, and the
// progress display on a terminal unless --quiet.
TransferOptions transfer_options(const Globals& globals);

// What names records on the command line: MODULE, MODULE/NAME or MODULE/NAME@DIGEST.
struct Selector {
  std::string repository;  // MODULE or MODULE/NAME
  std::optional<Digest> digest;
};
Result<Selector> parse_selector(const std::string& text);

// Why nothing was ever recorded into the store at `dir` ("does not exist yet", "is empty"), or nothing
// when there is a store to read. Such a store has no records, which is an answer, not an error.
std::optional<std::string> never_recorded(const fs::Path& dir);

// The store's records; none when nobody has recorded into it yet (the directory is missing or empty).
Result<std::vector<Record>> read_store_records(const Globals& globals, History history);

// --config NAME of the commands that read "the latest" (compose, push, verify, records, sbom, inspect).
void add_config_option(CLI::App& cmd, std::string& config);
// What --config (empty: not given) and the default configuration of the settings ask for.
ConfigChoice config_choice(const Globals& globals, const std::string& config);
// The latest record of each module/name in the configuration `choice` means (Store::latest_records),
// its notes shown; none when nobody has recorded into the store yet.
Result<std::vector<Record>> read_store_latest(const Globals& globals, const ConfigChoice& choice);

// The node settings from --nodes / AREC_NODES (or the built-in default) and --self / AREC_SELF.
Result<NodeSettings> load_settings(const Globals& globals);

// The size of the image a record names, as a puller downloads it: config and layers. Nothing when the
// manifest cannot be read (arec check says why; a warning says so). Records share manifests, so each is
// read once.
class ImageSizes {
 public:
  explicit ImageSizes(const Store& store) : m_store(store) {}
  std::optional<std::int64_t> of(const Descriptor& manifest);

 private:
  Result<std::int64_t> read_size(const Descriptor& manifest) const;
  const Store& m_store;
  std::map<Digest, std::optional<std::int64_t>> m_sizes;
};

// A record as every command's --json prints it: `size` is the image's (config and layers, ImageSizes),
// `manifest_size` its manifest's.
nlohmann::json record_json(const Record& record, std::optional<std::int64_t> size);

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
void add_registry_config(CLI::App& app, Globals& globals, Action& action);
void add_resolve(CLI::App& app, Globals& globals, Action& action);
void add_compose(CLI::App& app, Globals& globals, Action& action);
void add_read_port(CLI::App& app, Globals& globals, Action& action);
void add_push(CLI::App& app, Globals& globals, Action& action);
void add_pull(CLI::App& app, Globals& globals, Action& action);
void add_verify(CLI::App& app, Globals& globals, Action& action);
void add_inspect(CLI::App& app, Globals& globals, Action& action);
void add_diff(CLI::App& app, Globals& globals, Action& action);
void add_export(CLI::App& app, Globals& globals, Action& action);
void add_import(CLI::App& app, Globals& globals, Action& action);
void add_tag(CLI::App& app, Globals& globals, Action& action);
void add_rm(CLI::App& app, Globals& globals, Action& action);
void add_index(CLI::App& app, Globals& globals, Action& action);

}  // namespace arec::cli
