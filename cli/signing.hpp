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
// --trust-key FILE (repeatable) of pull, compose, verify and push.
void add_trust_key_option(CLI::App& cmd, std::vector<std::string>& files);

// The key --sign-key names, else AREC_SIGNING_KEY; nothing when neither is set.
Result<std::optional<Key>> signing_key(const Globals& globals, const std::string& flag);
// Every key --trust-key, AREC_TRUST_KEYS and the node settings' trust.keys name, each once; empty when
// none does (then nothing is checked, as before signing existed).
Result<TrustedKeys> trusted_keys(const Globals& globals, const std::vector<std::string>& flags);
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
