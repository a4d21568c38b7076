#include "recorder/signing.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "recorder/sbom.hpp"

namespace arec {

std::string default_builder_id() {
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return "urn:arec:builder:unknown";
  return "urn:arec:builder:" + std::string(host);
}

std::string sbom_subject_name(std::string_view repository, SbomFormat format) {
  return std::string(repository) + (format == SbomFormat::cyclonedx ? ".cdx.json" : ".spdx.json");
}

Result<std::vector<StatementSubject>> sbom_subjects(const Store& store, const Record& record) {
  auto referrers = store.referrers(record.manifest.digest);
  if (!referrers) return fail(referrers.error());
  std::vector<StatementSubject> out;
  for (const auto format : {SbomFormat::spdx, SbomFormat::cyclonedx}) {
    for (const auto& d : *referrers) {
      if (d.artifact_type != sbom_media_type(format)) continue;
      auto manifest = store.read_manifest(d);
      if (!manifest) return fail(std::move(manifest.error()).context("SBOM manifest " + d.digest.str()));
      if (manifest->layers.size() != 1) continue;
      out.push_back({sbom_subject_name(record.repository(), format), manifest->layers.front().digest});
      break;
    }
  }
  return out;
}

Result<Statement> signature_statement(const Record& record, const std::vector<StatementSubject>& sboms) {
  auto document = record_document_digest(record);
  if (!document) return fail(document.error());
  Statement statement{{{record.repository(), record.manifest.digest}, {record_subject_name(record), *document}},
                      std::string(predicate_type::k_sign),
                      nlohmann::json::object()};
  statement.subjects.insert(statement.subjects.end(), sboms.begin(), sboms.end());
  return statement;
}

Statement provenance_statement(const Record& record, const ProvenanceFacts& facts) {
  nlohmann::json external = {{"module", record.module}, {"name", record.name}};
  for (auto [key, value] :
       {std::pair{"target", &record.target}, {"configuration", &record.config}, {"revision", &record.revision}}) {
    if (!value->empty()) external[key] = *value;
  }
  auto dependencies = nlohmann::json::array();
  if (!record.revision.empty()) {
    nlohmann::json source = {{"uri", "urn:arec:revision:" + record.revision}};
    // A clean work tree's revision is a commit; "-dirty" is not one, and names no digest.
    if (record.revision.find('-') == std::string::npos) source["digest"] = {{"gitCommit", record.revision}};
    dependencies.push_back(std::move(source));
  }
  if (auto base = Digest::parse(record.base_digest)) {
    nlohmann::json dependency = {{"name", "base"}, {"digest", {{std::string(base->algorithm_name()), base->hex()}}}};
    if (!facts.base_taken.empty()) dependency["annotations"] = {{"taken", facts.base_taken}};
    dependencies.push_back(std::move(dependency));
  }
  for (const auto& purl : facts.packages) dependencies.push_back({{"uri", purl}});
  nlohmann::json definition = {{"buildType", k_build_type},
                               {"externalParameters", std::move(external)},
                               {"resolvedDependencies", std::move(dependencies)}};
  // A record made elsewhere and signed here: the builder is who made it, the signer who vouches for it.
  if (!facts.signed_by.empty()) definition["internalParameters"] = {{"signedBy", facts.signed_by}};
  nlohmann::json predicate = {
      {"buildDefinition", std::move(definition)},
      {"runDetails",
       {{"builder", {{"id", facts.builder_id}}},
        {"metadata",
         {{"invocationId", record.recorded}, {"startedOn", facts.started}, {"finishedOn", facts.finished}}}}}};
  return Statement{{{record.repository(), record.manifest.digest}},
                   std::string(predicate_type::k_slsa_provenance),
                   std::move(predicate)};
}

Result<std::vector<std::string>> read_bundles(const Store& store, const Digest& image) {
  auto referrers = store.referrers(image);
  if (!referrers) return fail(referrers.error());
  std::vector<std::string> out;
  for (const auto& d : *referrers) {
    if (d.artifact_type != media_type::k_sigstore_bundle) continue;
    if (out.size() == k_max_bundles_judged) break;
    // A bundle that is not one (no single layer of a bundle's size, a blob missing) says nothing for
    // the image: passed over, so that it cannot stand in the way of the others.
    auto manifest = store.read_manifest(d);
    if (!manifest || manifest->layers.size() != 1 ||
        manifest->layers.front().size > static_cast<std::int64_t>(k_max_bundle))
      continue;
    auto bytes = store.read_blob(manifest->layers.front());
    if (!bytes) continue;
    out.push_back(std::move(*bytes));
  }
  return out;
}

Result<std::vector<Descriptor>> sign_record(Store& store, const Record& record, const Key& key,
                                            const ProvenanceFacts& facts,
                                            const std::vector<StatementSubject>& new_sboms) {
  auto held = read_bundles(store, record.manifest.digest);
  if (!held) return fail(held.error());
  auto sboms = sbom_subjects(store, record);
  if (!sboms) return fail(sboms.error());
  // A document made with the record stands in place of the store's of the same name (one cut short).
  std::erase_if(*sboms, [&](const StatementSubject& s) {
    return std::ranges::any_of(new_sboms, [&](const StatementSubject& n) { return n.name == s.name; });
  });
  sboms->insert(sboms->end(), new_sboms.begin(), new_sboms.end());
  std::ranges::sort(*sboms, {}, &StatementSubject::name);
  auto statement = signature_statement(record, *sboms);
  if (!statement) return fail(statement.error());
  // Signing twice adds nothing: this key's signature of this record is there already.
  for (const auto& bytes : *held) {
    auto b = parse_bundle(bytes, "bundle");
    if (b && b->hint == key.fingerprint() && b->statement.predicate_type == predicate_type::k_sign &&
        b->statement.subjects.size() == statement->subjects.size() &&
        std::ranges::all_of(statement->subjects,
                            [&](const StatementSubject& s) { return b->statement.names(s.digest); }))
      return std::vector<Descriptor>{};
  }
  std::vector<Descriptor> out;
  for (const auto& s : {*statement, provenance_statement(record, facts)}) {
    auto bundle = make_bundle(s, key);
    if (!bundle) return fail(bundle.error());
    auto referrer = put_referrer(store, record.manifest, media_type::k_sigstore_bundle, *bundle,
                                 {{"dev.sigstore.bundle.predicateType", s.predicate_type}});
    if (!referrer) return fail(referrer.error());
    out.push_back(std::move(*referrer));
  }
  return out;
}

namespace {

// The purls of the Debian packages the store's SBOM of `image` lists (its SPDX document, else its
// CycloneDX one).
Result<std::vector<std::string>> sbom_packages(const Store& store, const Digest& image) {
  std::vector<std::string> out;
  for (const auto format : {SbomFormat::spdx, SbomFormat::cyclonedx}) {
    auto sbom = read_sbom(store, image, format);
    if (!sbom) return fail(sbom.error());
    if (!*sbom) continue;
    auto json = parse_json(**sbom, "the SBOM of " + image.str());
    if (!json) return fail(json.error());
    const auto keep = [&](const std::string& purl) {
      if (purl.starts_with("pkg:deb/")) out.push_back(purl);
    };
    for (const auto& package : json->value("packages", nlohmann::json::array())) {
      for (const auto& ref : package.value("externalRefs", nlohmann::json::array())) {
        if (ref.value("referenceType", "") == "purl") keep(ref.value("referenceLocator", ""));
      }
    }
    for (const auto& component : json->value("components", nlohmann::json::array())) {
      if (component.is_object()) keep(component.value("purl", ""));
    }
    return out;
  }
  return out;
}

}  // namespace

Result<bool> sign_recorded(Store& store, const Record& record, const Key& key, ProvenanceFacts facts) {
  if (facts.packages.empty()) {
    auto packages = sbom_packages(store, record.manifest.digest);
    if (!packages) return fail(packages.error());
    facts.packages = std::move(*packages);
  }
  auto referrers = sign_record(store, record, key, facts);
  if (!referrers) return fail(referrers.error());
  if (referrers->empty()) return false;
  auto listed = store.with_writer([&](StoreWriter& writer) -> Status {
    for (const auto& r : *referrers) {
      auto kept = writer.keep(r);
      if (!kept) return fail(kept.error());
    }
    return {};
  });
  if (!listed) return fail(listed.error());
  return true;
}

Status signable(const Store& store, const Record& record, SignMadeElsewhere elsewhere) {
  const std::string what = "signing " + record.identity();
  auto text = record_document(record);
  if (!text) return fail(std::move(text.error()).context(what));
  if (auto read = parse_record_document(*text, "the record"); !read) return fail(std::move(read.error()).context(what));
  if (elsewhere == SignMadeElsewhere::no && !store.built_here(record.manifest.digest)) {
    return fail(Error::trust(what + ": this store did not record it (it was pulled or imported), and a signature "
                                    "would vouch for a build made elsewhere; arec sign --pulled signs it on purpose, "
                                    "its provenance naming both builder and signer"));
  }
  if (!store.holds_image(record.manifest))
    return fail_input(what + ": the store does not hold its image whole (pull it with its layers first)");
  if (auto files = store.check_image_files(record.manifest); !files)
    return fail(std::move(files.error()).context(what));
  return {};
}

Result<bool> sign_checked(Store& store, const Record& record, const Key& key, ProvenanceFacts facts,
                          SignMadeElsewhere elsewhere) {
  if (auto s = signable(store, record, elsewhere); !s) return fail(s.error());
  if (!store.built_here(record.manifest.digest)) {
    // Made elsewhere, signed here on request: the builder is who its own provenance names.
    auto claimed = judge_record(store, record, TrustPolicy());
    if (!claimed) return fail(claimed.error());
    facts.signed_by = facts.builder_id;
    facts.builder_id = claimed->builder.empty() ? "urn:arec:builder:unknown" : claimed->builder;
  }
  return sign_recorded(store, record, key, std::move(facts));
}

Result<SignatureVerdict> judge_record(const Store& store, const Record& record, const TrustPolicy& policy) {
  auto bundles = read_bundles(store, record.manifest.digest);
  if (!bundles) return fail(bundles.error());
  return judge_signatures(*bundles, record.manifest.digest, record.repository(), &record, policy);
}

Status admit_records(const Store& store, const std::vector<Record>& records, const TrustPolicy& policy,
                     const std::string& doing) {
  if (!policy.checks()) return {};
  for (const auto& record : records) {
    auto verdict = judge_record(store, record, policy);
    if (!verdict) return fail(verdict.error());
    if (verdict->state != SignatureState::trusted)
      return fail(Error::trust(doing + ": the record " + record.identity() + " is " + refusal(*verdict) +
                               "; nothing sent (sign what this store built: arec sign)"));
  }
  return {};
}

Result<SignatureVerdict> judge_image(const Store& store, const Store::LatestImage& image, const TrustPolicy& policy) {
  std::optional<SignatureVerdict> first;
  for (const auto& record : image.platforms) {
    auto verdict = judge_record(store, record, policy);
    if (!verdict) return fail(verdict.error());
    if (policy.checks() && verdict->state != SignatureState::trusted) return verdict;
    if (!first) first = std::move(*verdict);
  }
  return first.value_or(SignatureVerdict{});
}

}  // namespace arec
