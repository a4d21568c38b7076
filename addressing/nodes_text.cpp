#include "addressing/nodes_text.hpp"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"

namespace arec {

namespace {

// Where things are in a JSON text, so that a move edits the values it changes and keeps every other
// byte of the file (its layout, its order, its numbers as written). The text has parsed as JSON already.
class JsonText {
 public:
  explicit JsonText(std::string_view text) : m_text(text) {}

  // The span [begin, end) of the value at `path` (object keys from the top), if there is one.
  std::optional<std::pair<std::size_t, std::size_t>> find(std::initializer_list<std::string_view> path) const {
    std::size_t at = skip_space(0);
    for (const auto key : path) {
      auto member = find_member(at, key);
      if (!member) return std::nullopt;
      at = *member;
    }
    return std::pair{at, skip_value(at)};
  }

  // The text with a member `"key": value` added at the end of the object that starts at `object`, laid
  // out as the members before it are: on a line of its own with their indentation, or inline.
  std::string with_member(std::size_t object, std::string_view key, std::string_view value) const {
    const std::size_t end = skip_value(object) - 1;  // the closing brace
    std::size_t last = end;                          // just past the last member's value
    while (last > object + 1 && is_space(m_text[last - 1])) --last;
    const std::string member = "\"" + std::string(key) + "\": " + std::string(value);
    std::string out(m_text.substr(0, last));
    if (last == object + 1) {  // an empty object
      out += member;
    } else {
      // The indentation of the line the last member starts on, when members are one a line.
      std::size_t line = m_text.rfind('\n', last - 1);
      const std::size_t first_newline = m_text.find('\n', object);
      if (line != std::string_view::npos && line > object && first_newline < end) {
        std::size_t indent = line + 1;
        while (indent < m_text.size() && (m_text[indent] == ' ' || m_text[indent] == '\t')) ++indent;
        out += ",\n" + std::string(m_text.substr(line + 1, indent - line - 1)) + member;
      } else {
        out += ", " + member;
      }
    }
    out += m_text.substr(last);
    return out;
  }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  std::size_t skip_space(std::size_t at) const {
    while (at < m_text.size() && is_space(m_text[at])) ++at;
    return at;
  }
  std::size_t skip_string(std::size_t at) const {  // at the opening quote; returns past the closing one
    for (++at; at < m_text.size() && m_text[at] != '"'; ++at) {
      if (m_text[at] == '\\') ++at;
    }
    return std::min(at + 1, m_text.size());
  }
  std::size_t skip_value(std::size_t at) const {  // iterative: nesting costs no stack
    std::size_t depth = 0;
    do {
      at = skip_space(at);
      if (at >= m_text.size()) return at;
      const char c = m_text[at];
      if (c == '"') {
        at = skip_string(at);
      } else if (c == '{' || c == '[') {
        ++depth;
        ++at;
      } else if (c == '}' || c == ']') {
        if (depth > 0) --depth;
        ++at;
      } else if (c == ',' || c == ':') {
        ++at;
      } else {
        while (at < m_text.size() && !is_space(m_text[at]) && m_text[at] != ',' && m_text[at] != '}' &&
               m_text[at] != ']')
          ++at;
      }
    } while (depth > 0);
    return at;
  }
  // The start of the value of `key` in the object at `object`.
  std::optional<std::size_t> find_member(std::size_t object, std::string_view key) const {
    if (object >= m_text.size() || m_text[object] != '{') return std::nullopt;
    std::size_t at = skip_space(object + 1);
    while (at < m_text.size() && m_text[at] == '"') {
      const std::size_t key_end = skip_string(at);
      const auto name = read_json<nlohmann::json>(m_text.substr(at, key_end - at));
      at = skip_space(skip_space(key_end) + 1);  // past the colon
      if (name && name->is_string() && name->get_ref<const std::string&>() == key) return at;
      at = skip_space(skip_value(at));
      if (at < m_text.size() && m_text[at] == ',') at = skip_space(at + 1);
    }
    return std::nullopt;
  }

  std::string_view m_text;
};

}  // namespace

std::optional<std::string> with_registry_moved(std::string_view text, const std::string& node, std::uint16_t port) {
  std::string out(text);
  const auto replace = [&out](std::initializer_list<std::string_view> path, std::string_view value) {
    const auto span = JsonText(out).find(path);
    if (!span) return false;
    out.replace(span->first, span->second - span->first, value);
    return true;
  };
  if (!replace({"services", "registry"}, nlohmann::json(node).dump())) {
    const auto services = JsonText(out).find({"services"});
    if (!services) return std::nullopt;
    out = JsonText(out).with_member(services->first, "registry", nlohmann::json(node).dump());
  }
  const std::string port_text = std::to_string(port);
  if (replace({"nodes", node, "ports", "registry"}, port_text)) return out;
  if (const auto ports = JsonText(out).find({"nodes", node, "ports"})) {
    return JsonText(out).with_member(ports->first, "registry", port_text);
  }
  if (const auto entry = JsonText(out).find({"nodes", node})) {
    return JsonText(out).with_member(entry->first, "ports", "{\"registry\": " + port_text + "}");
  }
  return std::nullopt;
}

}  // namespace arec
