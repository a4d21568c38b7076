#include "addressing/reference.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "oci/digest.hpp"
#include "oci/record.hpp"
#include "util/ascii.hpp"

namespace arec {

namespace {

using ascii::is_alnum;
using ascii::is_digit;
using ascii::is_hex;
using ascii::is_word;
using ascii::lower;

// domain-component := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
bool is_domain_component(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '-'; });
}

Error invalid(std::string_view text, const std::string& problem) {
  return Error::input("reference \"" + std::string(text) + "\": " + problem);
}

Status check_domain(std::string_view text, std::string_view domain) {
  std::string_view host = domain;
  std::string_view port;
  if (domain.front() == '[') {
    const auto close = domain.find(']');
    if (close == std::string_view::npos)
      return fail(invalid(text, "domain \"" + std::string(domain) + "\": unclosed '['"));
    const auto inside = domain.substr(1, close - 1);
    if (inside.empty() || !std::all_of(inside.begin(), inside.end(), [](char c) { return is_hex(c) || c == ':'; })) {
      return fail(invalid(text, "domain \"" + std::string(domain) + "\": not an IPv6 address"));
    }
    host = domain.substr(0, close + 1);
    const auto after = domain.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail(invalid(text, "domain \"" + std::string(domain) + "\": junk after ']'"));
      port = after.substr(1);
      if (port.empty()) return fail(invalid(text, "domain \"" + std::string(domain) + "\": empty port"));
    }
  } else {
    const auto colon = domain.find(':');
    if (colon != std::string_view::npos) {
      host = domain.substr(0, colon);
      port = domain.substr(colon + 1);
      if (port.empty()) return fail(invalid(text, "domain \"" + std::string(domain) + "\": empty port"));
    }
    std::size_t pos = 0;
    while (pos <= host.size()) {
      const auto end = std::min(host.find('.', pos), host.size());
      const auto component = host.substr(pos, end - pos);
      if (!is_domain_component(component)) {
        return fail(invalid(text, "domain \"" + std::string(domain) + "\": \"" + std::string(component) +
                                      "\" is not a host name component"));
      }
      pos = end + 1;
    }
  }
  if (!port.empty() && !std::all_of(port.begin(), port.end(), is_digit)) {
    return fail(
        invalid(text, "domain \"" + std::string(domain) + "\": port \"" + std::string(port) + "\" is not a number"));
  }
  return {};
}

Status check_path(std::string_view text, std::string_view path) {
  if (path.empty()) return fail(invalid(text, "repository path is empty"));
  std::size_t pos = 0;
  while (pos <= path.size()) {
    const auto end = std::min(path.find('/', pos), path.size());
    const auto component = path.substr(pos, end - pos);
    if (component.empty())
      return fail(invalid(text, "repository path \"" + std::string(path) + "\" has an empty component"));
    if (!is_path_component(component)) {
      if (is_path_component(lower(component))) {
        return fail(invalid(text, "repository path component \"" + std::string(component) + "\" must be lowercase"));
      }
      return fail(invalid(text, "repository path component \"" + std::string(component) +
                                    "\" is invalid (lowercase letters and digits separated by '.', '_', '__' or '-')"));
    }
    pos = end + 1;
  }
  return {};
}

Status check_tag(std::string_view text, std::string_view tag) {
  if (!is_tag(tag)) {
    return fail(invalid(text, "tag \"" + std::string(tag) + "\" is invalid (" + std::string(k_tag_grammar) + ")"));
  }
  return {};
}

Status check_digest(std::string_view text, std::string_view digest) {
  auto parsed = Digest::parse(digest);
  if (!parsed) return fail(invalid(text, parsed.error().message));
  return {};
}

}  // namespace

// tag := [\w][\w.-]{0,127}
bool is_tag(std::string_view text) {
  return !text.empty() && text.size() <= k_max_tag_length && is_word(text.front()) &&
         std::all_of(text.begin(), text.end(), [](char c) { return is_word(c) || c == '.' || c == '-'; });
}

bool is_repository_path(std::string_view text) {
  return text.size() <= k_max_path_length && check_path(text, text).has_value();
}

