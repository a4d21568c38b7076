// Running a helper program (git, a docker credential helper) with posix_spawn: a small input on its
// standard input, its standard output read back, its standard error discarded, its time bounded.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace arec {

struct ProcessOutput {
  int exit_code = -1;  // -1 when it was killed by a signal or for taking too long
  std::string out;     // standard output, up to the limit asked for
};

// Where a helper's standard error goes: nowhere (a credential helper's may hold a secret), or into
// `out` with its standard output (a build tool's messages, shown when it fails).
enum class StandardError { discarded, with_output };

struct ProcessOptions {
  std::vector<std::string> environment;  // "NAME=VALUE" set for the program, beside arec's own environment
  StandardError standard_error = StandardError::discarded;
};

// Runs argv[0] found on PATH. Fails only when it cannot be started at all; `what` names it in errors.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv, std::string_view input,
                                  std::chrono::milliseconds timeout, std::size_t max_output,
                                  const ProcessOptions& options = {});

}  // namespace arec
