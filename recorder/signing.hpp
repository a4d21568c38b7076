// Signing a record where it is made (or later, by the store that made it, or on request): two Sigstore
// bundles as referrers of the record's image, carried like its SBOM. The signature statement names the
// image (module/name), the record's document (module/name.record) and each SBOM's document
// (module/name.spdx.json, module/name.cdx.json), so one signature vouches for all of them; the SLSA v1
// provenance says how the image was built. Neither holds an address (rule 1).
#pragma once

#include <string>
#include <vector>

#include "oci/trust.hpp"
#include "recorder/sbom.hpp"
#include "store/store.hpp"

namespace arec {

// What the provenance says besides the record's own fields.
struct ProvenanceFacts {
  std::string builder_id;             // runDetails.builder.id: AREC_BUILDER_ID, else urn:arec:builder:<host>
  std::string started;                // RFC 3339: when recording (or signing) began
  std::string finished;               // and ended
  std::vector<std::string> packages;  // the Debian packages of the layers, as purls
  // Who signs, when it is not the builder (a record made elsewhere, signed on request): the
  // provenance's buildDefinition.internalParameters.signedBy.
  std::string signed_by;
  // How the base was taken ("signed by trusted key <fingerprint>", "pinned by digest: not checked"):
  // the annotation "taken" of the base among resolvedDependencies.
  std::string base_taken;
};

// The buildType of arec's provenance.
inline constexpr std::string_view k_build_type = "https://arec.dev/provenance/record/v1";

// "urn:arec:builder:<this host's name>".
std::string default_builder_id();

// The name a signature statement gives an SBOM document of the image of `repository` (module/name):
// "module/name.spdx.json" or "module/name.cdx.json", the files' usual names.
std::string sbom_subject_name(std::string_view repository, SbomFormat format);

// The SBOM documents the store keeps for `record`'s image, as a signature statement names them.
Result<std::vector<StatementSubject>> sbom_subjects(const Store& store, const Record& record);

// The two statements of `record`: the signature (cosign's sign predicate, naming the image, the
// record's document and `sboms`) and the provenance.
Result<Statement> signature_statement(const Record& record, const std::vector<StatementSubject>& sboms = {});
Statement provenance_statement(const Record& record, const ProvenanceFacts& facts);

// The bytes of every bundle the store keeps for the manifest `image`, oldest first.
Result<std::vector<std::string>> read_bundles(const Store& store, const Digest& image);

// Signs `record` with `key`: puts its two bundles into the store as referrers of its image and returns
// their descriptors, for the caller to list (StoreWriter::commit or keep). The statement names the
// SBOMs the store keeps for the image and `new_sboms` (made with the record, not listed yet). Nothing
// when the store holds this key's signature of all of that already: signing twice adds nothing.
Result<std::vector<Descriptor>> sign_record(Store& store, const Record& record, const Key& key,
                                            const ProvenanceFacts& facts,
                                            const std::vector<StatementSubject>& new_sboms = {});

// sign_record for a record the store holds, the bundles listed under the store's lock. True when it
// signed, false when the key had signed it already. The provenance's packages come from the store's
// SBOM of the image.
Result<bool> sign_recorded(Store& store, const Record& record, const Key& key, ProvenanceFacts facts);

// Whether a record made elsewhere (pulled or imported) is signed too: only on request, as its signature
// vouches for a build this store did not make.
enum class SignMadeElsewhere { no, yes };

// Whether `record` may be signed here (sign_checked's checks, nothing signed): nothing, or why not.
Status signable(const Store& store, const Record& record, SignMadeElsewhere elsewhere);

// sign_recorded for arec sign and push --sign-key, once the record is checked: the store holds its
// image whole, the image's files are the store's own, the record is one a record document can hold
// (exit 2 otherwise), and this store built it (Store::built_here) unless `elsewhere` says yes (exit 4
// otherwise). The provenance of a record made elsewhere names its builder as the record's own
// provenance claims it (else unknown) and this signer as signedBy.
Result<bool> sign_checked(Store& store, const Record& record, const Key& key, ProvenanceFacts facts,
                          SignMadeElsewhere elsewhere);

// The verdict on a record of the store (judge_signatures over the bundles of its image).
Result<SignatureVerdict> judge_record(const Store& store, const Record& record, const TrustPolicy& policy);

// Under a policy that checks: every one of `records` signed by a trusted key, by the bundles the store
// keeps, or an error (exit 4) naming the first that is not and why, for a record leaving the store
// (push, move). `doing` begins the message.
Status admit_records(const Store& store, const std::vector<Record>& records, const TrustPolicy& policy,
                     const std::string& doing);

// The verdict on what a module/name's latest names: its record, or for an index the store derives over
// several platforms, each platform's record (the index is made from those records alone, so they are
// what is vouched for); the first verdict that is not trusted, else the first record's.
Result<SignatureVerdict> judge_image(const Store& store, const Store::LatestImage& image, const TrustPolicy& policy);

}  // namespace arec
