// `arec needs-rebuild` and `arec move`: before the registry moves, and the move itself.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <memory>

#include "addressing/compose.hpp"
#include "addressing/needs_rebuild.hpp"
#include "cli/cli.hpp"
#include "cli/signing.hpp"
#include "registry-client/catalog.hpp"
#include "registry-client/move.hpp"
#include "util/fs.hpp"

namespace arec::cli {

namespace {

struct QueryOptions {
  std::vector<std::string> paths;
  std::vector<std::string> excludes;  // --exclude GLOB
  std::vector<std::string> refs;
  bool catalog = false;
  bool json = false;
};

// What a registry that does not answer means when its catalog is read.
enum class Unreachable {
  fail,  // the command cannot go on without it (exit 3)
  note,  // a plan: the catalog is reported as not checked, and the rest still answered
};

struct Rebuilds {
  std::vector<Finding> findings;
  std::size_t files_read = 0;                    // declarations read
  std::size_t files_excluded = 0;                // files --exclude left out
  std::size_t skipped_for_size = 0;              // files left unread, larger than k_max_declaration_size
  std::vector<ComposedFrom> composed;            // composed outputs recognised, with their templates
  std::vector<std::filesystem::path> templates;  // files with requests and no output recognised
  bool read_declarations = false;                // paths were given (or the current directory stood for them)
  std::string catalog_not_checked;               // why the catalog was not read, when the registry did not answer
};

// "16 MiB": the size past which a file is not read as a declaration.
std::string declaration_limit() { return std::to_string(k_max_declaration_size >> 20) + " MiB"; }

// Runs the query over declarations, --ref values and (with --catalog) the registry's own list.
Result<Rebuilds> find_rebuilds(const Globals& globals, const NodeSettings& settings, const QueryOptions& o,
                               Unreachable unreachable = Unreachable::fail) {
  // Every record: a reference pinned to a digest holds only when a record has that digest.
  auto records = read_store_records(globals, History::all);
  if (!records) return fail(records.error());
  const auto external = globals.verbose > 0 ? RebuildQuery::External::include : RebuildQuery::External::omit;
  RebuildQuery query(settings, *records, external);
  // The image index of a module/name of several platforms is what compose pins: a recorded build too.
  if (!never_recorded(store_dir(globals))) {
    auto store = Store::open_existing(store_dir(globals));
    if (!store) return fail(store.error());
    auto indexes = store->indexes();
    if (!indexes) return fail(indexes.error());
    for (const auto& [repository, image] : *indexes) query.add_image_index(repository, image.descriptor.digest.str());
  }
  if (auto s = query.scan_paths({o.paths.begin(), o.paths.end()}, o.excludes); !s) return fail(s.error());
  for (const auto& file : query.skipped_for_size()) {
    spdlog::warn("{}: not read, larger than the {} a declaration may be", file.string(), declaration_limit());
  }
  for (const auto& ref : o.refs) {
    if (auto s = query.add_reference(ref, "--ref"); !s) return fail(s.error());
  }
  Rebuilds out;
  if (o.catalog) {
    auto registry = registry_from_settings(settings, globals.settings.client);
    if (!registry) return fail(registry.error());
    TransferOptions options = transfer_options(globals);
    options.progress = ProgressDisplay::none;
    // A plan asks once: a registry that is down is reported, not waited for.
    if (unreachable == Unreachable::note) options.retry.max_attempts = 1;
    auto catalog = read_catalog(*registry, options);
    if (!catalog && catalog.error().kind == ErrorKind::registry && unreachable == Unreachable::note) {
      out.catalog_not_checked = catalog.error().message;
    } else if (!catalog) {
      return fail(catalog.error());
    } else {
      for (const auto& entry : *catalog) {
        if (entry.tags.empty()) query.add_catalog_entry(registry->host, entry.repository, "");
        for (const auto& tag : entry.tags) query.add_catalog_entry(registry->host, entry.repository, tag);
      }
    }
  }
  out.findings = query.findings(external);
  out.files_read = query.files_read();
  out.files_excluded = query.files_excluded();
  out.skipped_for_size = query.skipped_for_size().size();
  out.composed = query.composed_outputs();
  out.templates = query.templates();
  out.read_declarations = !o.paths.empty();
  return out;
}

// "(read 14,000 files)": how much an answer stands on, said beside it, with the files it does not
// stand on ("(read 3 files, skipped 1 larger than 16 MiB)").
std::string files_read(const Rebuilds& rebuilds) {
  if (!rebuilds.read_declarations) return "";
  std::string out = " (read " + std::to_string(rebuilds.files_read) + (rebuilds.files_read == 1 ? " file" : " files");
  if (rebuilds.skipped_for_size > 0) {
    out += ", skipped " + std::to_string(rebuilds.skipped_for_size) + " larger than " + declaration_limit();
  }
  if (rebuilds.files_excluded > 0) out += ", excluded " + std::to_string(rebuilds.files_excluded);
  return out + ")";
}

void print_findings(const std::vector<Finding>& findings, std::string_view read = "") {
  // References and sources come from files and from the registry's catalog: escaped before printing.
  std::vector<std::array<std::string, 4>> rows;
  for (const auto& f : findings)
    rows.push_back({printable(f.reference), printable(f.source), std::string(kind_name(f.kind)), printable(f.action)});
  std::size_t widths[3] = {9, 6, 4};
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < 3; ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  auto row = [&](std::string_view a, std::string_view b, std::string_view c, std::string_view d) {
    std::cout << a << std::string(widths[0] + 2 - a.size(), ' ') << b << std::string(widths[1] + 2 - b.size(), ' ') << c
              << std::string(widths[2] + 2 - c.size(), ' ') << d << '\n';
  };
  row("REFERENCE", "SOURCE", "KIND", "ACTION");
  for (const auto& r : rows) row(r[0], r[1], r[2], r[3]);
  const auto count = count_breaking(findings);
  std::cout << count.references << (count.references == 1 ? " reference" : " references") << " in " << count.occurrences
            << (count.occurrences == 1 ? " place" : " places") << " would break on a registry move" << read << "\n";
}

nlohmann::json findings_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    nlohmann::json row = {
        {"reference", f.reference}, {"source", f.source}, {"kind", kind_name(f.kind)}, {"action", f.action}};
    if (!f.file.empty()) {
      row["file"] = f.file;
      row["line"] = f.line;
      row["column"] = f.column;
    }
    out.push_back(std::move(row));
  }
  return out;
}

