// The file view of an image's layers, read from their tar streams (gzip, zstd or plain) and never
// unpacked to disk: what a base image holds at a path, after whiteouts and symlinks.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.hpp"
#include "util/paths.hpp"

namespace arec {

class ImageFiles {
 public:
  enum class Type { file, directory, symlink };
  struct Node {
    Type type = Type::file;
    std::string link_target;  // symlinks
    std::size_t layer = 0;    // files: the layer whose tar holds the bytes
    std::string data_path;    // files: the tar entry holding the bytes (a hard link's target, else itself)
  };

  // Reads the layers in order, applying each layer's whiteouts (".wh.NAME", ".wh..wh..opq") to those below.
  static Result<ImageFiles> read(const Layout& layout, std::vector<Descriptor> layers, std::string what);

  // The node at `path` ("/usr/lib" or "usr/lib") without following a final symlink, or nullptr.
  const Node* lstat(std::string_view path) const;
  // `path` with every symlink followed inside the view (an absolute target starts at the image root, and
  // ".." stops there, as in a chroot), as a path without leading slash; nothing when it does not exist
  // or the links loop.
  std::optional<std::string> resolve(std::string_view path) const;
  // The bytes of the regular file at the resolved path `path`.
  Result<std::string> read_file(const std::string& path) const;

 private:
  ImageFiles(const Layout& layout, std::vector<Descriptor> layers, std::string what)
      : m_layout(&layout), m_layers(std::move(layers)), m_what(std::move(what)) {}

  const Layout* m_layout;
  std::vector<Descriptor> m_layers;
  std::string m_what;
  std::map<std::string, Node, std::less<>> m_nodes;
};

// What a path walk finds at one prefix of the path ("usr", "usr/lib", …): the target of a symlink to
// follow there, nothing to go on past, or an error that ends the walk.
using LinkAt = std::function<Result<std::optional<std::string>>(const std::string& prefix)>;

// Resolves `path` as the kernel does inside a root: component by component, ".." stopping at the root,
// each symlink that `link_at` reports replaced by its target (from the root when absolute), at most 40
// of them (ELOOP). The result has no leading slash. Used for a base image's view and for this machine.
Result<std::string> resolve_symlinks(std::string_view path, const LinkAt& link_at);

}  // namespace arec
