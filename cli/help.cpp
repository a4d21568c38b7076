// Help pages, and usage errors that name the word and suggest the nearest one.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <sstream>

#include "cli/cli.hpp"

namespace arec::cli {

namespace {

// Optimal string alignment distance: edits, with a swap of two neighbours counting as one ("recrod").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// `text` broken at spaces into lines of at most `columns`, each after the first indented by `indent`.
std::string wrapped(std::string_view text, std::size_t indent, std::size_t columns) {
  std::string out;
  std::size_t column = indent;
  while (!text.empty()) {
    const auto space = text.find(' ');
    const auto word = text.substr(0, space);
    if (column > indent && column + 1 + word.size() > columns) {
      out += '\n' + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  }
  return out;
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 3;  // more than two edits away is not a typo of it
  for (const auto& candidate : candidates) {
    const auto distance = edit_distance(word, candidate);
    if (distance < best_distance && distance < word.size()) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  auto add = [&names](const CLI::App& app) {
    for (const auto* opt : app.get_options([](const CLI::Option* o) { return o->nonpositional(); })) {
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    }
  };
  add(cmd);
  if (cmd.get_parent() != nullptr) add(*cmd.get_parent());  // global options are taken after the command too
  return names;
}

void describe(CLI::App& cmd, std::string_view notes, std::initializer_list<Example> examples,
              std::string_view exit_codes) {
  std::string footer(notes);
  if (!footer.empty()) footer += "\n\n";
  footer += "Examples:\n";
  for (const auto& e : examples) footer.append("  ").append(e.line).append("\n      ").append(e.does).append("\n");
  footer.append("\nExit codes: ").append(exit_codes).append(".\n");
  footer +=
      "Global options (--store, --nodes, --self, --ca-file, -v, -q) go before or after the command; see arec --help.";
  cmd.footer(footer);
}

CLI::Validator number_check(const NumberKind& number) {
  // The value is read here, before CLI11 converts it, by the code that reads the flag's variable; the
  // message is "VALUE: why", which usage_message turns into "--flag VALUE: why".
  CLI::Validator check(
      [&number](const std::string& value) -> std::string {
        auto read = read_number(number, value);
        return read ? std::string() : value + ": " + read.error();
      },
      "");
  check.name(k_number_check);
  return check;
}

std::string command_page(const CLI::App& cmd) {
  auto page = cmd.help("arec");
  if (!page.ends_with('\n')) page += '\n';
  return page;
}

std::string main_footer() {
  std::ostringstream out;
  out << "Exit codes: 0 ok, 1 the query found something, 2 bad input or usage, 3 registry or network failure.\n"
         "Run `arec help COMMAND` or `arec COMMAND --help` for a command's page, with examples.\n\n"
         "The store is --store, else AREC_STORE, else $XDG_DATA_HOME/arec/store, else ~/.local/share/arec/store.\n"
         "The node settings are --nodes, else AREC_NODES, else built in: one node \"local\" (this machine)\n"
         "holding the registry on port 5000, so the registry is 127.0.0.1:5000.\n\n"
         "Environment (a flag takes the place of its variable; a set variable with a bad value is an error):\n";
  std::size_t width = 0;
  for (const auto& v : variables()) width = std::max(width, v.name.size());
  for (const auto& v : variables()) {
    std::string text(v.does);
    if (!v.kind.empty()) text.append(" Accepts ").append(v.accepts).append(".");
    out << "  " << v.name << std::string(width + 2 - v.name.size(), ' ') << wrapped(text, width + 4, 100) << '\n';
  }
  out << "libcurl's proxy variables (https_proxy, no_proxy, ...) apply to registry connections.";
  return out.str();
}

std::string usage_message(const CLI::App& app, const CLI::ParseError& e) {
  // The command being parsed when the error came: CLI11 lists a command as soon as it meets its name.
  const auto selected = app.get_subcommands();
  const std::string command = selected.empty() ? std::string() : selected.front()->get_name();
  std::string what = e.what();
  const std::string type = e.get_name();
  if (type == "ArgumentMismatch") {
    // "--module: At Most 1 required but received 2": a value-taking option given twice.
    if (const auto at = what.find(": At Most "); at != std::string::npos) {
      const auto received = what.substr(what.rfind(' ') + 1);
      what = what.substr(0, at) + " was given " + received + " times; give it once";
    } else if (const auto colon = what.find(": 1 required ");
               colon != std::string::npos && what.ends_with(" missing")) {
      // "--store: 1 required DIR missing"
      const auto value_type = what.substr(colon + 13, what.size() - colon - 13 - 8);
      what = what.substr(0, colon) + " needs a value (" + value_type + ")";
    }
  } else if (type == "ExcludesError") {
    // "--quiet excludes --verbose"
    if (const auto at = what.find(" excludes "); at != std::string::npos) {
      what = what.substr(0, at) + " and " + what.substr(at + 10) + " cannot be used together";
    }
  } else if (type == "ValidationError") {
    // "--threads: 40000: at most 256", from number_check: "--threads 40000: at most 256".
    if (const auto colon = what.find(": "); colon != std::string::npos && what.starts_with("--")) {
      const auto rest = what.substr(colon + 2);
      for (const char* reason : {": at least ", ": at most ", ": too large ", ": not a "}) {
        if (rest.find(reason) != std::string::npos) {
          what = what.substr(0, colon) + " " + rest;
          break;
        }
      }
    }
  } else if (type == "ConversionError") {
    // "Could not convert: --jobs = abc"
    if (what.starts_with("Could not convert: ")) {
      const auto rest = what.substr(19);
      const auto eq = rest.find(" = ");
      if (eq != std::string::npos)
        what = rest.substr(0, eq) + ": \"" + rest.substr(eq + 3) + "\" is not a valid number";
    }
  }
  if (command.empty()) return what + " (see arec --help)";
  return command + ": " + what + " (see arec " + command + " --help)";
}

std::optional<std::string> unknown_word(const CLI::App& app) {
  const auto selected = app.get_subcommands();
  if (selected.empty()) {
    const auto extra = app.remaining();
    if (extra.empty()) return "no command given (see arec --help)";
    const auto& word = extra.front();
    if (word.starts_with("-")) {
      const auto suggestion = nearest(word.substr(0, word.find('=')), option_names(app));
      return "unknown option \"" + word + "\"" + (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?") +
             " (see arec --help)";
    }
    const auto suggestion = nearest(word, command_names(app));
    return "unknown command \"" + word + "\"" +
           (suggestion.empty() ? " (see arec --help)" : "; did you mean \"" + suggestion + "\"?");
  }
  const CLI::App& cmd = *selected.front();
  auto extra = cmd.remaining();
  const auto top = app.remaining();
  extra.insert(extra.end(), top.begin(), top.end());
  if (extra.empty()) return std::nullopt;
  const auto& word = extra.front();
  const std::string see = " (see arec " + cmd.get_name() + " --help)";
  if (word.starts_with("-") && word.size() > 1) {
    const auto suggestion = nearest(word.substr(0, word.find('=')), option_names(cmd));
    return cmd.get_name() + ": unknown option \"" + word + "\"" +
           (suggestion.empty() ? see : "; did you mean \"" + suggestion + "\"?" + see);
  }
  return cmd.get_name() + ": unexpected argument \"" + word + "\"" + see;
}

}  // namespace arec::cli