bool anything_breaks(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return breaks(f.kind); });
}

Result<int> run_needs_rebuild(const Globals& globals, QueryOptions o) {
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  // Nothing named: the declarations are where the command is run.
  if (o.paths.empty() && o.refs.empty() && !o.catalog) o.paths.emplace_back(".");
  auto rebuilds = find_rebuilds(globals, *settings, o);
  if (!rebuilds) return fail(rebuilds.error());
  // An all-clear over nothing read would be a false one.
  if (rebuilds->read_declarations && rebuilds->files_read == 0) {
    std::string named;
    for (const auto& path : o.paths) named += (named.empty() ? "" : ", ") + path;
    return fail_input("needs-rebuild read no file: " + named + " holds no text file (of at most " +
                      declaration_limit() + ")");
  }
  const auto& findings = rebuilds->findings;
  if (o.json) {
    print_json(findings_json(findings));
  } else if (findings.empty()) {
    spdlog::info("nothing would break on a registry move{}", files_read(*rebuilds));
  } else {
    print_findings(findings, files_read(*rebuilds));
  }
  return anything_breaks(findings) ? 1 : 0;
}

struct MoveOptions {
  QueryOptions query;
  std::string to;
  std::optional<std::int64_t> port;
  bool apply = false;
  bool force = false;
  bool history = false;
  bool json = false;
  unsigned jobs = 4;
  std::vector<std::string> trust_keys;  // --trust-key
};

// What to compose again after a move: each composed output from its template, then each template whose
// output is not known. Commands to run, with the node settings after the move.
struct ComposeAgain {
  std::string template_path;
  std::string output;  // empty: not known
  std::string command;
};

std::vector<ComposeAgain> compose_again(const Rebuilds& rebuilds, const std::string& nodes_file) {
  std::vector<ComposeAgain> out;
  const std::string arec = "arec --nodes " + nodes_file + " compose ";
  for (const auto& c : rebuilds.composed)
    out.push_back({c.template_path, c.output, arec + c.template_path + " -o " + c.output});
  for (const auto& t : rebuilds.templates) out.push_back({t.string(), "", arec + t.string() + " -o OUTPUT"});
  return out;
}

