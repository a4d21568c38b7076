// `arec check` and `arec gc`: keeping a store healthy.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>

#include "cli/cli.hpp"
#include "store/maintenance.hpp"

namespace arec::cli {

namespace {

struct CheckOptions {
  bool repair = false;
  bool json = false;
};

void print_check(const fs::Path& dir, const CheckReport& report, const RepairReport& repaired, const CheckOptions& o) {
  if (o.json) {
    nlohmann::json strays = nlohmann::json::array();
    for (const auto& p : report.stray_temporaries) strays.push_back(p.string());
    print_json({{"ok", report.ok()},
                {"records", report.records},
                {"blobs_checked", report.blobs_checked},
                {"problems", report.problems},
                {"stray_temporaries", strays},
                {"index_behind", report.index_behind},
                {"index_rewritten", repaired.index_rewritten},
                {"removed", repaired.temporaries_removed}});
    return;
  }
  // Problems name files and fields of the store, whatever a planted file is called.
  for (const auto& problem : report.problems) std::cout << "problem: " << printable(problem) << '\n';
  for (const auto& p : report.stray_temporaries) {
    std::cout << "stray temporary: " << printable(p.string())
              << " (left by a killed writer, harmless; --repair removes it)\n";
  }
  if (report.index_behind) {
    std::cout << "index.json is behind the history (a writer was stopped before rewriting it); the next record or "
                 "--repair brings it up to date\n";
  }
  if (repaired.temporaries_removed > 0)
    std::cout << "removed " << repaired.temporaries_removed << " stray temporaries\n";
  if (repaired.index_rewritten) std::cout << "rewrote index.json from the history\n";
  std::cout << "store " << dir.string() << ": " << counted(static_cast<std::size_t>(report.records), "record") << ", "
            << report.blobs_checked << " blobs verified, " << (report.ok() ? "ok" : "NOT ok") << '\n';
}

// The report on the store at `dir`, repaired first with --repair.
Result<CheckReport> check_existing(const fs::Path& dir, const CheckOptions& o, RepairReport& repaired) {
  auto store = Store::open_existing(dir);
  CheckReport report;
  if (!store) {
    // Checking is asked what is wrong with a store; a directory that is not one is the first finding.
    report.problems.push_back(store.error().message);
    return report;
  }
  if (o.repair) {
    auto r = store->with_writer([](StoreWriter& writer) { return repair_store(writer); });
    if (!r) return fail(r.error());
    repaired = *r;
    if (repaired.index_rewritten) store = Store::open_existing(dir);  // now with the history
    if (!store) return fail(store.error());
  }
  return check_store(*store);
}

Result<int> run_check(const Globals& globals, const CheckOptions& o) {
  const auto dir = store_dir(globals);
  CheckReport report;
  RepairReport repaired;
  // As for `records`: a store nobody has recorded into yet holds nothing, and nothing is wrong with it.
  if (const auto why = never_recorded(dir)) {
    spdlog::info("the store {} {}: nothing to check", dir.string(), *why);
  } else {
    auto checked = check_existing(dir, o, repaired);
    if (!checked) return fail(checked.error());
    report = std::move(*checked);
  }
  print_check(dir, report, repaired, o);
  return report.ok() ? 0 : 1;
}

struct GcOptions {
  std::size_t keep = 0;
  bool dry_run = false;
  bool json = false;
};

Result<int> run_gc(const Globals& globals, const GcOptions& o) {
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  const auto dry_run = o.dry_run ? DryRun::yes : DryRun::no;
  auto report = store->with_writer([&](StoreWriter& writer) { return collect_garbage(writer, o.keep, dry_run); },
                                   BlobWriters::excluded);
  if (!report) return fail(report.error());
  if (o.json) {
    print_json({{"records_dropped", report->records_dropped},
                {"blobs_removed", report->blobs_removed},
                {"bytes_removed", report->bytes_removed},
                {"upload_notes_removed", report->upload_notes_removed},
                {"dry_run", o.dry_run}});
  } else {
    std::cout << (o.dry_run ? "would remove " : "removed ") << report->blobs_removed << " blobs ("
              << report->bytes_removed << " bytes)";
    if (o.keep > 0) std::cout << " and " << report->records_dropped << " old records";
    if (report->upload_notes_removed > 0)
      std::cout << ", and " << report->upload_notes_removed << " notes of uploads no push can go on with";
    std::cout << '\n';
  }
  return 0;
}

}  // namespace

void add_check(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "Verify the store: layout, index, every reachable blob's digest, records");
  cmd->add_flag(
      "--repair", o->repair,
      "Remove temporaries left by killed writers and rewrite index.json from the history when it is missing or behind");
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  describe(*cmd,
           "A store that does not exist yet has nothing to check: it is sound. Problems (an unreadable or\n"
           "malformed index.json or oci-layout among them) are findings, exit 1.",
           {{"arec check", "Verifies the store and prints a summary."},
            {"arec check --repair --json", "Also removes what killed writers left; the report as JSON."}},
           "0 the store is sound, 1 a problem was found, 2 bad input or usage");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_check(globals, *o); }; });
}

void add_gc(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<GcOptions>();
  auto* cmd = app.add_subcommand("gc", "Remove blobs no record needs");
  cmd->add_option(
         "--keep", o->keep,
         "Keep only the newest N records of each module/name, and each platform's record of its image (default: all)")
      ->check(number_check(k_keep))
      ->type_name("N");
  cmd->add_flag("--dry-run", o->dry_run, "Say what would be removed, remove nothing");
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  describe(*cmd, "Waits for running recorders to finish, then works under the store lock.",
           {{"arec gc --dry-run", "Says what would be removed."},
            {"arec gc --keep 3", "Keeps the newest 3 records of each module/name and the blobs they need."}},
           k_exit_local);
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_gc(globals, *o); }; });
}

}  // namespace arec::cli
