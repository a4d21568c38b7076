// What a registry lists: its repositories and their tags, and the tags of records among them.
#pragma once

#include <string>
#include <vector>

#include "registry-client/registry.hpp"
#include "registry-client/transfer.hpp"

namespace arec {

struct CatalogEntry {
  std::string repository;
  std::vector<std::string> tags;
};

// Every repository the registry lists (/v2/_catalog) with its tags, following pagination.
Result<std::vector<CatalogEntry>> read_catalog(const RegistryAddress& address, const TransferOptions& options);

// The repositories of the registry that may hold records (<module>/<name>, rule 2) and the tags a push
// of records puts on them (`latest`, `latest-<config>`), as "repository:tag"; and the referrers tags
// (sha256-<hex>) whose image the registry no longer holds, as "repository@sha256:<hex>".
// Also the images those repositories hold referrers tags for, as "repository@sha256:<hex>": older records
// of the history that no tag names (a registry with the referrers API keeps no such tag, so there only
// what the latest tags name is found).
struct RecordTags {
  std::vector<std::string> references;
  std::vector<std::string> images;
  std::vector<std::string> orphaned;
};
Result<RecordTags> record_tags(const RegistryAddress& address, const TransferOptions& options);

}  // namespace arec
