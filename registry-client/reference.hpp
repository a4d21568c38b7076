// Image references per the distribution grammar (distribution/reference): a pure value type, no I/O.
//
//   reference := name [":" tag] ["@" digest]     name := [domain "/"] path
//   domain    := host [":" port]                 host := domain-name | IPv4 | "[" IPv6 "]"
//
// The first component is a domain only if it has a '.' or ':', is "localhost", or has an uppercase
// letter. A ':' is a tag only when no '/' follows it, so "host:5000/x" has a port and no tag.
// No default registry is invented: a name without a domain has an empty domain.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "recorder/error.hpp"

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

inline constexpr std::size_t k_max_path_length = 255;
inline constexpr std::size_t k_max_tag_length = 128;

// True for a tag: [\w][\w.-]{0,127}
bool is_tag(std::string_view text);

}  // namespace arec
