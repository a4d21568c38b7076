// `arec push`, `arec pull` and `arec verify`: records to and from the registry the node settings
// give at the moment the command runs.
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>
#include <set>
#include <tuple>

#include "cli/cli.hpp"
#include "cli/signing.hpp"
#include "registry-client/catalog.hpp"
#include "registry-client/pull.hpp"
#include "registry-client/push.hpp"
#include "registry-client/verify.hpp"

namespace arec::cli {

namespace {

struct TransferFlags {
  unsigned jobs = 4;
  std::string chunk_size;  // empty: AREC_CHUNK_SIZE or the default
  bool json = false;
  std::string platform;                 // pull: from an index, the manifest of this platform
  std::string config;                   // push, verify: --config
  std::string sign_key;                 // push: --sign-key
  std::vector<std::string> trust_keys;  // push: --trust-key
};

Result<TransferOptions> transfer_options(const Globals& globals, const TransferFlags& flags) {
  TransferOptions options = transfer_options(globals);
  options.jobs = flags.jobs;
  if (!flags.chunk_size.empty()) {
    // Checked by number_check when parsed; read here by the same code as AREC_CHUNK_SIZE.
    auto chunk = read_number(k_chunk_size, flags.chunk_size);
    if (!chunk) return fail_input("--chunk-size " + flags.chunk_size + ": " + chunk.error());
    options.chunk_size = *chunk;
  }
  if (flags.json) options.progress = ProgressDisplay::none;
  if (!flags.platform.empty()) {
    auto platform = parse_platform(flags.platform);
    if (!platform) return fail(platform.error());
    options.platform = std::move(*platform);
  }
  return options;
}

void add_transfer_flags(CLI::App& cmd, TransferFlags& flags) {
  cmd.add_option("--jobs", flags.jobs, "Blobs transferred at once, each on its own connection")
      ->capture_default_str()
      ->check(number_check(k_jobs))
      ->type_name("N");
  cmd.add_flag("--json", flags.json, "Print a JSON summary");
}

// The push's trust policy: the trusted keys, and with a signing key its public half (what the team's
// key signs, the team signed). Under it, every record pushed (each platform of an index too) must be
// signed by one of them; with a signing key, what this store built and the key has not signed is signed
// first, said on an info line, and what was made elsewhere and no trusted key signed is refused (exit 4),
// before anything is signed or pushed.
Result<TrustPolicy> sign_and_admit(const Globals& globals, Store& store, const std::vector<Record>& records,
                                   const TransferFlags& flags) {
  auto key = signing_key(globals, flags.sign_key);
  if (!key) return fail(key.error());
  auto policy = trust_policy(globals, flags.trust_keys);
  if (!policy) return fail(policy.error());
  if (*key) {
    auto own = (*key)->public_key();
    if (!own) return fail(own.error());
    policy->add({std::move(*own), flags.sign_key.empty() ? "AREC_SIGNING_KEY" : "--sign-key"});
  }
  if (!policy->checks()) return policy;
  auto all = store.with_platforms(records);
  if (!all) return fail(all.error());
  std::vector<const Record*> to_sign;
  for (const auto& record : *all) {
    auto verdict = judge_record(store, record, *policy);
    if (!verdict) return fail(verdict.error());
    if (verdict->state == SignatureState::trusted) continue;
    if (!*key) {
      return fail(Error::trust("push: the record " + record.identity() + " is " + refusal(*verdict) +
                               "; nothing pushed (sign what this store built with --sign-key, or arec sign)"));
    }
    if (auto s = signable(store, record, SignMadeElsewhere::no); !s) {
      return fail(Error{s.error().kind, "push: the record " + record.identity() + " is " + refusal(*verdict) +
                                            ", and " + s.error().message + "; nothing pushed"});
    }
    to_sign.push_back(&record);
  }
  const auto facts = provenance_facts(globals);
  for (const auto* record : to_sign) {
    auto signed_now = sign_checked(store, *record, **key, facts, SignMadeElsewhere::no);
    if (!signed_now) return fail(std::move(signed_now.error()).context("push"));
    spdlog::info("signed {} with key {}, as this store recorded it", record->identity(),
                 (*key)->fingerprint().substr(0, 16));
  }
  return policy;
}

Result<int> run_push(const Globals& globals, const std::vector<std::string>& selectors,
                     const std::vector<std::string>& tags, LatestTag latest, const TransferFlags& flags) {
  for (const auto& tag : tags) {
    if (!is_tag(tag)) {
      return fail_input("--tag \"" + tag + "\": not a tag ([A-Za-z0-9_][A-Za-z0-9._-]{0,127})");
    }
  }
  auto options = transfer_options(globals, flags);
  if (!options) return fail(options.error());
  auto records = select_records(globals, selectors, flags.config);
  if (!records) return fail(records.error());
  if (records->empty()) {
    spdlog::info("no records in {}: nothing to push", store_dir(globals).string());
    if (flags.json) print_json(to_json(PushSummary{}));
    return 0;
  }
  auto store = Store::open_existing(store_dir(globals));
  if (!store) return fail(store.error());
  auto policy = sign_and_admit(globals, *store, *records, flags);
  if (!policy) return fail(policy.error());
  // The tag decision asks the same policy which records at the registry count.
  options->trust = std::make_shared<const TrustPolicy>(std::move(*policy));
  auto registry = registry_for(globals, "");
  if (!registry) return fail(registry.error());
  auto summary =
      push_records(*store, *records, PushTags{latest, tags, globals.settings.default_config}, *registry, *options);
  if (!summary) return fail(summary.error());
  if (flags.json) {
    print_json(to_json(*summary));
    return 0;
  }
  for (const auto& image : summary->images) {
    std::cout << summary->registry << '/' << image.repository << '@' << image.digest.str() << '\n';
  }
  spdlog::info("pushed {} image{} to {}: {} blob{} uploaded ({} bytes), {} mounted, {} already there",
               summary->images.size(), summary->images.size() == 1 ? "" : "s", summary->registry, summary->uploaded,
               summary->uploaded == 1 ? "" : "s", summary->bytes, summary->mounted, summary->skipped);
  if (summary->resumed.blobs > 0) {
    spdlog::info("{} upload{} gone on with from where an earlier push left {} ({} bytes there already, not sent again)",
                 summary->resumed.blobs, summary->resumed.blobs == 1 ? "" : "s",
                 summary->resumed.blobs == 1 ? "it" : "them", summary->resumed.bytes);
  }
  if (summary->referrers.pushed > 0 || summary->referrers.listed > 0) {
    const auto& r = summary->referrers;
    std::string kinds;
    for (const auto& [n, one, many] : {std::tuple{r.sboms, "SBOM", "SBOMs"},
                                       {r.signatures, "signature", "signatures"},
                                       {r.provenance, "provenance", "provenance"},
                                       {r.other, "other", "other"}}) {
      if (n > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + (n == 1 ? one : many);
    }
    spdlog::info("referrers: {} pushed{} ({} bytes uploaded), {} listed under fallback tags", r.pushed,
                 kinds.empty() ? "" : ": " + kinds, r.bytes, r.listed);
  }
  if (summary->records.pushed > 0 || summary->records.listed > 0) {
    spdlog::info("records: {} pushed ({} bytes uploaded), {} listed under fallback tags", summary->records.pushed,
                 summary->records.bytes, summary->records.listed);
  }
  if (summary->manifests.put > 0) {
    spdlog::info("manifests and indexes: {} put ({} bytes)", summary->manifests.put, summary->manifests.bytes);
  }
  return 0;
}

struct PullFlags {
  bool all = false;                     // every module/name of the registry that has records
  bool records_only = false;            // the records, manifests and configs, not the layers
  bool allow_older = false;             // --allow-older
  std::vector<std::string> trust_keys;  // --trust-key
};

void print_pulled(const PullOutcome& outcome) {
  std::cout << outcome.image.digest.str() << '\n';
  spdlog::debug("{} blobs downloaded ({} bytes), {} already in the store", outcome.downloaded, outcome.bytes,
                outcome.present);
  for (const auto& r : outcome.records) spdlog::info("added the record {} (recorded {})", r.identity(), r.recorded);
}

// A reference with no domain names the registry of the node settings, whose records come along (the
// records of a machine that built, pushed there); one naming a registry is an image pulled by address,
// which the store keeps as an image, never as a record (rule 1).
Result<int> run_pull(const Globals& globals, const std::string& text, const TransferFlags& flags,
                     const PullFlags& pull) {
  if (pull.all != text.empty())
    return fail_input(pull.all ? "pull --all takes no reference" : "pull: name a reference, or --all");
  auto options = transfer_options(globals, flags);
  if (!options) return fail(options.error());
  auto policy = trust_policy(globals, pull.trust_keys);
  if (!policy) return fail(policy.error());
  options->trust = std::make_shared<const TrustPolicy>(std::move(*policy));
  // Said once a pull has been made, so that it never stands beside an error as if it were one.
  const auto done = [trust = options->trust](int code) {
    say_trust(*trust, "pull");
    return code;
  };
  PullRecordsOptions how;
  how.layers = pull.records_only ? PullLayers::no : PullLayers::yes;
  how.older = pull.allow_older ? Older::allowed : Older::refused;
  const auto say_kept = [](const PulledRecords& pulled) {
    for (const auto& k : pulled.kept) spdlog::warn("{}", k);
  };
  if (pull.all) {
    auto registry = registry_for(globals, "");
    if (!registry) return fail(registry.error());
    auto tags = record_tags(*registry, *options);
    if (!tags) return fail(tags.error());
    for (const auto& orphan : tags->orphaned) {
      spdlog::warn("{} at {}: referrers (records, SBOMs) of an image the registry does not hold; ignored", orphan,
                   registry->host);
    }
    auto store = Store::open(store_dir(globals));
    if (!store) return fail(store.error());
    // The latest tags and every image with records, in one pull: the history comes in the order recorded.
    std::vector<std::string> names = tags->references;
    names.insert(names.end(), tags->images.begin(), tags->images.end());
    std::vector<Reference> references;
    for (const auto& name : names) {
      auto reference = Reference::parse(name);
      if (!reference) return fail(reference.error());
      references.push_back(std::move(*reference));
    }
    // Every module/name that verifies is written; each refused one is named, and the exit says so.
    how.refusals = Refusals::skip;
    how.latest_tags = LatestTags::followed;
    auto pulled = pull_records(*store, references, *registry, *options, how);
    if (!pulled) return fail(pulled.error());
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < names.size(); ++i) {
      const auto& outcome = pulled->outcomes[i];
      if (!outcome) {
        spdlog::debug("{}: no record at {}; passed over", names[i], registry->host);
        continue;
      }
      if (flags.json) {
        out.push_back(to_json(*outcome));
      } else {
        // "m/n:latest@sha256:…" for a tag; an image found by its digest is named once.
        std::cout << (names[i].find('@') == std::string::npos ? names[i] : references[i].path) << '@';
        print_pulled(*outcome);
      }
    }
    if (flags.json) print_json(out);
    say_kept(*pulled);
    if (pulled->refused.empty()) return done(0);
    done(4);
    for (const auto& refused : pulled->refused) spdlog::error("{}", refused);
    spdlog::error("pull --all: {} refused by the trust policy; every other written",
                  counted(pulled->refused.size(), "reference"));
    return 4;
  }
  auto reference = Reference::parse(text);
  if (!reference) return fail(reference.error());
  if (pull.records_only && !reference->domain.empty()) {
    return fail_input("pull --records-only " + text +
                      ": records come from the registry of the node settings; name MODULE/NAME[:TAG]");
  }
  auto registry = registry_for(globals, reference->domain);
  if (!registry) return fail(registry.error());
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  std::optional<PullOutcome> outcome;
  if (reference->domain.empty()) {
    auto pulled = pull_records(*store, {*reference}, *registry, *options, how);
    if (!pulled) return fail(pulled.error());
    say_kept(*pulled);
    outcome = std::move(pulled->outcomes.front());
    if (!outcome && pull.records_only)
      return fail_input("pull --records-only " + text + ": the registry " + registry->host + " lists no record of it");
  }
  if (!outcome) {
    auto image = pull_image(*store, *reference, *registry, *options);
    if (!image) return fail(image.error());
    outcome = std::move(*image);
  }
  if (flags.json) {
    print_json(to_json(*outcome));
  } else {
    print_pulled(*outcome);
  }
  return done(0);
}

Result<int> run_verify(const Globals& globals, const std::vector<std::string>& selectors, const std::string& config,
                       const std::vector<std::string>& trust_keys, Output output) {
  auto policy = trust_policy(globals, trust_keys);
  if (!policy) return fail(policy.error());
  auto records = select_records(globals, selectors, config);
  if (!records) return fail(records.error());
  auto registry = registry_for(globals, "");
  if (!registry) return fail(registry.error());
  // The store's referrers of each record are checked too; there is none when there is no store yet.
  auto store = Store::open_existing(store_dir(globals));
  TransferOptions options = transfer_options(globals);
  options.progress = ProgressDisplay::none;
  if (policy->checks()) say_trust(*policy, "verify");
  options.trust = std::make_shared<const TrustPolicy>(std::move(*policy));
  auto items = verify_records(*records, *registry, options, store ? &*store : nullptr);
  if (!items) return fail(items.error());
  std::size_t bad = 0, refused = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : *items) {
    if (item.state != VerifyState::present) ++bad;
    if (item.state == VerifyState::unsigned_ || item.state == VerifyState::untrusted) ++refused;
    if (output == Output::json) {
      nlohmann::json entry = {{"repository", item.record.repository()},
                              {"digest", item.record.manifest.digest.str()},
                              {"state", verify_state_name(item.state)}};
      if (!item.found.empty()) entry[item.state == VerifyState::untrusted ? "why" : "found"] = item.found;
      if (!item.missing_referrers.empty()) entry["missing_referrers"] = item.missing_referrers;
      if (!item.missing_record.empty()) entry["missing_record"] = item.missing_record;
      out.push_back(std::move(entry));
    } else {
      std::cout << verify_state_name(item.state) << std::string(11 - verify_state_name(item.state).size(), ' ')
                << item.record.identity()
                << (item.found.empty()                     ? ""
                    : item.state == VerifyState::untrusted ? "  (" + item.found + ")"
                                                           : "  (registry has " + item.found + ")")
                << (item.missing_referrers.empty()
                        ? ""
                        : "  (its referrer " + item.missing_referrers.front() + " is not listed)")
                << (item.missing_record.empty() ? "" : "  (its record " + item.missing_record + " is not listed)")
                << '\n';
    }
  }
  if (output == Output::json) print_json(out);
  if (bad > 0) {
    spdlog::error("{} of {} record{} {} at {}", bad, items->size(), items->size() == 1 ? "" : "s",
                  options.checks_trust() ? "missing, different, unsigned or untrusted" : "missing or different",
                  registry->host);
    // A record a trusting pull would refuse is the trust policy's exit, as a refusal is in every command.
    return refused > 0 ? 4 : 1;
  }
  return 0;
}

}  // namespace

