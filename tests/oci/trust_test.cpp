#include "oci/trust.hpp"

#include <gtest/gtest.h>

#include <map>

namespace arec {
namespace {

Digest d(char c) { return *Digest::parse("sha256:" + std::string(64, c)); }

Record record_of(char image, std::string recorded = "2026-01-02T03:04:05Z", std::string config = "Release") {
  Record r;
  r.module = "team";
  r.name = "app";
  r.manifest = Descriptor{std::string(media_type::k_manifest), d(image), 1234, {}, {}, {}, {}};
  r.recorded = std::move(recorded);
  r.config = std::move(config);
  return r;
}

// The signature statement of `record`, as recorder/signing makes it, with `extra` subjects after.
Statement statement_of(const Record& record, std::vector<StatementSubject> extra = {}) {
  Statement s{
      {{record.repository(), record.manifest.digest}, {record_subject_name(record), *record_document_digest(record)}},
      std::string(predicate_type::k_sign),
      nlohmann::json::object()};
  for (auto& e : extra) s.subjects.push_back(std::move(e));
  return s;
}

std::string signed_bundle(const Statement& statement, const Key& key) {
  auto bundle = make_bundle(statement, key);
  EXPECT_TRUE(bundle) << bundle.error().message;
  return bundle ? *bundle : std::string();
}

// `bundle` with its key hint changed to `fingerprint`: the hint is outside what the signature covers.
std::string with_hint(const std::string& bundle, const std::string& fingerprint) {
  auto json = nlohmann::json::parse(bundle);
  json["verificationMaterial"]["publicKey"]["hint"] = fingerprint;
  return json.dump();
}

struct Keys {
  Key team = *Key::generate();
  Key other = *Key::generate();
  TrustPolicy policy() const {
    std::vector<TrustedKey> keys;
    keys.push_back({*team.public_key(), "--trust-key team.pub"});
    return TrustPolicy(std::move(keys));
  }
};

TEST(Trust, TheTeamsSignatureOfTheRecordIsTrustedAndAnotherRecordsIsNot) {
  Keys k;
  const auto record = record_of('a');
  const auto bundle = signed_bundle(statement_of(record), k.team);
  const auto verdict = judge_signatures({bundle}, record.manifest.digest, "team/app", &record, k.policy());
  EXPECT_EQ(verdict.state, SignatureState::trusted) << verdict.why;
  EXPECT_EQ(verdict.fingerprint, k.team.fingerprint());
  // The same image, another time recorded: the statement names another record document.
  const auto later = record_of('a', "2026-01-02T03:04:06Z");
  const auto other = judge_signatures({bundle}, later.manifest.digest, "team/app", &later, k.policy());
  EXPECT_EQ(other.state, SignatureState::untrusted);
  EXPECT_EQ(other.why, "the trusted key's statement is for another digest");
}

// The bundle names exactly the right image and record, under the trusted key's hint, but the signature
// is another key's: only the check of the signature itself refuses it.
TEST(Trust, TheRightSubjectsUnderTheTrustedKeysHintWithABadSignatureAreRefusedForTheSignature) {
  Keys k;
  const auto record = record_of('a');
  const auto forged = with_hint(signed_bundle(statement_of(record), k.other), k.team.fingerprint());
  const auto verdict = judge_signatures({forged}, record.manifest.digest, "team/app", &record, k.policy());
  EXPECT_EQ(verdict.state, SignatureState::untrusted);
  EXPECT_EQ(verdict.why, "a bundle under a trusted key has a bad signature");
}

// What a record's fields say is only believed through its document: a record claiming to be of an
// index (a crafted import, an edited history) is refused whatever the bundles beside it.
TEST(Trust, ARecordClaimingAnotherMediaTypeIsUntrusted) {
  Keys k;
  const auto record = record_of('a');
  const auto bundle = signed_bundle(statement_of(record), k.team);
  auto claiming = record;
  claiming.manifest.media_type = std::string(media_type::k_index);
  const auto verdict = judge_signatures({bundle}, claiming.manifest.digest, "team/app", &claiming, k.policy());
  EXPECT_EQ(verdict.state, SignatureState::untrusted);
  EXPECT_NE(verdict.why.find("\"mediaType\""), std::string::npos) << verdict.why;
}

// A statement may name more (the record's SBOMs): what it names of this record is what counts.
TEST(Trust, AStatementWithMoreSubjectsStillVouches) {
  Keys k;
  const auto record = record_of('a');
  const auto bundle = signed_bundle(statement_of(record, {{"team/app.sbom", d('c')}}), k.team);
  EXPECT_EQ(judge_signatures({bundle}, record.manifest.digest, "team/app", &record, k.policy()).state,
            SignatureState::trusted);
}

TEST(Trust, EachKeyOfThePolicyIsTrustedAndNoKeyChecksNothing) {
  Keys k;
  auto policy = k.policy();
  policy.add({*k.other.public_key(), "AREC_TRUST_KEYS other.pub"});
  policy.add({*k.other.public_key(), "again"});
  EXPECT_EQ(policy.keys().size(), 2U);
  const auto record = record_of('a');
  const auto bundle = signed_bundle(statement_of(record), k.other);
  EXPECT_EQ(judge_signatures({bundle}, record.manifest.digest, "team/app", &record, policy).state,
            SignatureState::trusted);
  EXPECT_EQ(judge_signatures({bundle}, record.manifest.digest, "team/app", &record, TrustPolicy()).state,
            SignatureState::unchecked);
  EXPECT_EQ(judge_signatures({}, record.manifest.digest, "team/app", &record, policy).state, SignatureState::unsigned_);
}

TEST(Trust, ARollbackIsEveryRecordOfALineNoneOfWhichIsAsNewAsTheStoresLatest) {
  std::map<std::string, Record> held{{"Release", record_of('e', "2026-03-01T00:00:00Z")},
                                     {"Debug", record_of('f', "2026-01-01T00:00:00Z", "Debug")}};
  const HeldLatest latest = [&](const Record& r) -> Result<std::optional<Record>> {
    const auto it = held.find(r.config);
    return it == held.end() ? std::optional<Record>() : std::optional<Record>(it->second);
  };
  // Release: two older ones, and the store's is newer: both held back. Debug: an older one and a newer
  // one; the newer ends as the latest, so both go in. Profile: the store has none.
  const std::vector<Record> incoming{record_of('1', "2026-02-01T00:00:00Z"), record_of('2', "2026-02-02T00:00:00Z"),
                                     record_of('3', "2025-12-01T00:00:00Z", "Debug"),
                                     record_of('4', "2026-01-02T00:00:00Z", "Debug"),
                                     record_of('5', "2020-01-01T00:00:00Z", "Profile")};
  auto back = rollbacks(incoming, latest);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, (std::vector<std::size_t>{0, 1}));
}

}  // namespace
}  // namespace arec
