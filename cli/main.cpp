// arec: records build outputs as OCI images by module, name and digest; composes addresses late.
#include <archive.h>
#include <openssl/crypto.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <iostream>

#include "cli/cli.hpp"
#include "cli/record_stamp.hpp"
#include "cli/signing.hpp"
#include "registry-client/http.hpp"

namespace arec::cli {

namespace {

// Every command, in the order `arec --help` lists them. A command's page (description, examples, exit
// codes) is set in its add_* function.
constexpr std::array<AddCommand, 25> k_commands = {
    add_record,  add_records,   add_sbom,          add_ref,    add_check,
    add_gc,      add_resolve,   add_compose,       add_push,   add_pull,
    add_verify,  add_read_port, add_needs_rebuild, add_move,   add_registry_config,
    add_inspect, add_diff,      add_export,        add_import, add_tag,
    add_rm,      add_index,     add_key,           add_sign,   add_signing_stamp};

// %* in a pattern: the message with its control characters escaped (printable). Messages carry what
// registries, bundles and files said, and none of it may drive the terminal or forge a line.
class PrintableMessage final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    // A newline followed by two spaces starts one of the indented continuation lines arec writes (a
    // list of problems); it is kept, as it cannot begin a line of arec's own ("arec: ..."). Every other
    // control character, and every other newline, is written as text.
    std::string_view rest(msg.payload.data(), msg.payload.size());
    for (;;) {
      const auto cut = rest.find("\n  ");
      const std::string text = printable(rest.substr(0, cut));
      dest.append(text.data(), text.data() + text.size());
      if (cut == std::string_view::npos) break;
      constexpr std::string_view k_continuation = "\n  ";
      dest.append(k_continuation.data(), k_continuation.data() + k_continuation.size());
      rest.remove_prefix(cut + 3);
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<PrintableMessage>(); }
};

void setup_logging(const Globals& globals) {
  // Multi-threaded: push and pull log from their transfer workers.
  auto logger = spdlog::stderr_logger_mt("arec");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<PrintableMessage>('*').set_pattern("arec: %l: %*");
  logger->set_formatter(std::move(formatter));
  spdlog::level::level_enum level = spdlog::level::info;
  if (globals.quiet) level = spdlog::level::err;
  if (globals.verbose == 1) level = spdlog::level::debug;
  if (globals.verbose >= 2) level = spdlog::level::trace;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

std::string version_text() {
  return "arec " AREC_VERSION "\ncommit " AREC_COMMIT "\n" + std::string(archive_version_string()) + "\n" +
         OpenSSL_version(OPENSSL_VERSION) + "\nlibcurl " + http::curl_version() + "\n";
}

// `arec help [COMMAND]`: the same page as `arec COMMAND --help`.
void add_help(CLI::App& app, Action& action) {
  auto command = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("help", "Show the help of arec, or the page of a command");
  cmd->add_option("command", *command, "The command")->type_name("COMMAND");
  describe(*cmd, "", {{"arec help record", "The page of record: what it does, its options, examples, exit codes."}},
           k_exit_local);
  cmd->callback([&app, &action, command] {
    action = [&app, command]() -> Result<int> {
      if (command->empty()) {
        // Not app.help(), which shows the page of the command being run: this one.
        std::cout << app.get_formatter()->make_help(&app, "arec", CLI::AppFormatMode::Normal);
        return 0;
      }
      const auto names = command_names(app);
      if (std::find(names.begin(), names.end(), *command) == names.end()) {
        const auto suggestion = nearest(*command, names);
        return fail_input("unknown command \"" + *command + "\"" +
                          (suggestion.empty() ? " (see arec --help)" : "; did you mean \"" + suggestion + "\"?"));
      }
      std::cout << command_page(*app.get_subcommand(*command));
      return 0;
    };
  });
}

// `arec completion SHELL` and the hidden `arec __man`, which the build runs to make arec.1.
void add_generators(CLI::App& app, Action& action) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("completion",
                                 "Print a shell completion script: commands, options, and module/names from the store");
  cmd->add_option("shell", *shell, "bash, zsh or fish")->required()->type_name("bash|zsh|fish");
  describe(*cmd, "Names of records are completed from `arec records`, read when you press Tab.",
           {{"source <(arec completion bash)",
             "Completion in this bash session (or put the output in\n"
             "      /etc/bash_completion.d/arec or ~/.local/share/bash-completion/completions/arec)."},
            {"arec completion zsh > \"${fpath[1]}/_arec\"", "Completion for zsh, loaded by compinit."},
            {"arec completion fish > ~/.config/fish/completions/arec.fish", "Completion for fish."}},
           k_exit_local);
  cmd->callback([&app, &action, shell] {
    action = [&app, shell]() -> Result<int> {
      if (*shell != "bash" && *shell != "zsh" && *shell != "fish") {
        return fail_input("completion: shell \"" + *shell + "\": expected bash, zsh or fish");
      }
      std::cout << completion_script(app, *shell);
      return 0;
    };
  });
  auto out = std::make_shared<std::string>();
  auto* man = app.add_subcommand("__man", "Write the manual page arec.1")->group("");
  man->add_option("output", *out)->required();
  man->callback([&app, &action, out] {
    action = [&app, out]() -> Result<int> {
      const fs::Path path(*out);
      if (auto s = fs::write_file_atomic(fs::directory_of(path), path, manual_page(app)); !s) return fail(s.error());
      return 0;
    };
  });
}

}  // namespace

fs::Path store_dir(const Globals& globals) { return globals.settings.store; }

