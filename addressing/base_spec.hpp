// What `arec record --base` names, read from its text alone: a local OCI layout, a record of the store
// or an image of a registry. Pure: nothing is opened or fetched here; the command opens a layout,
// pulls a registry's image into the store, and gives the recorder what it then holds.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "addressing/reference.hpp"
#include "oci/digest.hpp"
#include "util/error.hpp"

namespace arec {

// `oci:DIR[:REF]` (skopeo's syntax): the image named REF in the layout DIR, or its only one.
struct LayoutBase {
  std::string dir;
  std::string ref;  // empty: the layout's only image
};

// `MODULE/NAME` (no domain, tag or digest): the latest record of that name in the store, no network.
struct RecordBase {
  std::string module;
  std::string name;
};

// Any other reference, optionally written `docker://REF`: an image of a registry (the node settings'
// when it names no domain), pulled into the store; with a digest, the store's copy when it is whole.
struct RegistryBase {
  Reference reference;
  std::optional<Digest> digest;  // the reference's, when it names one
};

struct BaseSpec {
  std::string text;  // as written
  std::variant<LayoutBase, RecordBase, RegistryBase> kind;

  // `base "TEXT"`, how messages name it.
  std::string what() const;
};

// Reads a --base. Other transports of skopeo's syntax (docker-archive:, containers-storage:, ...) are
// refused, as is anything that is no layout and no reference.
Result<BaseSpec> parse_base(std::string_view text);

}  // namespace arec