void print_compose_again(const std::vector<ComposeAgain>& commands) {
  if (commands.empty()) return;
  std::cout << "\nafter the move, compose again what was composed from the node settings:\n";
  for (const auto& c : commands) std::cout << "  " << printable(c.command) << '\n';
}

// With a registry_name, each node's runtime maps it to the registry: after the move every node writes
// that mapping again, bridging the old address for what was composed to it. Empty without one.
std::vector<std::string> registry_config_commands(const MovePlan& plan, const std::string& nodes_file) {
  std::vector<std::string> out;
  if (plan.moved.registry_name.empty()) return out;
  for (const auto& [node, unused] : plan.moved.nodes) {
    out.push_back("arec --nodes " + nodes_file + " --self " + node + " registry-config containerd --bridge " +
                  plan.from.host);
  }
  return out;
}

void print_registry_config(const std::vector<std::string>& commands) {
  if (commands.empty()) return;
  std::cout << "\nthen on each node, map the registry's name to its new address, bridging the old one (podman, CRI-O: "
               "registry-config podman):\n";
  for (const auto& c : commands) std::cout << "  " << c << '\n';
}

nlohmann::ordered_json node_json(const std::string& node, const RegistryAddress& registry) {
  return {{"node", node}, {"registry", registry.host}};
}

