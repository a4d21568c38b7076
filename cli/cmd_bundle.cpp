// `arec export` and `arec import`: records carried in one tarball where no network reaches.
#include <spdlog/spdlog.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/cli.hpp"
#include "cli/signing.hpp"
#include "recorder/layer.hpp"
#include "store/bundle.hpp"

namespace arec::cli {

namespace {

struct ExportOptions {
  std::vector<std::string> selectors;
  std::string output;
  std::string format = "oci";
  std::string platform;  // --platform OS/ARCH[/VARIANT]: of each module/name, that platform's records only
  std::string config;    // --config NAME: of each module/name, that configuration's records only
  bool history = false;
  bool json = false;
};

// The records `selectors` name (MODULE, MODULE/NAME, MODULE/NAME@DIGEST; none: every module/name),
// in the store's order, oldest first: the latest of each configuration, or with History::all its whole
// history. With a configuration asked for, of each module/name only the records of the one it means
// (choose_config: that one, or the records naming none). With a platform, of each module/name only the
// records of that platform: its image's record of it alone, a plain manifest, which OCI tools that read
// no index (umoci) take; a module/name whose image has no record of it is refused, naming those it has.
Result<std::vector<Record>> select_for_export(const Store& store, const std::vector<std::string>& selectors,
                                              History history, const std::optional<Platform>& platform,
                                              const ConfigChoice& choice) {
  auto all = store.records(History::all);
  if (!all) return fail(all.error());
  std::vector<std::string> notes;
  auto latest = choice.asked ? store.latest_records(choice, notes) : store.config_latest_records(choice);
  if (!latest) return fail(latest.error());
  if (choice.asked) {
    // The configuration each module/name's records are taken of.
    std::map<std::string, std::string> config_of;
    for (const auto& r : *latest) config_of.emplace(r.repository(), r.config);
    std::erase_if(*all, [&](const Record& r) {
      const auto found = config_of.find(r.repository());
      return found == config_of.end() || found->second != r.config;
    });
  }
  std::set<std::string> chosen;  // identities
  for (const auto& selector : selectors.empty() ? std::vector<std::string>{""} : selectors) {
    auto parsed = parse_selector(selector);
    if (!parsed) return fail(parsed.error());
    const std::string& repository = parsed->repository;
    const std::optional<Digest>& digest = parsed->digest;
    if (digest && platform) {
      return fail_input(
          "\"" + selector +
          "\": --platform chooses among the platforms of the latest image; a digest names one record already");
    }
    const auto names = [&](const Record& r) {
      return repository.empty() || r.repository() == repository || r.module == repository;
    };
    bool matched = false;
    for (const auto& r : digest || history == History::all ? *all : *latest) {
      if (!names(r) || (digest && (r.repository() != repository || r.manifest.digest != *digest))) continue;
      matched = true;
      chosen.insert(r.identity() + " " + r.recorded);
    }
    if (!matched && !selector.empty()) {
      return fail_input("\"" + selector + "\": no such record in the store " + store.dir().string() +
                        (choice.asked ? " of configuration " + *choice.asked : ""));
    }
  }
  // A latest that is an image index goes with every platform's record of it.
  std::vector<Record> picked;
  for (const auto& r : *latest) {
    if (chosen.contains(r.identity() + " " + r.recorded)) picked.push_back(r);
  }
  auto with_platforms = store.with_platforms(std::move(picked));
  if (!with_platforms) return fail(with_platforms.error());
  for (const auto& r : *with_platforms) chosen.insert(r.identity() + " " + r.recorded);
  const auto of_platform = [&](const Record& r) {
    return !platform || (r.manifest.platform && serves(*r.manifest.platform, *platform));
  };
  if (platform) {
    // module/name -> each record of its image by platform, as its index lists them
    std::map<std::string, std::map<std::string, std::string>> images;
    std::set<std::string> served;
    for (const auto& r : *with_platforms) {
      const std::string text = r.manifest.platform ? platform_text(*r.manifest.platform) : "";
      images[r.repository()][text] = r.identity() + (text.empty() ? "" : " (" + text + ")");
      if (of_platform(r)) served.insert(r.repository());
    }
    for (const auto& [repository, records] : images) {
      if (served.contains(repository)) continue;
      std::string each;
      for (const auto& [text, record] : records) each += (each.empty() ? "" : ", ") + record;
      return fail_input("\"" + repository + "\": no record for --platform " + platform_text(*platform) +
                        " in its image: " + each);
    }
  }
  std::vector<Record> out;
  for (const auto& r : *all) {
    if (chosen.contains(r.identity() + " " + r.recorded) && of_platform(r)) out.push_back(r);
  }
  return out;
}

Result<int> run_export(const Globals& globals, const ExportOptions& o) {
  const BundleFormat format = o.format == "docker" ? BundleFormat::docker : BundleFormat::oci;
  // "-" would otherwise become a file of that name in the working directory.
  if (o.output == "-")
    return fail_input(
        "--output -: export writes the bundle to a file, not to standard output; name a file, e.g. -o bundle.tar");
  std::optional<Platform> platform;
  if (!o.platform.empty()) {
    auto parsed = parse_platform(o.platform);
    if (!parsed) return fail(parsed.error());
    platform = std::move(*parsed);
  }
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  auto records = select_for_export(*store, o.selectors, o.history ? History::all : History::latest, platform,
                                   config_choice(globals, o.config));
  if (!records) return fail(records.error());
  if (records->empty()) return fail_input("the store " + store->dir().string() + " holds no records to export");
  auto summary = export_bundle(*store, *records, o.output, format, globals.settings.source_date_epoch);
  if (!summary) return fail(summary.error());
  if (o.json) {
    auto json = to_json(*summary);
    json["output"] = o.output;
    json["format"] = o.format;
    print_json(json);
  } else {
    std::cout << "exported " << counted(summary->records, "record") << ", " << counted(summary->referrers, "referrer")
              << ", " << counted(summary->blobs, "blob") << " (" << summary->bytes << " bytes) to " << o.output << '\n';
  }
  return 0;
}

constexpr NumberKind k_max_expansion{"count", "a whole number from 1 to 1000000", 1, 1'000'000};

struct ImportOptions {
  std::string bundle;
  bool json = false;
  bool allow_older = false;
  std::int64_t max_expansion = k_default_max_expansion;
  std::vector<std::string> trust_keys;
};

Result<int> run_import(const Globals& globals, const ImportOptions& o) {
  auto policy = trust_policy(globals, o.trust_keys);
  if (!policy) return fail(policy.error());
  const ImportChecks checks{&*policy, o.allow_older ? Older::allowed : Older::refused};
  auto summary = import_bundle(o.bundle, store_dir(globals), o.max_expansion, checks);
  if (!summary) return fail(summary.error());
  for (const auto& k : summary->kept) spdlog::warn("{}", k);
  if (o.json) {
    print_json(to_json(*summary));
  } else {
    std::cout << "imported " << counted(summary->records_added, "record") << " (" << summary->records_present
              << " already held), " << counted(summary->referrers, "referrer") << ", "
              << counted(summary->blobs_written, "blob") << " written (" << summary->bytes << " bytes), "
              << summary->blobs_present << " already held\n";
  }
  return 0;
}

}  // namespace

void add_export(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand(
      "export", "Write records and their referrers to one tarball (an OCI layout or a docker archive)");
  cmd->add_option("records", o->selectors, "MODULE, MODULE/NAME or MODULE/NAME@DIGEST (default: every module/name)")
      ->type_name("M[/N[@DIGEST]]");
  cmd->add_option("-o,--output", o->output, "The tarball to write (replaced atomically)")
      ->required()
      ->type_name("FILE");
  cmd->add_flag("--history", o->history, "Every record of each module/name, not only the latest of each configuration");
  add_config_option(*cmd, o->config);
  cmd->add_option("--format", o->format, "oci: an OCI image layout with referrers; docker: what `docker load` reads")
      ->check(CLI::IsMember({"oci", "docker"}))
      ->capture_default_str();
  cmd->add_option(
         "--platform", o->platform,
         "Of a module/name of several platforms, only this one's record (a manifest, not the index: what umoci reads)")
      ->type_name("OS/ARCH[/VARIANT]");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  describe(
      *cmd,
      "The same records give the same bytes (entries sorted, mtime SOURCE_DATE_EPOCH or 0, owner 0).\n"
      "Carried where no network reaches, `arec import` adds them to another store, and `arec push` sends them on.\n"
      "A module/name recorded for several platforms is exported as its image index, with each platform's\n"
      "record; --platform writes that platform's record alone, tagged module/name, for tools that read no index.\n"
      "Of a module/name built in several configurations, the latest of each goes, named as in the store:\n"
      "module/name the default configuration's (Release, or --default-config), module/name:latest-<config>\n"
      "each other's (docker: module/name:latest and module/name:latest-<config>); --config NAME exports that\n"
      "configuration's records alone, named module/name.",
      {{"arec export mesh -o mesh.tar --history",
        "Every record of module mesh, with its SBOMs, as an OCI layout tarball."},
       {"arec export mesh/app --format docker -o app.tar",
        "The latest mesh/app as an archive `docker load -i app.tar` reads."},
       {"arec export mesh/app --platform linux/amd64 -o app-amd64.tar",
        "The amd64 record of mesh/app alone; unpacked (tar -xf), `umoci unpack --image DIR:mesh/app` reads it."}},
      "0 written, 2 bad input (a record not in the store, an unwritable output)");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_export(globals, *o); }; });
}

