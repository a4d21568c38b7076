#include "registry-client/catalog.hpp"

#include "registry-client/transfer_internal.hpp"

namespace arec {

Result<std::vector<CatalogEntry>> read_catalog(const RegistryAddress& address, const TransferOptions& options) {
  Run run(address, Access::pull, options);
  if (auto s = run.ping("reading the catalog of " + run.host()); !s) return fail(s.error());
  auto repositories = run.step("reading the catalog of " + run.host() + " (GET /v2/_catalog)", {},
                               [&] { return run.session.catalog(); });
  if (!repositories) return fail(repositories.error());
  std::vector<CatalogEntry> out;
  for (const auto& repository : *repositories) {
    // distribution 2.8 answers 404 NAME_UNKNOWN for a repository that holds manifests by digest only.
    auto tags = run.step("listing the tags of " + repository + " at " + run.host(), {},
                         [&]() -> RegistryResult<std::vector<std::string>> {
                           auto listed = run.session.tags(repository);
                           if (!listed && listed.error().status == 404 && listed.error().code == "NAME_UNKNOWN")
                             return std::vector<std::string>();
                           return listed;
                         });
    if (!tags) return fail(tags.error());
    out.push_back({repository, std::move(*tags)});
  }
  return out;
}

Result<RecordTags> record_tags(const RegistryAddress& address, const TransferOptions& options) {
  auto catalog = read_catalog(address, options);
  if (!catalog) return fail(catalog.error());
  Run run(address, Access::pull, options);
  if (auto s = run.ping("reading the records of " + run.host()); !s) return fail(s.error());
  RecordTags out;
  for (const auto& entry : *catalog) {
    const auto slash = entry.repository.find('/');
    if (slash == std::string::npos || entry.repository.find('/', slash + 1) != std::string::npos) continue;
    for (const auto& tag : entry.tags) {
      if (tag == "latest" || tag.starts_with("latest-")) out.references.push_back(entry.repository + ":" + tag);
      if (!tag.starts_with("sha256-") || tag.size() != 7 + 64) continue;
      const std::string subject = "sha256:" + tag.substr(7);
      auto found = run.step("looking for " + entry.repository + "@" + subject + " at " + run.host(), {},
                            [&] { return run.session.head_manifest(entry.repository, subject); });
      if (!found) return fail(found.error());
      (found->has_value() ? out.images : out.orphaned).push_back(entry.repository + "@" + subject);
    }
  }
  return out;
}

}  // namespace arec
