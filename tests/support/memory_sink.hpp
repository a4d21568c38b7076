// A ByteSink that keeps what it is given, for inspecting streams in tests.
#pragma once

#include <string>

#include "recorder/compress.hpp"

namespace arec::test {

class MemorySink final : public ByteSink {
 public:
  Status write(std::span<const std::byte> data) override {
    bytes.append(reinterpret_cast<const char*>(data.data()), data.size());
    return {};
  }
  Status finish() override {
    finished = true;
    return {};
  }
  std::string bytes;
  bool finished = false;
};

}  // namespace arec::test