Result<Reference> Reference::parse(std::string_view text) {
  if (text.empty()) return fail(invalid(text, "is empty"));
  Reference ref;
  std::string_view rest = text;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    ref.digest = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    if (auto s = check_digest(text, ref.digest); !s) return fail(s.error());
  }
  if (const auto colon = rest.rfind(':'); colon != std::string_view::npos &&
                                          rest.find('/', colon) == std::string_view::npos &&
                                          rest.find(']', colon) == std::string_view::npos) {
    ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (auto s = check_tag(text, ref.tag); !s) return fail(s.error());
  }
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    const auto first = rest.substr(0, slash);
    // As docker reads it: upper case alone does not make a domain, so "Mesh/cp" is a path, and refused.
    const bool is_domain = first.find_first_of(".:[") != std::string_view::npos || first == "localhost";
    if (is_domain) {
      if (first.empty()) return fail(invalid(text, "domain is empty"));
      if (auto s = check_domain(text, first); !s) return fail(s.error());
      ref.domain = std::string(first);
      rest = rest.substr(slash + 1);
    }
  }
  if (auto s = check_path(text, rest); !s) return fail(s.error());
  ref.path = std::string(rest);
  // The limit is on the whole name, domain included (distribution's NameTotalLengthMax).
  if (const auto length = ref.name().size(); length > k_max_name_length) {
    return fail(invalid(text, "name is " + std::to_string(length) + " characters, more than " +
                                  std::to_string(k_max_name_length) + " (domain and path together)"));
  }
  return ref;
}

namespace {

// Longer words are no reference: a name is at most 255, a tag 128 and a digest 135 characters.
constexpr std::size_t k_max_reference_word = 600;
constexpr std::string_view k_docker_transport = "docker://";

bool is_word_char(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '/' || c == ':' || c == '@' || c == '[' || c == ']';
}

// The reference a word holds, as offsets into it; nothing when it holds none.
std::optional<std::pair<std::size_t, std::size_t>> reference_in_word(std::string_view word) {
  std::size_t begin = 0, end = word.size();
  if (const auto scheme = word.find("://"); scheme != std::string_view::npos) {
    if (!word.starts_with(k_docker_transport)) return std::nullopt;  // a URL, not an image
    begin = k_docker_transport.size();
  }
  // A sentence's end and a YAML key's colon are no part of a reference.
  while (end > begin && (word[end - 1] == '.' || word[end - 1] == ':' || word[end - 1] == '/' || word[end - 1] == '@'))
    --end;
  // Brackets of a list around the reference ("[--image=REF]" or "[REF]"), not of an IPv6 address.
  while (end > begin && word[end - 1] == ']' &&
         std::count(word.begin() + begin, word.begin() + end, ']') >
             std::count(word.begin() + begin, word.begin() + end, '[')) {
    --end;
  }
  while (begin < end && word[begin] == '[') {
    const auto close = word.find(']', begin);
    const auto inside = word.substr(begin + 1, close == std::string_view::npos ? 0 : close - begin - 1);
    const bool ipv6 = close != std::string_view::npos && close < end && !inside.empty() &&
                      std::all_of(inside.begin(), inside.end(), [](char c) { return is_hex(c) || c == ':'; });
    if (ipv6) break;
    ++begin;
  }
  if (begin >= end) return std::nullopt;
  return std::pair{begin, end};
}

}  // namespace

std::vector<ReferenceInText> scan_references(std::string_view text) {
  std::vector<ReferenceInText> out;
  std::size_t line = 1, line_start = 0, counted = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    if (!is_word_char(text[at])) {
      ++at;
      continue;
    }
    const std::size_t word_start = at;
    while (at < text.size() && is_word_char(text[at])) ++at;
    if (at - word_start > k_max_reference_word) continue;
    const auto found = reference_in_word(text.substr(word_start, at - word_start));
    if (!found) continue;
    const std::size_t offset = word_start + found->first, length = found->second - found->first;
    auto ref = Reference::parse(text.substr(offset, length));
    if (!ref || ref->domain.empty()) continue;
    for (; counted < offset; ++counted) {
      if (text[counted] == '\n') {
        ++line;
        line_start = counted + 1;
      }
    }
    out.push_back({std::move(*ref), offset, length, line, offset - line_start + 1});
  }
  return out;
}

std::size_t Reference::segments() const {
  return path.empty() ? 0 : static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')) + 1;
}

std::string Reference::host() const {
  if (domain.starts_with('[')) return domain.substr(0, domain.find(']') + 1);
  return domain.substr(0, domain.find(':'));
}

std::string Reference::port() const {
  const auto from = domain.starts_with('[') ? domain.find(']') : 0;
  const auto colon = domain.find(':', from);
  return colon == std::string::npos ? std::string() : domain.substr(colon + 1);
}

std::string Reference::name() const { return domain.empty() ? path : domain + "/" + path; }

std::string Reference::str() const {
  std::string out = name();
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

}  // namespace arec
