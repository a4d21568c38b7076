// `arec check` and `arec gc`: keeping a store healthy.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "recorder/maintenance.hpp"

namespace arec::cli {

namespace {

struct CheckOptions {
  bool repair = false;
  bool json = false;
};

Result<int> run_check(const Globals& globals, const CheckOptions& o) {
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  RepairReport repaired;
  if (o.repair) {
    auto r = repair_store(*store);
    if (!r) return fail(r.error());
    repaired = *r;
    if (repaired.index_rewritten) store = Store::open_existing(store_dir(globals));  // now with the history
    if (!store) return fail(store.error());
  }
  auto report = check_store(*store);
  if (!report) return fail(report.error());
  const std::size_t removed = repaired.temporaries_removed;
  if (o.json) {
    nlohmann::json strays = nlohmann::json::array();
    for (const auto& p : report->stray_temporaries) strays.push_back(p.string());
    print_json({{"ok", report->ok()},
                {"records", report->records},
                {"blobs_checked", report->blobs_checked},
                {"problems", report->problems},
                {"stray_temporaries", strays},
                {"index_behind", report->index_behind},
                {"index_rewritten", repaired.index_rewritten},
                {"removed", removed}});
  } else {
    for (const auto& problem : report->problems) std::cout << "problem: " << problem << '\n';
    for (const auto& p : report->stray_temporaries) {
      std::cout << "stray temporary: " << p.string() << " (left by a killed writer, harmless; --repair removes it)\n";
    }
    if (report->index_behind) {
      std::cout << "index.json is behind the history (a writer was stopped before rewriting it); the next record or "
                   "--repair brings it up to date\n";
    }
    if (removed > 0) std::cout << "removed " << removed << " stray temporaries\n";
    if (repaired.index_rewritten) std::cout << "rewrote index.json from the history\n";
    std::cout << "store " << store->dir().string() << ": " << report->records << " records, " << report->blobs_checked
              << " blobs verified, " << (report->ok() ? "ok" : "NOT ok") << '\n';
  }
  return report->ok() ? 0 : 1;
}

struct GcOptions {
  std::size_t keep = 0;
  bool dry_run = false;
  bool json = false;
};

Result<int> run_gc(const Globals& globals, const GcOptions& o) {
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  auto report = collect_garbage(*store, o.keep, o.dry_run ? DryRun::yes : DryRun::no);
  if (!report) return fail(report.error());
  if (o.json) {
    print_json({{"records_dropped", report->records_dropped},
                {"blobs_removed", report->blobs_removed},
                {"bytes_removed", report->bytes_removed},
                {"dry_run", o.dry_run}});
  } else {
    std::cout << (o.dry_run ? "would remove " : "removed ") << report->blobs_removed << " blobs ("
              << report->bytes_removed << " bytes)";
    if (o.keep > 0) std::cout << " and " << report->records_dropped << " old records";
    std::cout << '\n';
  }
  return 0;
}

}  // namespace

void add_check(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "Verify the store: layout, index, every reachable blob's digest, records");
  cmd->add_flag("--repair", o->repair, "Remove temporaries left by killed writers and rewrite index.json from the history when it is missing or behind");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->footer("Exit 0 when the store is sound, 1 when a problem was found.");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_check(globals, *o); }; });
}

void add_gc(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<GcOptions>();
  auto* cmd = app.add_subcommand("gc", "Remove blobs no record needs");
  cmd->add_option("--keep", o->keep, "Keep only the newest N records of each module/name (default: all)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--dry-run", o->dry_run, "Say what would be removed, remove nothing");
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->footer("Waits for running recorders to finish, then works under the store lock.");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_gc(globals, *o); }; });
}

}  // namespace arec::cli
