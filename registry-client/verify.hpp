// Verify: each record present at the registry with its exact digest, and its referrers listed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "registry-client/registry.hpp"
#include "registry-client/transfer.hpp"
#include "store/store.hpp"

namespace arec {

// unsigned and untrusted only under a trust policy that checks (TransferOptions::trust): the record is
// there, but a trusting pull of it would refuse it, as no bundle there signed by a trusted key vouches
// for it (untrusted: `found` says why not).
enum class VerifyState { present, missing, different, unsigned_, untrusted };
std::string_view verify_state_name(VerifyState state);

struct VerifyItem {
  Record record;
  VerifyState state = VerifyState::present;
  std::string found;  // what the registry holds under the digest when it is different; why it is untrusted
  std::vector<std::string> missing_referrers;  // referrers the store keeps that the registry does not list
  std::string missing_record;                  // the record artifact of a record whose image is there, when not listed
};

// Asks the registry for each record's manifest by digest in its repository; with a store, also that
// the registry lists every referrer the store keeps for it and the record's own artifact (missing
// otherwise).
Result<std::vector<VerifyItem>> verify_records(const std::vector<Record>& records, const RegistryAddress& address,
                                               const TransferOptions& options, const Store* store = nullptr);

}  // namespace arec