Result<std::vector<Record>> select_records(const Globals& globals, const std::vector<std::string>& selectors,
                                           const std::string& config) {
  const auto choice = config_choice(globals, config);
  Result<std::vector<Record>> latest = std::vector<Record>();
  if (!never_recorded(store_dir(globals))) {
    auto store = Store::open_existing(store_dir(globals));
    if (!store) return fail(store.error());
    latest = store->config_latest_records(choice);
  }
  if (!latest || selectors.empty()) return latest;
  std::vector<Record> out;
  std::set<std::string> seen;
  for (const auto& selector : selectors) {
    auto parsed = parse_selector(selector);
    if (!parsed) return fail(parsed.error());
    const std::string& repository = parsed->repository;
    const std::optional<Digest>& digest = parsed->digest;
    bool matched = false;
    std::vector<Record> history;  // a digest is looked for in its module/name's own history
    if (digest) {
      const auto slash = repository.find('/');
      if (slash != std::string::npos) {
        auto store = Store::open_existing(store_dir(globals));
        if (!store) return fail(store.error());
        auto read = store->history_of(repository.substr(0, slash), repository.substr(slash + 1));
        if (!read) return fail(read.error());
        history = std::move(*read);
      }
    }
    for (const auto& r : digest ? history : *latest) {
      const bool match = digest ? r.repository() == repository && r.manifest.digest == *digest
                                : r.repository() == repository || r.module == repository;
      if (!match) continue;
      matched = true;
      if (seen.insert(r.identity()).second) out.push_back(r);
    }
    if (!matched) return fail_input("\"" + selector + "\": no such record in the store " + store_dir(globals).string());
  }
  return out;
}

