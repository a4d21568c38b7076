// Image references per the distribution grammar (distribution/reference): a pure value type, no I/O.
//
//   reference := name [":" tag] ["@" digest]     name := [domain "/"] path
//   domain    := host [":" port]                 host := domain-name | IPv4 | "[" IPv6 "]"
//
// The first component is a domain only if it has a '.' or ':' or is "localhost" (so "Mesh/cp" is a
// path, refused for its upper case, as docker refuses it). A ':' is a tag only when no '/' follows it,
// so "host:5000/x" has a port and no tag. A name (domain and path) is at most 255 characters.
// No default registry is invented: a name without a domain has an empty domain.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace arec {

struct Reference {
  std::string domain;  // "10.0.0.5:5000", "[::1]:5000", "localhost", or empty
  std::string path;    // "mesh/controlplane"
  std::string tag;     // empty when absent
  std::string digest;  // "sha256:...", empty when absent

  static Result<Reference> parse(std::string_view text);

  // Number of path components: 1 for a genesis-pinned "controlplane", 2 for "mesh/controlplane".
  std::size_t segments() const;
  // The domain's host without port ("[::1]" keeps its brackets) and its port (empty when absent).
  std::string host() const;
  std::string port() const;
  // domain/path
  std::string name() const;
  // The canonical form: domain/path[:tag][@digest].
  std::string str() const;
};

inline constexpr std::size_t k_max_name_length = 255;  // domain "/" path
inline constexpr std::size_t k_max_path_length = k_max_name_length;
inline constexpr std::size_t k_max_tag_length = 128;

// True for a tag: [\w][\w.-]{0,127}
bool is_tag(std::string_view text);
// True for a repository path: components [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)* joined by '/', at most
// k_max_path_length characters ("mesh/controlplane"; not "../etc", "Mesh/cp" or "a//b").
bool is_repository_path(std::string_view text);
// What is_repository_path and is_tag accept, in words, for the messages that refuse a name or a tag.
inline constexpr std::string_view k_repository_path_grammar =
    "components of lowercase letters and digits separated by '.', '_', '__' or '-', joined by '/'";
inline constexpr std::string_view k_tag_grammar = "up to 128 of [A-Za-z0-9_.-], not starting with '.' or '-'";

// A full reference (one with a domain) written in a text.
struct ReferenceInText {
  Reference reference;
  std::size_t offset = 0;  // byte offset of its first character
  std::size_t length = 0;  // bytes it spans
  std::size_t line = 1;    // 1-based
  std::size_t column = 1;  // 1-based, in bytes from the start of the line
};

// Every full reference written in `text`, in order, wherever it stands: a YAML or JSON value, an
// argument (`--image=REF`), a Dockerfile `FROM REF AS build`, an `.env` line, prose. A reference is a
// word of [A-Za-z0-9._-/:@[]] that Reference::parse takes whole, once a sentence's trailing '.' or ':'
// and brackets that are not an IPv6 address's are set aside; `docker://REF` counts, other URLs do not.
// Pure: no I/O, any input.
std::vector<ReferenceInText> scan_references(std::string_view text);

}  // namespace arec
