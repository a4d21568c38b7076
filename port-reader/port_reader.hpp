// The reader of port values (rule 6): what a consumer makes of a port that a declaration handed it.
//
//   "6852"              the port
//   ""                  nothing said: the value sealed at genesis stands (rule 5)
//   "arec://port/store" nothing said either, loudly: a request nobody filled (an arec older than the
//                       declaration); the sealed value stands and the caller warns, naming the request
//   anything else       an error, "not a port"
//
// The reader does not log: it says what it read and lets the caller warn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace arec {

struct PortReading {
  enum class Said {
    port,              // the value was a port
    empty,             // the value was empty: nothing said
    unfilled_request,  // the value was a literal arec:// request: nothing said, and worth a warning
  };

  Said said = Said::empty;
  std::optional<std::uint16_t> port;  // the value's port, else the sealed one; empty when neither exists
  std::string request;                // the literal request, when said == unfilled_request

  bool nothing_said() const { return said != Said::port; }
};

// Reads `value` (surrounding blanks ignored). Only a value that is neither a port, empty nor an
// arec:// request is an error.
Result<PortReading> read_port(std::string_view value, std::optional<std::uint16_t> sealed);

}  // namespace arec