Result<RegistryAddress> registry_for(const Globals& globals, std::string_view domain) {
  auto settings = load_settings(globals);
  if (!settings) return fail(settings.error());
  return registry_for_domain(domain, *settings, globals.settings.client);
}

void add_push(CLI::App& app, Globals& globals, Action& action) {
  auto selectors = std::make_shared<std::vector<std::string>>();
  auto tags = std::make_shared<std::vector<std::string>>();
  auto no_latest = std::make_shared<bool>(false);
  auto flags = std::make_shared<TransferFlags>();
  auto* cmd = app.add_subcommand("push", "Push records to the registry the node settings give, as MODULE/NAME@DIGEST");
  cmd->add_option("records", *selectors, "Records to push (default: the latest of every module/name)")
      ->type_name("M[/N[@DIGEST]]");
  cmd->add_option("--tag", *tags, "Also tag the newest pushed record of each module/name (repeatable)")
      ->type_name("TAG");
  cmd->add_flag("--no-latest", *no_latest, "Do not tag the latest record of each module/name `latest`");
  cmd->add_option(
         "--chunk-size", flags->chunk_size,
         "Blobs larger than this go up in chunks (default AREC_CHUNK_SIZE, else a 32nd of the blob from 8M to 64M)")
      ->check(number_check(k_chunk_size))
      ->type_name("SIZE");
  add_transfer_flags(*cmd, *flags);
  add_config_option(*cmd, flags->config);
  add_sign_key_option(*cmd, flags->sign_key);
  add_trust_key_option(*cmd, flags->trust_keys);
  describe(*cmd,
           "Records go by digest; the store's latest record of each module/name is also tagged `latest`, so\n"
           "registry clean-up of untagged manifests keeps it. Where a module/name has records of several\n"
           "configurations, each configuration's latest goes: the default one's (Release, or --default-config)\n"
           "tagged `latest`, the others' `latest-<config in lower case>` (`latest-debug`); --config NAME pushes\n"
           "that one's only. Blobs the repository holds are skipped; blobs another repository of the registry\n"
           "holds are mounted: one the store noted holding them (where a push sent or found them, or a pull\n"
           "fetched them, even under a name whose record was removed), else one of the store's records; a blob\n"
           "no such repository holds is uploaded.\n"
           "Each record's referrers (its SBOM) follow it: listed through the registry's referrers API, or else\n"
           "in the fallback tag sha256-<hex>, merged with what that tag holds.\n"
           "A blob larger than a chunk goes up in chunks, its upload session noted in the store (arec/uploads/,\n"
           "without the registry's address): a push killed halfway goes on, the next time, from what the\n"
           "registry holds of it; a push that gives up cancels its upload, so the registry keeps no half-sent blob.\n"
           "With a trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys) or --sign-key, every\n"
           "record pushed must be signed by one of them (the signing key counting as trusted): --sign-key signs\n"
           "first what this store recorded and the key has not signed, saying so; a record pulled or imported that\n"
           "no trusted key signed is refused (exit 4), before anything is signed or pushed (arec sign --pulled\n"
           "signs one on purpose). `latest` then moves unless the record it names is newer by the time inside a\n"
           "record a trusted key signed: an unsigned record, or a forged annotation, cannot hold it.\n"
           "--json prints {registry, images, uploaded, mounted, skipped, bytes, resumed {blobs, bytes},\n"
           "referrers {pushed, blobs, bytes, listed}, ...}: bytes are those sent, resumed.bytes those an earlier\n"
           "push's upload held already.",
           {{"arec push", "The latest record of every module/name, to the registry of the node settings."},
            {"arec push mesh/app --tag 1.2", "The latest mesh/app, also tagged 1.2."},
            {"arec --nodes nodes.json push mesh --json",
             "Every module/name of module mesh, to the registry nodes.json names; a JSON summary."}},
           k_exit_trust);
  cmd->callback([&action, &globals, selectors, tags, no_latest, flags] {
    action = [&globals, selectors, tags, no_latest, flags] {
      return run_push(globals, *selectors, *tags, *no_latest ? LatestTag::no : LatestTag::yes, *flags);
    };
  });
}

