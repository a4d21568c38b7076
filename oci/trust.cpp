#include "oci/trust.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace arec {

const Key* TrustPolicy::key(std::string_view fingerprint) const {
  const auto found =
      std::ranges::find_if(m_keys, [&](const TrustedKey& k) { return k.key.fingerprint() == fingerprint; });
  return found == m_keys.end() ? nullptr : &found->key;
}

void TrustPolicy::add(TrustedKey key) {
  if (!this->key(key.key.fingerprint())) m_keys.push_back(std::move(key));
}

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

// A string field of a JSON object, or "".
std::string text_at(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// What the provenance of `image` signed by `fingerprint` says (its signature checked under `key` when
// there is one): who built the image, who signed it when another, and how its base was taken.
void read_provenance(const std::vector<Bundle>& bundles, const Digest& image, std::string_view fingerprint,
                     const Key* key, SignatureVerdict& verdict) {
  for (const auto& b : bundles) {
    if (b.hint != fingerprint || b.statement.predicate_type != predicate_type::k_slsa_provenance) continue;
    if (!b.statement.names(image) || (key && !signed_by(b, *key))) continue;
    const auto& p = b.statement.predicate;
    if (!p.is_object()) continue;
    const auto run = p.value("runDetails", nlohmann::json::object());
    verdict.builder = text_at(run.value("builder", nlohmann::json::object()), "id");
    const auto definition = p.value("buildDefinition", nlohmann::json::object());
    verdict.signer = text_at(definition.value("internalParameters", nlohmann::json::object()), "signedBy");
    const auto dependencies = definition.value("resolvedDependencies", nlohmann::json::array());
    if (dependencies.is_array()) {
      for (const auto& d : dependencies) {
        if (text_at(d, "name") == "base")
          verdict.base = text_at(d.value("annotations", nlohmann::json::object()), "taken");
      }
    }
    return;
  }
}

}  // namespace

SignatureVerdict judge_signatures(const std::vector<std::string>& bundles, const Digest& image,
                                  std::string_view repository, const Record* record, const TrustPolicy& policy) {
  SignatureVerdict verdict;
  std::optional<Digest> document;
  std::string not_a_record;  // why `record` is not one a record document can hold
  if (record) {
    auto text = record_document(*record);
    Result<Record> read = text ? parse_record_document(*text, "the record") : Result<Record>(fail(text.error()));
    if (!read) {
      not_a_record = read.error().message;
    } else {
      document = digest_of(*text);
    }
  }
  if (policy.checks() && !not_a_record.empty()) {
    // No statement can vouch for it: what a record's fields say is only believed through its document.
    verdict.state = SignatureState::untrusted;
    verdict.why = printable(not_a_record);
    return verdict;
  }
  if (bundles.empty()) return verdict;
  std::vector<Bundle> read;
  std::string malformed;  // why the last bundle that does not parse does not
  for (std::size_t i = 0; i < std::min(bundles.size(), k_max_bundles_judged); ++i) {
    auto b = parse_bundle(bundles[i], "a bundle");
    if (b) {
      read.push_back(std::move(*b));
    } else {
      malformed = b.error().message;
    }
  }
  // A signature statement naming this image under this repository, and the record's document. Other
  // subjects beside them (an SBOM's digest) take nothing away.
  const auto is_for_us = [&](const Bundle& b) {
    const auto names = [&](std::string_view name, const Digest& digest) {
      return std::ranges::any_of(b.statement.subjects,
                                 [&](const StatementSubject& s) { return s.name == name && s.digest == digest; });
    };
    return names(repository, image) && (!record || (document && names(record_subject_name(*record), *document)));
  };
  const auto signatures = [&](auto&& keep) {
    std::vector<const Bundle*> out;
    for (const auto& b : read)
      if (b.statement.predicate_type == predicate_type::k_sign && keep(b)) out.push_back(&b);
    return out;
  };

  if (!policy.checks()) {
    verdict.state = SignatureState::unchecked;
    if (auto mine = signatures(is_for_us); !mine.empty()) {
      verdict.fingerprint = mine.front()->hint;
      read_provenance(read, image, verdict.fingerprint, nullptr, verdict);
    }
    return verdict;
  }
  verdict.state = SignatureState::untrusted;
  bool bad_signature = false, other_subject = false;
  std::string unknown;
  for (const auto* b : signatures([](const Bundle&) { return true; })) {
    const Key* key = policy.key(b->hint);
    if (!key) {
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
    read_provenance(read, image, b->hint, key, verdict);
    return verdict;
  }
  if (bad_signature) {
    verdict.why = "a bundle under a trusted key has a bad signature";
  } else if (other_subject) {
    verdict.why = "the trusted key's statement is for another digest";
  } else if (!unknown.empty()) {
    verdict.why = "signed by an unknown key " + printable(unknown.substr(0, 16));
  } else if (!malformed.empty()) {
    verdict.why = printable(malformed);
  } else {
    verdict.why = "no bundle holds a signature statement";
  }
  return verdict;
}

std::pair<std::int64_t, std::string> newness(const Record& record) {
  return {rfc3339_seconds(record.recorded).value_or(0), record.recorded};
}

Result<std::vector<std::size_t>> rollbacks(const std::vector<Record>& incoming, const HeldLatest& held) {
  // The newest of `incoming` of each module/name and configuration.
  using Line = std::tuple<std::string, std::string, std::string>;
  std::map<Line, std::pair<std::int64_t, std::string>> newest;
  std::map<Line, const Record*> first;
  for (const auto& r : incoming) {
    const Line line{r.module, r.name, r.config};
    auto [it, added] = newest.try_emplace(line, newness(r));
    if (!added) it->second = std::max(it->second, newness(r));
    first.try_emplace(line, &r);
  }
  std::vector<Line> backwards;
  for (const auto& [line, time] : newest) {
    auto latest = held(*first.at(line));
    if (!latest) return fail(latest.error());
    if (*latest && time < newness(**latest)) backwards.push_back(line);
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < incoming.size(); ++i) {
    const auto& r = incoming[i];
    if (std::ranges::find(backwards, Line{r.module, r.name, r.config}) != backwards.end()) out.push_back(i);
  }
  return out;
}

}  // namespace arec
