// A request to record a directory as it is: no runtime closure, no SBOM, a fixed revision, so that
// tests of what reads images get a small real image in a real store.
#pragma once

#include <filesystem>
#include <string>

#include "recorder/image.hpp"

namespace arec::test {

// Records the files of `source` under /srv as module/name.
inline RecordRequest plain_request(const std::filesystem::path& source, std::string module, std::string name) {
  RecordRequest r;
  r.module = std::move(module);
  r.name = std::move(name);
  r.runtime = Runtime::none;
  r.sboms.clear();
  r.revision = "0123456789abcdef0123456789abcdef01234567";
  r.entries = *collect_entries({*parse_layer_input(LayerInput::Kind::directory, source.string() + "=/srv")});
  return r;
}

}  // namespace arec::test