void add_pull(CLI::App& app, Globals& globals, Action& action) {
  auto reference = std::make_shared<std::string>();
  auto flags = std::make_shared<TransferFlags>();
  auto pull = std::make_shared<PullFlags>();
  auto* cmd =
      app.add_subcommand("pull", "Fetch an image into the store, digest-verified, with its records; prints its digest");
  cmd->add_option("reference", *reference,
                  "[HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]; without HOST, the node settings' registry");
  add_transfer_flags(*cmd, *flags);
  cmd->add_option("--platform", flags->platform,
                  "From an image index, the image of OS/ARCH[/VARIANT] (default: this machine's)");
  cmd->add_flag("--all", pull->all,
                "Every record of the registry: its latest tags and every image it lists records for");
  cmd->add_flag("--records-only", pull->records_only, "The records, manifests and configs, without the layers");
  cmd->add_flag("--allow-older", pull->allow_older,
                "Let a record older than the store's latest of its module/name and configuration become the latest");
  add_trust_key_option(*cmd, pull->trust_keys);
  describe(*cmd,
           "From the registry of the node settings (no HOST), the records the registry lists for the image\n"
           "(pushed by `arec push` from the store that built it) come too, every platform of an index: each\n"
           "becomes a record of the store with its time, configuration and revision as recorded, so compose,\n"
           "records, inspect and verify work here as there. A record that disagrees with its image is refused\n"
           "(exit 3) and nothing is written. An image with no record, or one named with HOST, is kept by digest\n"
           "only: no name, no address; an index is then resolved to this machine's platform, or the one\n"
           "--platform names. Use it with `arec record --base REFERENCE`.\n"
           "A tag is read once: the digest it named then is what is judged, fetched and stored.\n"
           "With a trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys), only records a\n"
           "bundle signed by a trusted key vouches for are taken; an entry that does not verify, is malformed or\n"
           "too large is named and passed over, and a module/name with nothing trusted is refused (exit 4) with\n"
           "nothing written; --all writes every module/name that verifies, names each refused one, and exits 4.\n"
           "`latest` follows the time inside a signed record, not the tag: a tag naming an older record than the\n"
           "registry lists gives way to the newer one, said with a warning. A record older than the store's latest\n"
           "of its module/name and configuration is never made the latest (said), unless pulled by digest or\n"
           "--allow-older.",
           {{"arec pull 127.0.0.1:5000/mesh/app:latest", "Fetches the image into the store; prints its digest."},
            {"arec pull mesh/app --json",
             "From the registry of the node settings (tag latest), with its records; a JSON summary."},
            {"arec pull --all --records-only",
             "The records of every module/name there, without layers: enough to compose."}},
           k_exit_trust);
  cmd->callback([&action, &globals, reference, flags, pull] {
    action = [&globals, reference, flags, pull] { return run_pull(globals, *reference, *flags, *pull); };
  });
}

