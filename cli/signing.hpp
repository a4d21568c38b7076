// What the commands share of signing and trust: the key a command signs with, the keys it trusts,
// and the facts of the provenance it writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "recorder/signing.hpp"

namespace arec::cli {

// --sign-key FILE of record, sign and push.
void add_sign_key_option(CLI::App& cmd, std::string& file);
// --trust-key FILE (repeatable) of every command that takes records in or out, compose and verify.
void add_trust_key_option(CLI::App& cmd, std::vector<std::string>& files);

// The key --sign-key names, else AREC_SIGNING_KEY; nothing when neither is set.
Result<std::optional<Key>> signing_key(const Globals& globals, const std::string& flag);
// The run's trust policy: every public key of every file --trust-key, AREC_TRUST_KEYS and the node
// settings' trust.keys name, each key once, with where it was named. None named: nothing is checked,
// as before signing existed. Trust declared but empty is an error (exit 2): an empty file name, a file
// holding no key; so is a key file, or its directory, that others may write.
Result<TrustPolicy> trust_policy(const Globals& globals, const std::vector<std::string>& flags);
// Says once, on an info line, which keys a command checks signatures against ("no signature checked"
// when none); `doing` is what it checks ("pull").
void say_trust(const TrustPolicy& policy, std::string_view doing);
// The provenance's builder and start time of this run (the packages come from the image).
ProvenanceFacts provenance_facts(const Globals& globals);
// "unsigned", "untrusted (why)", or the signer's fingerprint, shortened, and the builder.
std::string signer_text(const SignatureVerdict& verdict);
nlohmann::json to_json(const SignatureVerdict& verdict);

// The records MODULE, MODULE/NAME or MODULE/NAME@DIGEST name, or the latest of every module/name when
// `selectors` is empty (of each configuration, or of the one `config` names); push, verify and sign.
Result<std::vector<Record>> select_records(const Globals& globals, const std::vector<std::string>& selectors,
                                           const std::string& config);

void add_key(CLI::App& app, Globals& globals, Action& action);
void add_sign(CLI::App& app, Globals& globals, Action& action);

}  // namespace arec::cli
