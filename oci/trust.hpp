// Which records to believe: a record is trusted when one of its image's bundles is a signature
// statement, signed by a trusted key, naming both the image and the record's own document. One policy
// (the trusted keys) and one verdict, asked by every boundary: pull, import, a base, push, move,
// compose and verify.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oci/record.hpp"
#include "oci/signature.hpp"

namespace arec {

// A trusted key and where the run was told of it ("--trust-key team.pub", "AREC_TRUST_KEYS team.pub",
// "node settings nodes.json: trust.keys keys/team.pub").
struct TrustedKey {
  Key key;
  std::string source;
};

// The trust policy of a run: the keys it trusts, loaded once by the command line (cli/signing) from
// --trust-key, AREC_TRUST_KEYS and the node settings, then asked at every boundary. Without a key
// nothing is checked, as before signing existed.
class TrustPolicy {
 public:
  TrustPolicy() = default;
  explicit TrustPolicy(std::vector<TrustedKey> keys) : m_keys(std::move(keys)) {}

  // Whether anything is checked: at least one key is trusted.
  bool checks() const { return !m_keys.empty(); }
  const std::vector<TrustedKey>& keys() const { return m_keys; }
  // The trusted key of that fingerprint, or null.
  const Key* key(std::string_view fingerprint) const;
  // Adds a key (once per fingerprint).
  void add(TrustedKey key);

 private:
  std::vector<TrustedKey> m_keys;
};

enum class SignatureState {
  trusted,    // signed by a trusted key, for this image and record
  unsigned_,  // no bundle at all
  untrusted,  // bundles, none of which verifies under a trusted key (why says which way)
  unchecked,  // no trusted key was given: signer and builder are what the bundles claim
};

struct SignatureVerdict {
  SignatureState state = SignatureState::unsigned_;
  std::string why;          // for untrusted: signed by an unknown key, for another digest, bad signature
  std::string fingerprint;  // the signer's key (verified when trusted, claimed when unchecked)
  // What the provenance the same key signed says: who built the image (runDetails.builder.id), who
  // signed it when that is another (a record pulled and signed on request), and how its base was taken.
  std::string builder;
  std::string signer;
  std::string base;
};

// "unsigned", "untrusted", "trusted" or "unchecked".
std::string_view to_string(SignatureState state);

// What a refusal says of a verdict that is not trusted: "unsigned", or "not trusted (why)".
std::string refusal(const SignatureVerdict& verdict);

// The subject name and digest of a record's document, as a signature statement names it: the record
// travels as its own artifact, and a statement naming its digest vouches for every field of it.
std::string record_subject_name(const Record& record);
Result<Digest> record_document_digest(const Record& record);

// At most this many bundles of one image are judged; a registry or bundle listing more is not read further.
inline constexpr std::size_t k_max_bundles_judged = 64;

// The one verdict. Judges `bundles` (the bytes of each bundle the store or registry keeps for `image`)
// for the record `record` of that image, or for the image alone (a pulled image with no record) when it
// is null. `repository` is the image's module/name. With keys to check, the record must be one a
// record document can hold (an image manifest's, its fields as arec writes them: a record claiming to
// be an index is untrusted), and its every field is vouched for by the statement's digest of its
// document, so the verdict is about exactly the record given. Bundles that do not parse count as
// untrusted; bundles past k_max_bundles_judged are not looked at.
SignatureVerdict judge_signatures(const std::vector<std::string>& bundles, const Digest& image,
                                  std::string_view repository, const Record* record, const TrustPolicy& policy);

// How new a record is, by the time recorded inside it: its seconds, then its text (a fraction).
std::pair<std::int64_t, std::string> newness(const Record& record);

// The records among `incoming` (about to be added to a store, oldest first) that would move the latest
// of their module/name and configuration back: for each module/name and configuration, the store's
// latest is `held(record)`; when none of `incoming` of that module/name and configuration is as new as
// it, every one of them is named, since the last one added would become the latest. Their indexes.
// Whether a record recorded before the latest a store holds of its module/name and configuration may
// become the latest (pull --allow-older, import --allow-older). A pull naming a digest asks for it.
enum class Older { refused, allowed };

using HeldLatest = std::function<Result<std::optional<Record>>(const Record&)>;
Result<std::vector<std::size_t>> rollbacks(const std::vector<Record>& incoming, const HeldLatest& held);

}  // namespace arec