Result<int> run_move(const Globals& globals, MoveOptions o) {
  if (globals.settings.nodes.empty()) {
    return fail_input("move rewrites the node settings: name the file with --nodes FILE (or AREC_NODES)");
  }
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  auto records = read_store_records(globals, o.history ? History::all : History::latest);
  if (!records) return fail(records.error());
  auto plan = plan_move(*settings, o.to, o.port, std::move(*records), globals.settings.client);
  if (!plan) return fail(plan.error());
  // Ordered: the settings after the move keep the file's key order here too.
  nlohmann::ordered_json json = {{"from", node_json(plan->from_node, plan->from)},
                                 {"to", node_json(plan->to_node, plan->to)}};
  const auto print = [&json] {
    std::cout << json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  };
  if (plan->already_there) {
    if (o.json) {
      json["nothing_to_move"] = true;
      print();
    } else {
      std::cout << "nothing to move: node " << plan->to_node << " holds the registry at " << plan->to.host
                << " already\n";
    }
    return 0;
  }

  // The registry that moves is the one to ask what it holds; a plan goes on without it, a move does not.
  o.query.catalog = true;
  auto rebuilds = find_rebuilds(globals, *settings, o.query, o.apply ? Unreachable::fail : Unreachable::note);
  if (!rebuilds) return fail(rebuilds.error());
  const auto& findings = rebuilds->findings;
  const bool refused = anything_breaks(findings) && !o.force;
  const std::string diff = settings_diff(*plan, globals.settings.nodes);

  if (o.json) {
    json["nothing_to_move"] = false;
    json["findings"] = findings_json(findings);
    json["declarations"] = {{"read", rebuilds->files_read},
                            {"skipped_for_size", rebuilds->skipped_for_size},
                            {"excluded", rebuilds->files_excluded}};
    json["catalog"] = rebuilds->catalog_not_checked.empty()
                          ? nlohmann::ordered_json{{"checked", true}}
                          : nlohmann::ordered_json{{"checked", false}, {"reason", rebuilds->catalog_not_checked}};
    json["records"] = nlohmann::ordered_json::array();
    for (const auto& r : plan->records) json["records"].push_back(r.identity());
    json["settings"] = {{"file", globals.settings.nodes},
                        {"diff", diff},
                        {"after", read_json<nlohmann::ordered_json>(plan->settings_after).value_or(nullptr)}};
    if (const auto commands = registry_config_commands(*plan, globals.settings.nodes); !commands.empty())
      json["registry_config"] = commands;
    json["compose"] = nlohmann::ordered_json::array();
    for (const auto& c : compose_again(*rebuilds, globals.settings.nodes)) {
      json["compose"].push_back(
          {{"template", c.template_path},
           {"output", c.output.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.output)},
           {"command", c.command}});
    }
    json["refused"] = refused;
    json["applied"] = false;
  } else {
    std::cout << "moving the registry from node " << plan->from_node << " (" << plan->from.host << ") to node "
              << plan->to_node << " (" << plan->to.host << ")\n";
    if (anything_breaks(findings)) {
      std::cout << "\nthese would break when the registry moves (arec needs-rebuild):\n";
      print_findings(findings, files_read(*rebuilds));
    } else if (!findings.empty()) {
      // Addresses of services that stay where they are, and what compose writes again: said, never a
      // reason to refuse.
      const bool composed =
          std::ranges::any_of(findings, [](const Finding& f) { return f.kind == FindingKind::composed; });
      std::cout << (composed ? "\nnothing would break when the registry moves; composed outputs are composed again "
                               "after it (listed last), the rest stays as it is:\n"
                             : "\nnothing would break when the registry moves; these stay as they are:\n");
      print_findings(findings, files_read(*rebuilds));
    } else {
      std::cout << "\nnothing would break when the registry moves" << files_read(*rebuilds) << "\n";
    }
    if (!rebuilds->catalog_not_checked.empty()) {
      std::cout << "the registry's catalog was not checked (" << rebuilds->catalog_not_checked
                << "); --apply checks it first\n";
    }
    std::cout << "\nrecords to copy (" << plan->records.size() << "):\n";
    for (const auto& r : plan->records) std::cout << "  " << r.identity() << '\n';
    std::cout << "\nnode settings change:\n" << diff;
    print_registry_config(registry_config_commands(*plan, globals.settings.nodes));
    print_compose_again(compose_again(*rebuilds, globals.settings.nodes));
  }
  if (refused) {
    if (o.json) print();
    const auto count = count_breaking(findings).references;
    spdlog::error(
        "move refused: {} would break (listed with the plan); rebuild {} through arec first, or move anyway "
        "with --force",
        count == 1 ? "1 reference" : std::to_string(count) + " references", count == 1 ? "it" : "them");
    return 1;
  }
  if (!o.apply) {
    if (o.json) {
      print();
    } else {
      std::cout << "\nthis is the plan; run again with --apply to carry it out\n";
    }
    return 0;
  }

  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  TransferOptions options = transfer_options(globals);
  options.jobs = o.jobs;
  auto policy = trust_policy(globals, o.trust_keys);
  if (!policy) return fail(policy.error());
  options.trust = std::make_shared<const TrustPolicy>(std::move(*policy));
  auto outcome = copy_to_new_registry(*store, *plan, options);
  if (!outcome) return fail(outcome.error());
  if (auto s = write_moved_settings(globals.settings.nodes, *plan); !s) return fail(s.error());
  if (o.json) {
    json["applied"] = true;
    json["copied"] = {{"pulled", outcome->pulled},
                      {"uploaded", outcome->pushed.uploaded},
                      {"mounted", outcome->pushed.mounted},
                      {"skipped", outcome->pushed.skipped},
                      {"tags", outcome->tags},
                      {"verified", outcome->verified}};
    print();
    return 0;
  }
  std::cout << "\ncopied to " << plan->to.host << ": " << outcome->pushed.uploaded << " blobs uploaded, "
            << outcome->pushed.mounted << " mounted, " << outcome->pushed.skipped << " already there; " << outcome->tags
            << (outcome->tags == 1 ? " other tag" : " other tags") << " copied; "
            << counted(outcome->verified, "manifest") << " verified\n";
  std::cout << "node settings " << globals.settings.nodes << " rewritten; the old ones are in "
            << globals.settings.nodes << ".bak\n";
  print_registry_config(registry_config_commands(*plan, globals.settings.nodes));
  print_compose_again(compose_again(*rebuilds, globals.settings.nodes));
  return 0;
}

}  // namespace

namespace {
void add_exclude_option(CLI::App& cmd, std::vector<std::string>& excludes) {
  cmd.add_option("--exclude", excludes,
                 "Leave out the declarations this glob matches: the path, or any tail of it from a directory on "
                 "(*.yaml, generated, deploy/*.yaml); repeatable")
      ->type_name("GLOB");
}
}  // namespace

