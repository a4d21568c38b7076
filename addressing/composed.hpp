// Composed outputs: telling a file compose wrote from a template from a file someone wrote, so that a
// registry move lists what compose filled in it as "compose again after the move" rather than as a
// reference that would break. Pure functions of texts: no I/O.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "addressing/compose.hpp"

namespace arec {

// A part of a composed output that compose wrote for a request of the template.
struct FilledSpan {
  std::size_t offset = 0;
  std::size_t length = 0;
  bool contains(std::size_t at, std::size_t size) const { return at >= offset && at + size <= offset + length; }
};

// Where compose filled `output` from `template_text`, when `output` is exactly what compose writes from
// it with some values for its requests: the text between the requests unchanged (`format` text), or the
// template as compose writes JSON (re-serialised, indented by two, a string that is exactly a port
// request a number or ""), each request's value on one line. Nothing when it is not (an output edited
// since it was composed, or composed from another template): then what it holds is what someone wrote.
std::optional<std::vector<FilledSpan>> filled_spans(std::string_view template_text, std::string_view output,
                                                    TemplateFormat format);

// The file `depfile` (the text of a Makefile rule, as `arec compose --depfile` writes it: "OUT: TEMPLATE
// [NODES] [STORE/index.json]") names as composed, and the template it names first; nothing when it is
// not such a rule.
struct ComposedFrom {
  std::string output;
  std::string template_path;
};
std::optional<ComposedFrom> read_compose_depfile(std::string_view depfile);

}  // namespace arec
