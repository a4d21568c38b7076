// `arec needs-rebuild` and `arec move`: before the registry moves, and the move itself.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "registry-client/needs_rebuild.hpp"

namespace arec::cli {

namespace {

struct QueryOptions {
  std::vector<std::string> paths;
  std::vector<std::string> refs;
  bool catalog = false;
  bool json = false;
};

// Runs the query over declarations, --ref values and (with --catalog) the registry's own list.
Result<std::vector<Finding>> find_rebuilds(const Globals& globals, const NodeSettings& settings, const QueryOptions& o) {
  auto records = read_store_records(globals, History::all);
  if (!records) return fail(records.error());
  RebuildQuery query(settings, *records);
  for (const auto& path : o.paths) {
    if (auto s = query.scan_path(path); !s) return fail(s.error());
  }
  for (const auto& ref : o.refs) {
    if (auto s = query.add_reference(ref, "--ref"); !s) return fail(s.error());
  }
  return query.findings(globals.verbose > 0);
}

void print_findings(const std::vector<Finding>& findings) {
  std::size_t widths[3] = {9, 6, 4};
  for (const auto& f : findings) {
    widths[0] = std::max(widths[0], f.reference.size());
    widths[1] = std::max(widths[1], f.source.size());
    widths[2] = std::max(widths[2], kind_name(f.kind).size());
  }
  auto row = [&](std::string_view a, std::string_view b, std::string_view c, std::string_view d) {
    std::cout << a << std::string(widths[0] + 2 - a.size(), ' ') << b << std::string(widths[1] + 2 - b.size(), ' ') << c
              << std::string(widths[2] + 2 - c.size(), ' ') << d << '\n';
  };
  row("REFERENCE", "SOURCE", "KIND", "ACTION");
  for (const auto& f : findings) row(f.reference, f.source, kind_name(f.kind), f.action);
}

nlohmann::json findings_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : findings) {
    out.push_back({{"reference", f.reference}, {"source", f.source}, {"kind", kind_name(f.kind)}, {"action", f.action}});
  }
  return out;
}

bool anything_breaks(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.kind != FindingKind::external; });
}

Result<int> run_needs_rebuild(const Globals& globals, const QueryOptions& o) {
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  auto findings = find_rebuilds(globals, *settings, o);
  if (!findings) return fail(findings.error());
  if (o.json) {
    print_json(findings_json(*findings));
  } else if (findings->empty()) {
    spdlog::info("nothing would break on a registry move");
  } else {
    print_findings(*findings);
  }
  return anything_breaks(*findings) ? 1 : 0;
}

}  // namespace

void add_needs_rebuild(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<QueryOptions>();
  auto* cmd = app.add_subcommand("needs-rebuild", "List the references that must be rebuilt through arec before the registry moves");
  cmd->add_option("paths", o->paths, "Declarations: files, or directories searched recursively")->type_name("PATH");
  cmd->add_option("--ref", o->refs, "A reference to classify too (repeatable)")->type_name("REF");
  cmd->add_flag("--json", o->json, "Print a JSON array of {reference, source, kind, action}");
  cmd->footer(
      "Kinds: genesis-pinned (a single-segment repository at the mesh's registry: no record can be behind it),\n"
      "no-build (module/name with no record), hard-coded-address (a literal mesh address that a request should\n"
      "replace). References to other registries are external, listed with -v.\n"
      "Exit 0 when nothing would break on a move, 1 when something would.");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_needs_rebuild(globals, *o); }; });
}

}  // namespace arec::cli