void add_needs_rebuild(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = app.add_subcommand("needs-rebuild",
                                 "List the references that must be rebuilt through arec before the registry moves");
  cmd->add_option("paths", o->paths,
                  "Declarations: files, or directories searched recursively (default: the current directory)")
      ->type_name("PATH");
  cmd->add_option("--ref", o->refs, "A reference to classify too (repeatable)")->type_name("REF");
  add_exclude_option(*cmd, o->excludes);
  cmd->add_flag("--catalog", o->catalog, "Also every repository and tag the registry itself lists");
  cmd->add_flag("--json", o->json,
                "Print a JSON array of {reference, source, kind, action}, with file, line and column for declarations");
  describe(*cmd,
           "Every full reference written in a declaration counts (values, arguments, Dockerfile FROM, .env lines,\n"
           "Helm repository + tag), as do image requests and arec://endpoint/registry/PATH used as an image.\n"
           "Kinds: genesis-pinned (a single-segment repository at the mesh's registry: no record can be behind it),\n"
           "no-build (module/name with no record, or a digest no record has), hard-coded-address (a literal address\n"
           "of the registry that a request should replace). other-service: the address of a service that does not\n"
           "move with the registry, for information; it breaks nothing. References to other registries are external,\n"
           "listed with -v. One row per occurrence. References in ${VAR:-REF} and ${VAR-REF} defaults count.\n"
           "composed: what compose wrote into a composed output (FILE beside its template FILE.in, or named by a\n"
           "compose depfile, *.d, and exactly what compose writes from that template): composing again after the\n"
           "move writes it anew, so it breaks nothing. --exclude GLOB leaves out the rest of what is generated.\n"
           "Without PATH or --ref, the current directory is read; reading no text file at all is an error (exit 2).",
           {{"arec needs-rebuild deploy/",
             "The references in the declarations under deploy/ that a registry move would break."},
            {"arec needs-rebuild --ref 127.0.0.1:5000/builder:1 --json", "How one reference is classified, as JSON."},
            {"arec needs-rebuild deploy/ --catalog", "Also every repository and tag the registry lists."}},
           "0 nothing would break, 1 something would, 2 bad input (or no file read) or usage, 3 registry or network "
           "failure");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_needs_rebuild(globals, *o); }; });
}

void add_move(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<MoveOptions>();
  auto* cmd = app.add_subcommand("move", "Plan (default) or carry out a move of the registry to another node or port");
  cmd->add_option("paths", o->query.paths, "Declarations to check with needs-rebuild before moving")->type_name("PATH");
  cmd->add_option("--to", o->to, "The node that will hold the registry")->required()->type_name("NODE");
  add_exclude_option(*cmd, o->query.excludes);
  cmd->add_option("--port", o->port, "The port that node gives the registry (default: the one it was given)")
      ->check(number_check(k_port))
      ->type_name("PORT");
  cmd->add_flag("--apply", o->apply, "Copy, verify, then rewrite the node settings");
  cmd->add_flag("--force", o->force, "Move even though needs-rebuild finds references that will break");
  cmd->add_flag("--history", o->history, "Copy every recorded digest, not only the latest of each module/name");
  add_trust_key_option(*cmd, o->trust_keys);
  cmd->add_option("--jobs", o->jobs, "Blobs copied at once")
      ->capture_default_str()
      ->check(number_check(k_jobs))
      ->type_name("N");
  cmd->add_flag("--json", o->json,
                "Print the plan (and with --apply what was copied) as JSON: from, to, findings, declarations, catalog, "
                "records, settings {file, diff, after}, compose [{template, output, command}], refused, applied");
  describe(
      *cmd,
      "The plan lists what needs-rebuild finds in PATHs and in the registry's catalog (the move is refused\n"
      "while anything breaks, unless --force; a composed output is not refused: it is composed again), the\n"
      "records to copy, the change of the node settings as a diff, in the file's order, and last the compose\n"
      "commands to run after the move. It needs no registry: one that does not answer leaves the catalog not\n"
      "checked, which --apply then requires (exit 3). --to the node that holds the registry at that port\n"
      "already: nothing to move, exit 0.\n"
      "--apply copies every record by digest (skipping what is there), verifies each manifest at the new\n"
      "place, and only then rewrites --nodes FILE atomically, keeping FILE.bak. Run again after an\n"
      "interruption, it resumes. Nothing is deleted from the old registry. With a trusted key (--trust-key,\n"
      "AREC_TRUST_KEYS, the node settings' trust.keys), a record no trusted key signed is refused (exit 4)\n"
      "before anything is copied, and `latest` at the new registry is decided by the times trusted keys signed.",
      {{"arec --nodes nodes.json move --to n2 deploy/",
        "The plan of moving the registry to node n2, checking deploy/."},
       {"arec --nodes nodes.json move --to n2 --port 5001 --apply deploy/", "Carries it out, on port 5001 of n2."}},
      "0 planned or moved, 1 refused (references would break), 2 bad input or usage, 3 registry or network failure, "
      "4 a record refused by the trust policy");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_move(globals, *o); }; });
}

}  // namespace arec::cli