void add_verify(CLI::App& app, Globals& globals, Action& action) {
  auto selectors = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  auto config = std::make_shared<std::string>();
  auto trust = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("verify", "Check that every latest record is at the registry with its exact digest");
  cmd->add_option("records", *selectors, "Records to check (default: the latest of every module/name)")
      ->type_name("M[/N[@DIGEST]]");
  cmd->add_flag("--json", *json, "Print a JSON array of {repository, digest, state}");
  add_config_option(*cmd, *config);
  add_trust_key_option(*cmd, *trust);
  describe(*cmd,
           "The latest record of each configuration a module/name has records of; --config NAME: of that one only.\n"
           "With a trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys), each record is read and\n"
           "judged as a trusting pull would: one it would refuse is `unsigned` or `untrusted` (with why), exit 4.",
           {{"arec verify", "Checks the latest record of every module/name at the registry of the node settings."},
            {"arec verify mesh/app --json", "Only mesh/app; the states as JSON."}},
           "0 every record is there, 1 one is missing or different, 2 bad input or usage, 3 registry or network "
           "failure, 4 one a trusting pull would refuse (unsigned or untrusted)");
  cmd->callback([&action, &globals, selectors, json, config, trust] {
    action = [&globals, selectors, json, config, trust] {
      return run_verify(globals, *selectors, *config, *trust, *json ? Output::json : Output::text);
    };
  });
}

}  // namespace arec::cli