void add_import(CLI::App& app, Globals& globals, Action& action) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd =
      app.add_subcommand("import", "Add the records of a bundle (from arec export) to the store, with their history");
  cmd->add_option("bundle", o->bundle, "The tarball")->required()->type_name("FILE");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  cmd->add_option("--max-expansion", o->max_expansion,
                  "How many times its own size a bundle's entries may hold (a compressed bundle expands)")
      ->capture_default_str()
      ->check(number_check(k_max_expansion))
      ->type_name("N");
  cmd->add_flag("--allow-older", o->allow_older,
                "Let a record older than the store's latest of its module/name and configuration become the latest");
  add_trust_key_option(*cmd, o->trust_keys);
  describe(*cmd,
           "Every blob is verified; a bundle with an absolute path, \"..\", a link, a blob that does not match\n"
           "its digest, a blob other than sha256, a record field that is not valid (created not RFC 3339, base\n"
           "not a digest, the media type not an image manifest's), a record more than 5 minutes ahead of this\n"
           "machine's clock, or entries holding more than --max-expansion times the bundle's size, is refused\n"
           "before the store is touched. Records already in the store are skipped; a record older than the\n"
           "store's latest of its module/name and configuration is not added, and said (--allow-older adds it).\n"
           "With a trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys), every record must be\n"
           "signed by one, by the bundles the tarball holds, or nothing is imported (exit 4).",
           {{"arec import mesh.tar",
             "Adds the records of mesh.tar, with their history and SBOMs; then `arec push mesh` sends them."}},
           "0 imported, 2 a bundle refused or bad input, 4 a record refused by the trust policy");
  cmd->callback([&action, &globals, o] { action = [&globals, o] { return run_import(globals, *o); }; });
}

}  // namespace arec::cli
