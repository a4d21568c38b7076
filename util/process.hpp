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

// Runs argv[0] found on PATH. Fails only when it cannot be started at all; `what` names it in errors.
Result<ProcessOutput> run_process(const std::vector<std::string>& argv, std::string_view input,
                                  std::chrono::milliseconds timeout, std::size_t max_output);

}  // namespace arec
