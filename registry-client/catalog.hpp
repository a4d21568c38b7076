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
struct RecordTags {
  std::vector<std::string> references;
  std::vector<std::string> orphaned;
};
Result<RecordTags> record_tags(const RegistryAddress& address, const TransferOptions& options);

}  // namespace arec
