// `arec key generate` and `arec sign`, and what every command shares of signing and trust.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <iostream>
#include <memory>
#include <set>

#include "cli/signing.hpp"

namespace arec::cli {

void add_sign_key_option(CLI::App& cmd, std::string& file) {
  cmd.add_option("--sign-key", file,
                 "Sign with this private key (PEM, EC P-256 or Ed25519, mode 600; AREC_SIGNING_KEY)")
      ->type_name("FILE");
}

void add_trust_key_option(CLI::App& cmd, std::vector<std::string>& files) {
  cmd.add_option("--trust-key", files,
                 "Trust signatures by this public key (repeatable; also AREC_TRUST_KEYS and the node settings' trust)")
      ->type_name("FILE");
}

Result<std::optional<Key>> signing_key(const Globals& globals, const std::string& flag) {
  const std::string file = flag.empty() ? globals.settings.signing_key : flag;
  if (file.empty()) return std::optional<Key>();
  auto key = Key::load_private(file);
  if (!key) return fail(std::move(key.error()).context(flag.empty() ? "AREC_SIGNING_KEY" : "--sign-key"));
  return std::optional<Key>(std::move(*key));
}

Result<TrustPolicy> trust_policy(const Globals& globals, const std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, std::string>> files;  // where it was named, the file
  for (const auto& f : flags) {
    if (f.empty()) return fail_input("--trust-key \"\": an empty file name; name a trusted public key file");
    files.emplace_back("--trust-key", f);
  }
  for (const auto& f : globals.settings.trust_keys) files.emplace_back("AREC_TRUST_KEYS", f);
  auto nodes = load_settings(globals);
  if (!nodes) return fail(nodes.error());
  for (const auto& f : nodes->trust_keys) files.emplace_back("node settings " + nodes->source + ": trust.keys", f);
  TrustPolicy policy;
  for (const auto& [where, file] : files) {
    auto keys = Key::load_public_keys(file);
    if (!keys) return fail(std::move(keys.error()).context(where));
    for (auto& key : *keys) policy.add({std::move(key), where + " " + file});
  }
  return policy;
}

void say_trust(const TrustPolicy& policy, std::string_view doing) {
  if (!policy.checks()) {
    spdlog::info(
        "{}: no trusted key (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys): no signature checked",
        doing);
    return;
  }
  std::string keys;
  for (const auto& k : policy.keys())
    keys += (keys.empty() ? "" : ", ") + k.key.fingerprint().substr(0, 16) + " (" + k.source + ")";
  spdlog::info("{}: signatures checked against {} {}", doing, policy.keys().size() == 1 ? "key" : "keys", keys);
}

ProvenanceFacts provenance_facts(const Globals& globals) {
  const auto now = now_rfc3339();
  return {
      globals.settings.builder_id.empty() ? default_builder_id() : globals.settings.builder_id, now, now, {}, {}, {}};
}

std::string signer_text(const SignatureVerdict& verdict) {
  switch (verdict.state) {
    case SignatureState::unsigned_: return "unsigned";
    case SignatureState::untrusted: return "untrusted (" + verdict.why + ")";
    case SignatureState::trusted:
    case SignatureState::unchecked:
      if (verdict.fingerprint.empty()) return "unsigned";
      return "key " + verdict.fingerprint.substr(0, 16) + (verdict.builder.empty() ? "" : " on " + verdict.builder);
  }
  return "unsigned";
}

nlohmann::json to_json(const SignatureVerdict& verdict) {
  nlohmann::json out = {{"state", to_string(verdict.state)}};
  if (!verdict.why.empty()) out["why"] = verdict.why;
  if (!verdict.fingerprint.empty()) out["key"] = verdict.fingerprint;
  if (!verdict.builder.empty()) out["builder"] = verdict.builder;
  if (!verdict.signer.empty()) out["signer"] = verdict.signer;
  if (!verdict.base.empty()) out["base"] = verdict.base;
  return out;
}

namespace {

// Creates `file` (never over an existing one) with `mode` from the start: no moment at which others
// could read a private key.
Status write_new_file(const fs::Path& file, std::string_view content, mode_t mode) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return fail_input(file.string() + (errno == EEXIST ? ": exists already; a key is never overwritten"
                                                       : ": cannot be created: " + std::string(std::strerror(errno))));
  }
  const bool written =
      ::fchmod(fd, mode) == 0 && ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    ::unlink(file.c_str());
    return fail_input(file.string() + ": writing it failed");
  }
  return {};
}

Result<int> run_key_generate(const std::string& action, const std::string& prefix) {
  if (action != "generate") return fail_input("key \"" + action + "\": unknown action (expected generate)");
  const fs::Path private_file = prefix + ".key", public_file = prefix + ".pub";
  for (const auto& f : {private_file, public_file}) {
    if (::access(f.c_str(), F_OK) == 0) return fail_input(f.string() + ": exists already; a key is never overwritten");
  }
  auto key = Key::generate();
  if (!key) return fail(key.error());
  auto private_pem = key->private_pem();
  auto public_pem = key->public_pem();
  if (!private_pem || !public_pem) return fail(private_pem ? public_pem.error() : private_pem.error());
  if (auto s = write_new_file(private_file, *private_pem, 0600); !s) return fail(s.error());
  if (auto s = write_new_file(public_file, *public_pem, 0644); !s) {
    ::unlink(private_file.c_str());
    return fail(s.error());
  }
  std::cout << key->fingerprint() << '\n';
  spdlog::info("wrote {} (keep it secret: a CI secret, mode 600) and {} (give it to every machine that composes)",
               private_file.string(), public_file.string());
  return 0;
}