TransferOptions transfer_options(const Globals& globals) {
  TransferOptions options;
  options.chunk_size = globals.settings.chunk_size;
  options.retry = globals.settings.retry;
  options.progress = progress_display_for_stderr(globals.quiet ? ProgressDisplay::none : ProgressDisplay::terminal);
  return options;
}

Result<Selector> parse_selector(const std::string& text) {
  const auto at = text.find('@');
  Selector out{text.substr(0, at), std::nullopt};
  if (at == std::string::npos) return out;
  auto digest = Digest::parse(text.substr(at + 1));
  if (!digest) return fail(std::move(digest.error()).context("\"" + text + "\""));
  out.digest = *digest;
  return out;
}

std::optional<std::string> never_recorded(const fs::Path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return "does not exist yet";
  if (std::filesystem::is_directory(dir, ec) && std::filesystem::is_empty(dir, ec)) return "is empty";
  return std::nullopt;
}

Result<std::vector<Record>> read_store_records(const Globals& globals, History history) {
  const auto dir = store_dir(globals);
  if (never_recorded(dir)) return std::vector<Record>();
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  return store->records(history);
}

void add_config_option(CLI::App& cmd, std::string& config) {
  cmd.add_option("--config", config,
                 "The build configuration whose latest records are meant (default: the one recorded, or the default "
                 "configuration where several are)")
      ->type_name("NAME")
      ->check([](const std::string& text) {
        return is_config_name(text) ? std::string() : "not a configuration (1 to 64 of A-Z, a-z, 0-9 and _)";
      });
}

ConfigChoice config_choice(const Globals& globals, const std::string& config) {
  ConfigChoice choice;
  if (!config.empty()) choice.asked = config;
  choice.default_config = globals.settings.default_config;
  return choice;
}

Result<std::vector<Record>> read_store_latest(const Globals& globals, const ConfigChoice& choice) {
  const auto dir = store_dir(globals);
  if (never_recorded(dir)) return std::vector<Record>();
  auto store = Store::open_existing(dir);
  if (!store) return fail(store.error());
  std::vector<std::string> notes;
  auto records = store->latest_records(choice, notes);
  for (const auto& note : notes) spdlog::info("{}", note);
  return records;
}

Result<NodeSettings> load_settings(const Globals& globals) {
  return NodeSettings::load(globals.settings.nodes, globals.settings.self);
}

void print_json(const nlohmann::json& json) {
  std::cout << json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

int run(int argc, char** argv) {
  CLI::App app{
      "arec records CMake build outputs as reproducible OCI images, by module, name and digest,\n"
      "and composes registry addresses where they are used, never where they are built.",
      "arec"};
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the version, the commit and the versions of the libraries");
  // At most one command; a missing or unknown one is reported by unknown_word, naming it.
  app.require_subcommand(0, 1);
  app.allow_extras();
  // Global options may come before or after the command name (`arec -v push`, `arec push -v`).
  app.fallthrough();
  Globals globals;
  Flags flags;
  app.add_option("--store", flags.store, "Store directory (an OCI image layout)")->type_name("DIR");
  app.add_option("--nodes", flags.nodes, "Node settings file (JSON)")->type_name("FILE");
  app.add_option("--self", flags.self, "The node this machine is")->type_name("NODE");
  app.add_option("--ca-file", flags.ca_file, "CA bundle to trust for registries over HTTPS")->type_name("FILE");
  app.add_option(
         "--default-config", flags.default_config,
         "Configuration meant where a module/name has records of several and no --config names one (default Release)")
      ->type_name("NAME");
  auto* verbose = app.add_flag("-v,--verbose", globals.verbose, "More output (repeat for more)");
  app.add_flag("-q,--quiet", globals.quiet, "Only errors")->excludes(verbose);
  app.footer(main_footer());

  Action action;
  for (const AddCommand add : k_commands) add(app, globals, action);
  add_help(app, action);
  add_generators(app, action);
  for (auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) sub->allow_extras();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const auto selected = app.get_subcommands();
    std::cout << (selected.empty() ? app.help() : command_page(*selected.front()));
    return 0;
  } catch (const CLI::ParseError& e) {
    // Usage errors are bad input: exit 2, one line naming what was wrong. A misspelt option is the
    // cause of the required one missing (`--modul m`): name it, with the nearest known one.
    if (const auto unknown = std::string(e.get_name()) == "RequiredError" ? unknown_word(app) : std::nullopt;
        unknown && unknown->find("unknown option") != std::string::npos) {
      std::cerr << "arec: error: " << *unknown << '\n';
      return 2;
    }
    std::cerr << "arec: error: " << usage_message(app, e) << '\n';
    return 2;
  }
  if (show_version) {
    std::cout << version_text();
    return 0;
  }
  if (const auto unknown = unknown_word(app)) {
    std::cerr << "arec: error: " << *unknown << '\n';
    return 2;
  }
  setup_logging(globals);
  auto settings = read_settings(flags, process_environment());
  if (!settings) {
    spdlog::error("{}", settings.error().message);
    return 2;
  }
  globals.settings = std::move(*settings);
  apply_process_settings(globals.settings);
  // Exactly one command was given (unknown_word), and every command's callback sets `action`.
  auto result = action();
  if (!result) {
    spdlog::error("{}", result.error().message);
    switch (result.error().kind) {
      case ErrorKind::input: return 2;
      case ErrorKind::registry: return 3;
      case ErrorKind::trust: return 4;
    }
    return 2;
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
