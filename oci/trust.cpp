#include "oci/trust.hpp"

#include <algorithm>

namespace arec {

std::string_view to_string(SignatureState state) {
  switch (state) {
    case SignatureState::trusted: return "trusted";
    case SignatureState::unsigned_: return "unsigned";
    case SignatureState::untrusted: return "untrusted";
    case SignatureState::unchecked: return "unchecked";
  }
  return "unsigned";
}

std::string refusal(const SignatureVerdict& verdict) {
  return verdict.state == SignatureState::unsigned_ ? "unsigned" : "not trusted (" + verdict.why + ")";
}

std::string record_subject_name(const Record& record) { return record.repository() + ".record"; }

Result<Digest> record_document_digest(const Record& record) {
  auto document = record_document(record);
  if (!document) return fail(document.error());
  return digest_of(*document);
}

namespace {

// The builder the provenance of `image` signed by `fingerprint` names (its signature checked under
// `key` when there is one).
std::string builder_of(const std::vector<Bundle>& bundles, const Digest& image, std::string_view fingerprint,
                       const Key* key) {
  for (const auto& b : bundles) {
    if (b.hint != fingerprint || b.statement.predicate_type != predicate_type::k_slsa_provenance) continue;
    if (!b.statement.names(image) || (key && !signed_by(b, *key))) continue;
    const auto& p = b.statement.predicate;
    if (p.contains("runDetails") && p["runDetails"].contains("builder") &&
        p["runDetails"]["builder"].value("id", nlohmann::json()).is_string())
      return p["runDetails"]["builder"]["id"].get<std::string>();
  }
  return {};
}

}  // namespace

SignatureVerdict judge_signatures(const std::vector<std::string>& bundles, const Digest& image,
                                  std::string_view repository, const Record* record, const TrustedKeys& trusted) {
  SignatureVerdict verdict;
  if (bundles.empty()) return verdict;
  std::optional<Digest> document;
  if (record) {
    auto d = record_document_digest(*record);
    if (d) document = *d;
  }
  std::vector<Bundle> read;
  std::string malformed;  // why the last bundle that does not parse does not
  for (const auto& bytes : bundles) {
    auto b = parse_bundle(bytes, "a bundle");
    if (b) {
      read.push_back(std::move(*b));
    } else {
      malformed = b.error().message;
    }
  }
  // A signature statement naming this image under this repository, and the record's document.
  const auto is_for_us = [&](const Bundle& b) {
    const auto names = [&](std::string_view name, const Digest& digest) {
      return std::ranges::any_of(b.statement.subjects,
                                 [&](const StatementSubject& s) { return s.name == name && s.digest == digest; });
    };
    return names(repository, image) && (!document || names(record ? record_subject_name(*record) : "", *document));
  };
  const auto signatures = [&](auto&& keep) {
    std::vector<const Bundle*> out;
    for (const auto& b : read)
      if (b.statement.predicate_type == predicate_type::k_sign && keep(b)) out.push_back(&b);
    return out;
  };

  if (trusted.empty()) {
    verdict.state = SignatureState::unchecked;
    if (auto mine = signatures(is_for_us); !mine.empty()) {
      verdict.fingerprint = mine.front()->hint;
      verdict.builder = builder_of(read, image, verdict.fingerprint, nullptr);
    }
    return verdict;
  }
  verdict.state = SignatureState::untrusted;
  bool bad_signature = false, other_subject = false;
  std::string unknown;
  for (const auto* b : signatures([](const Bundle&) { return true; })) {
    const auto key = std::ranges::find(trusted, b->hint, &Key::fingerprint);
    if (key == trusted.end()) {
      unknown = b->hint;
      continue;
    }
    if (!signed_by(*b, *key)) {
      bad_signature = true;
      continue;
    }
    if (!is_for_us(*b)) {
      other_subject = true;
      continue;
    }
    verdict.state = SignatureState::trusted;
    verdict.fingerprint = b->hint;
    verdict.builder = builder_of(read, image, b->hint, &*key);
    return verdict;
  }
  if (bad_signature) {
    verdict.why = "a bundle under a trusted key has a bad signature";
  } else if (other_subject) {
    verdict.why = "the trusted key's statement is for another digest";
  } else if (!unknown.empty()) {
    verdict.why = "signed by an unknown key " + unknown.substr(0, 16);
  } else if (!malformed.empty()) {
    verdict.why = printable(malformed);
  } else {
    verdict.why = "no bundle holds a signature statement";
  }
  return verdict;
}

}  // namespace arec