Result<int> run_sign(const Globals& globals, const std::vector<std::string>& selectors, const std::string& key_flag,
                     const std::string& config, SignMadeElsewhere elsewhere, Output output) {
  auto key = signing_key(globals, key_flag);
  if (!key) return fail(key.error());
  if (!*key) return fail_input("sign: name the key with --sign-key FILE or AREC_SIGNING_KEY");
  auto records = select_records(globals, selectors, config);
  if (!records) return fail(records.error());
  if (records->empty()) return fail_input("sign: no records in the store " + store_dir(globals).string());
  auto store = Store::open(store_dir(globals));
  if (!store) return fail(store.error());
  // Everything is checked before anything is signed. Records named are signed or refused; of the latest
  // of every module/name, those made elsewhere are left, and counted.
  std::vector<Record> to_sign;
  std::size_t made_elsewhere = 0;
  for (const auto& record : *records) {
    if (auto s = signable(*store, record, elsewhere); !s) {
      if (selectors.empty() && s.error().kind == ErrorKind::trust) {
        ++made_elsewhere;
        spdlog::debug("{}", s.error().message);
        continue;
      }
      return fail(s.error());
    }
    to_sign.push_back(record);
  }
  const auto facts = provenance_facts(globals);
  nlohmann::json out = nlohmann::json::array();
  int signed_now = 0;
  for (const auto& record : to_sign) {
    auto done = sign_checked(*store, record, **key, facts, elsewhere);
    if (!done) return fail(done.error());
    signed_now += *done ? 1 : 0;
    if (output == Output::json) {
      out.push_back({{"repository", record.repository()},
                     {"digest", record.manifest.digest.str()},
                     {"signed", *done},
                     {"key", (*key)->fingerprint()}});
    } else {
      std::cout << (*done ? "signed      " : "was signed  ") << record.identity() << '\n';
    }
  }
  if (output == Output::json) print_json(out);
  spdlog::info("{} signed with key {}, {} signed by it before", counted(signed_now, "record"),
               (*key)->fingerprint().substr(0, 16), to_sign.size() - static_cast<std::size_t>(signed_now));
  if (made_elsewhere > 0) {
    spdlog::info("{} left unsigned: pulled or imported, not recorded by this store (arec sign --pulled signs them)",
                 counted(made_elsewhere, "record"));
  }
  return 0;
}

}  // namespace

void add_key(CLI::App& app, Globals&, Action& action) {
  auto verb = std::make_shared<std::string>();
  auto prefix = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("key", "Make a signing key pair: PREFIX.key (private, mode 600) and PREFIX.pub");
  cmd->add_option("action", *verb, "generate")->required();
  cmd->add_option("--out", *prefix, "Where to write: PREFIX.key and PREFIX.pub (never over existing files)")
      ->required()
      ->type_name("PREFIX");
  describe(*cmd,
           "An EC P-256 key, as `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` writes it; prints\n"
           "its fingerprint (the SHA-256 of the public key, which bundles name as their hint). Keep PREFIX.key in\n"
           "the CI's secrets (AREC_SIGNING_KEY); give PREFIX.pub to every machine that pulls or composes.",
           {{"arec key generate --out release", "Writes release.key and release.pub; prints the key's fingerprint."}},
           k_exit_local);
  cmd->callback([&action, verb, prefix] { action = [verb, prefix] { return run_key_generate(*verb, *prefix); }; });
}

void add_sign(CLI::App& app, Globals& globals, Action& action) {
  auto selectors = std::make_shared<std::vector<std::string>>();
  auto key = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto pulled = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("sign", "Sign records made before: a signature and SLSA provenance for each");
  cmd->add_option("records", *selectors, "Records to sign (default: the latest of every module/name)")
      ->type_name("M[/N[@DIGEST]]");
  add_sign_key_option(*cmd, *key);
  add_config_option(*cmd, *config);
  cmd->add_flag("--pulled", *pulled,
                "Also sign records this store pulled or imported: the provenance names their builder and this signer");
  cmd->add_flag("--json", *json, "Print a JSON array of {repository, digest, signed, key}");
  describe(*cmd,
           "Each record gets two Sigstore bundles as referrers of its image, as `record --sign-key` makes them: a\n"
           "signature naming the image and the record, and SLSA v1 provenance. A record this key signed already\n"
           "gets nothing new. Only records this store recorded are signed, and only when it holds their image\n"
           "whole: a record pulled or imported is someone else's build, signed only with --pulled (its\n"
           "provenance then names that builder, and this one as the signer). A record named that may not be\n"
           "signed is refused before anything is signed (exit 4 made elsewhere, 2 image not held); of the latest of\n"
           "every module/name, those made elsewhere are left and counted.",
           {{"arec sign mesh/app --sign-key team.key", "Signs the latest mesh/app of each configuration."},
            {"AREC_SIGNING_KEY=team.key arec sign", "Signs the latest record of every module/name recorded here."}},
           "0 done, 2 bad input or usage, 4 a record made elsewhere named without --pulled");
  cmd->callback([&action, &globals, selectors, key, config, json, pulled] {
    action = [&globals, selectors, key, config, json, pulled] {
      return run_sign(globals, *selectors, *key, *config, *pulled ? SignMadeElsewhere::yes : SignMadeElsewhere::no,
                      *json ? Output::json : Output::text);
    };
  });
}

}  // namespace arec::cli
