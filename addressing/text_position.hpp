// Positions in a text as people read them, for messages that point at a line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "oci/oci.hpp"

namespace arec {

// "line L, column C" (both 1-based) of a JSON syntax error at nlohmann's parse_error::byte, which counts
// the byte it stopped at from 1.
std::string line_and_column(std::string_view text, std::size_t byte);

// Why `text` could not be read as JSON: "malformed JSON at line L, column C", or what else was wrong.
std::string json_problem(std::string_view text, const JsonProblem& problem);

}  // namespace arec
