#include "addressing/text_position.hpp"

namespace arec {

std::string line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string json_problem(std::string_view text, const JsonProblem& problem) {
  return problem.byte ? problem.message + " at " + line_and_column(text, *problem.byte) : problem.message;
}

}  // namespace arec
