#include "addressing/composed.hpp"

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"

namespace arec {

namespace {

// A piece of the text compose writes: literal text, or a request's value (`exact_port`: a JSON string
// that is exactly a port request, whose value is a number or "", quotes included).
struct Piece {
  std::string_view literal;
  bool request = false;
};

// The template cut into its literal text and its requests, in order: literal, request, literal, ...,
// literal (always one more literal than requests).
std::vector<Piece> pieces_of(std::string_view text, bool quoted_ports) {
  std::vector<Piece> out;
  std::size_t at = 0;
  for (const auto& r : scan_requests(text)) {
    std::size_t start = r.offset;
    std::size_t end = r.offset + r.length;
    // In JSON, "arec://port/S" alone becomes 5432 or "": the quotes go with the value.
    if (quoted_ports && r.kind == Request::Kind::port && start > at && text[start - 1] == '"' && end < text.size() &&
        text[end] == '"') {
      --start;
      ++end;
    }
    if (start < at) continue;  // within the one before (never, for requests the scanner consumed whole)
    out.push_back({text.substr(at, start - at), false});
    out.push_back({{}, true});
    at = end;
  }
  out.push_back({text.substr(at), false});
  return out;
}

// Matches `output` against the pieces: each literal where it is, each request's value between them on
// one line (compose writes no newline into a value). The earliest place of each literal leaves every
// value as short as it can be; a literal that must then be the end of the output, is.
std::optional<std::vector<FilledSpan>> match(const std::vector<Piece>& pieces, std::string_view output) {
  std::vector<FilledSpan> spans;
  if (!output.starts_with(pieces.front().literal)) return std::nullopt;
  std::size_t at = pieces.front().literal.size();
  for (std::size_t i = 1; i + 1 < pieces.size(); i += 2) {
    const std::string_view next = pieces[i + 1].literal;
    const bool last = i + 2 == pieces.size();
    std::size_t found = 0;
    if (last) {
      if (output.size() < at + next.size() || !output.ends_with(next)) return std::nullopt;
      found = output.size() - next.size();
    } else if (next.empty()) {
      found = at;  // two requests side by side: the first value is taken as empty, the second holds both
    } else {
      found = output.find(next, at);
      if (found == std::string_view::npos) return std::nullopt;
    }
    const std::string_view value = output.substr(at, found - at);
    if (value.find('\n') != std::string_view::npos) return std::nullopt;
    if (!spans.empty() && spans.back().offset + spans.back().length == at) {
      spans.back().length += value.size();
    } else {
      spans.push_back({at, value.size()});
    }
    at = found + next.size();
  }
  if (pieces.size() == 1 && at != output.size()) return std::nullopt;
  return spans;
}

}  // namespace

std::optional<std::vector<FilledSpan>> filled_spans(std::string_view template_text, std::string_view output,
                                                    TemplateFormat format) {
  if (format == TemplateFormat::text) return match(pieces_of(template_text, false), output);
  // As compose writes JSON: the template parsed and written again, indented by two, then a newline.
  auto doc = read_json<nlohmann::ordered_json>(template_text);
  if (!doc) return std::nullopt;
  std::string written;
  try {
    written = doc->dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::strict) + "\n";
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return match(pieces_of(written, true), output);
}

std::optional<ComposedFrom> read_compose_depfile(std::string_view depfile) {
  // Words apart at unescaped spaces, with make's escapes undone: "\ ", "\#", "\\" and "$$".
  std::vector<std::string> words(1);
  std::size_t i = 0;
  for (; i < depfile.size() && depfile[i] != '\n'; ++i) {
    const char c = depfile[i];
    if (c == '\\' && i + 1 < depfile.size() &&
        (depfile[i + 1] == ' ' || depfile[i + 1] == '#' || depfile[i + 1] == '\\')) {
      words.back().push_back(depfile[++i]);
    } else if (c == '$' && i + 1 < depfile.size() && depfile[i + 1] == '$') {
      words.back().push_back(depfile[++i]);
    } else if (c == ' ') {
      if (!words.back().empty()) words.emplace_back();
    } else {
      words.back().push_back(c);
    }
  }
  // One rule: compose writes nothing after its line.
  if (depfile.substr(std::min(i + 1, depfile.size())).find_first_not_of(" \t\r\n") != std::string_view::npos)
    return std::nullopt;
  if (!words.empty() && words.back().empty()) words.pop_back();
  if (words.size() < 2 || words.front().size() < 2 || !words.front().ends_with(':') ||
      !words.front().starts_with('/') || !words[1].starts_with('/'))
    return std::nullopt;
  words.front().pop_back();
  return ComposedFrom{std::move(words.front()), std::move(words[1])};
}

}  // namespace arec
