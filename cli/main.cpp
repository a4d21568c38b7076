// arec: records build outputs as OCI images by module, name and digest; composes addresses late.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <iostream>

#include "cli/cli.hpp"

namespace arec::cli {

namespace {

// Every command, in the order `arec --help` lists them.
constexpr std::array<AddCommand, 16> k_commands = {add_record,  add_records, add_sbom, add_ref,  add_check, add_gc,
                                                   add_resolve, add_compose, add_push, add_pull,  add_verify,
                                                   add_read_port, add_needs_rebuild, add_move, add_tag, add_rm};

void setup_logging(const Globals& globals) {
  // Multi-threaded: push and pull log from their transfer workers.
  auto logger = spdlog::stderr_logger_mt("arec");
  logger->set_pattern("arec: %l: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (globals.quiet) level = spdlog::level::err;
  if (globals.verbose == 1) level = spdlog::level::debug;
  if (globals.verbose >= 2) level = spdlog::level::trace;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

}  // namespace

fs::Path store_dir(const Globals& globals) { return globals.store.empty() ? default_store_dir() : fs::Path(globals.store); }

Result<std::vector<Record>> read_store_records(const Globals& globals, History history) {
  const auto dir = store_dir(globals);
  if (!std::filesystem::exists(dir)) return std::vector<Record>();
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  return store->records(history);
}

Result<NodeSettings> load_settings(const Globals& globals) { return NodeSettings::load(globals.nodes, globals.self); }

void print_json(const nlohmann::json& json) { std::cout << json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n'; }

int run(int argc, char** argv) {
  CLI::App app{"arec records CMake build outputs as reproducible OCI images, by module, name and digest,\n"
               "and composes registry addresses where they are used, never where they are built.",
               "arec"};
  app.set_version_flag("--version", std::string(AREC_VERSION));
  app.require_subcommand(1);
  // Global options may come before or after the command name (`arec -v push`, `arec push -v`).
  app.fallthrough();
  Globals globals;
  app.add_option("--store", globals.store, "Store directory (an OCI image layout)")
      ->envname("AREC_STORE")
      ->type_name("DIR");
  app.add_option("--nodes", globals.nodes, "Node settings file (JSON)")->envname("AREC_NODES")->type_name("FILE");
  app.add_option("--self", globals.self, "The node this machine is")->envname("AREC_SELF")->type_name("NODE");
  app.add_option("--ca-file", globals.ca_file, "CA bundle to trust for registries over HTTPS")
      ->envname("AREC_CA_FILE")
      ->type_name("FILE");
  app.add_flag("-v,--verbose", globals.verbose, "More output (repeat for more)");
  app.add_flag("-q,--quiet", globals.quiet, "Only errors");
  app.footer("Exit codes: 0 ok, 1 the query found something, 2 bad input or usage, 3 registry or network failure.\n"
             "Run `arec COMMAND --help` for a command's options.");

  Action action;
  for (const AddCommand add : k_commands) add(app, globals, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors are bad input: exit 2, one line naming what was wrong.
    std::cerr << "arec: error: " << e.what() << " (see arec --help)\n";
    return 2;
  }
  setup_logging(globals);
  // Exactly one command was given (require_subcommand), and every command's callback sets `action`.
  auto result = action();
  if (!result) {
    spdlog::error("{}", result.error().message);
    return result.error().kind == ErrorKind::registry ? 3 : 2;
  }
  return *result;
}

}  // namespace arec::cli

int main(int argc, char** argv) {
  try {
    return arec::cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "arec: error: " << e.what() << '\n';
    return 2;
  }
}
