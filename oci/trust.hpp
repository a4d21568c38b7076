// Which records to believe: a record is trusted when one of its image's bundles is a signature
// statement, signed by a trusted key, naming both the image and the record's own document.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oci/record.hpp"
#include "oci/signature.hpp"

namespace arec {

// The keys a machine trusts (--trust-key, AREC_TRUST_KEYS, the node settings' trust.keys). Empty:
// nothing is checked, as before signing existed.
using TrustedKeys = std::vector<Key>;

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
  std::string builder;      // runDetails.builder.id of the provenance the same key signed
};

// "unsigned", "untrusted", "trusted" or "unchecked".
std::string_view to_string(SignatureState state);

// What a refusal says of a verdict that is not trusted: "unsigned", or "not trusted (why)".
std::string refusal(const SignatureVerdict& verdict);

// The subject name and digest of a record's document, as a signature statement names it: the record
// travels as its own artifact, and a statement naming its digest vouches for every field of it.
std::string record_subject_name(const Record& record);
Result<Digest> record_document_digest(const Record& record);

// Judges `bundles` (the bytes of each bundle the store or registry keeps for `image`) for the record
// `record` of that image, or for the image alone (a pulled image with no record) when it is null.
// `repository` is the image's module/name. Bundles that do not parse count as untrusted.
SignatureVerdict judge_signatures(const std::vector<std::string>& bundles, const Digest& image,
                                  std::string_view repository, const Record* record, const TrustedKeys& trusted);

}  // namespace arec
