#include "recorder/image_files.hpp"

#include <memory>

#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace {

Result<tar::Reader> open_layer(const Layout& layout, const Descriptor& layer, const std::string& what) {
  return tar::open_reader(layout.blob_path(layer.digest), std::size_t{1} << 16, what + ": layer " + layer.digest.str());
}

}  // namespace

Result<std::string> resolve_symlinks(std::string_view path, const LinkAt& link_at) {
  std::vector<std::string> pending = path_components(path);
  std::reverse(pending.begin(), pending.end());
  std::vector<std::string> done;
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(std::move(part));
    auto target = link_at(join_path(done, done.size()));
    if (!target) return fail(target.error());
    if (!*target) continue;
    if (++links > 40) return fail_input(std::string(path) + ": too many levels of symbolic links");
    done.pop_back();
    if ((*target)->starts_with('/')) done.clear();
    auto target_parts = path_components(**target);
    for (auto p = target_parts.rbegin(); p != target_parts.rend(); ++p) pending.push_back(*p);
  }
  return join_path(done, done.size());
}

Result<ImageFiles> ImageFiles::read(const Layout& layout, std::vector<Descriptor> layers, std::string what) {
  ImageFiles view(layout, std::move(layers), std::move(what));
  for (std::size_t index = 0; index < view.m_layers.size(); ++index) {
    auto a = open_layer(layout, view.m_layers[index], view.m_what);
    if (!a) return fail(a.error());
    std::vector<std::pair<std::string, Node>> added;
    std::vector<std::string> removed;  // whiteouts: "path" removes path and what is below it
    std::vector<std::string> opaque;   // directories whose lower content is hidden
    archive_entry* entry = nullptr;
    int r = ARCHIVE_OK;
    while ((r = archive_read_next_header(a->get(), &entry)) == ARCHIVE_OK) {
      auto path = normalise_path(archive_entry_pathname(entry));
      if (!path || path->empty()) continue;
      const auto slash = path->rfind('/');
      const std::string dir = slash == std::string::npos ? std::string() : path->substr(0, slash);
      const std::string base = slash == std::string::npos ? *path : path->substr(slash + 1);
      if (base == ".wh..wh..opq") {
        opaque.push_back(dir);
        continue;
      }
      if (base.starts_with(".wh.")) {
        removed.push_back(dir.empty() ? base.substr(4) : dir + "/" + base.substr(4));
        continue;
      }
      Node node;
      node.layer = index;
      if (const char* hardlink = archive_entry_hardlink(entry)) {
        auto target = normalise_path(hardlink);
        if (!target) continue;
        node.data_path = *target;
      } else if (archive_entry_filetype(entry) == AE_IFDIR) {
        node.type = Type::directory;
      } else if (archive_entry_filetype(entry) == AE_IFLNK) {
        node.type = Type::symlink;
        node.link_target = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
      } else if (archive_entry_filetype(entry) == AE_IFREG) {
        node.data_path = *path;
      } else {
        continue;  // devices and fifos hold no library
      }
      added.emplace_back(std::move(*path), std::move(node));
    }
    if (r != ARCHIVE_EOF) {
      return fail_input(view.m_what + ": layer " + view.m_layers[index].digest.str() + ": " +
                        archive_error_string(a->get()));
    }
    auto erase_below = [&view](const std::string& dir, bool include_self) {
      const std::string prefix = dir.empty() ? std::string() : dir + "/";
      auto it = view.m_nodes.lower_bound(prefix);
      while (it != view.m_nodes.end() && it->first.starts_with(prefix)) it = view.m_nodes.erase(it);
      if (include_self) view.m_nodes.erase(dir);
    };
    for (const auto& dir : opaque) erase_below(dir, false);
    for (const auto& path : removed) erase_below(path, true);
    for (auto& [path, node] : added) {
      // A non-directory replaces whatever was below it; a directory over a directory merges.
      if (node.type != Type::directory) erase_below(path, false);
      view.m_nodes[path] = std::move(node);
    }
  }
  return view;
}

const ImageFiles::Node* ImageFiles::lstat(std::string_view path) const {
  auto parts = path_components(path);
  auto it = m_nodes.find(join_path(parts, parts.size()));
  return it == m_nodes.end() ? nullptr : &it->second;
}

std::optional<std::string> ImageFiles::resolve(std::string_view path) const {
  auto resolved = resolve_symlinks(path, [this](const std::string& prefix) -> Result<std::optional<std::string>> {
    auto it = m_nodes.find(prefix);
    if (it == m_nodes.end()) {
      // Layers need not list every parent directory: a path with entries below it is a directory.
      auto below = m_nodes.lower_bound(prefix + "/");
      if (below == m_nodes.end() || !below->first.starts_with(prefix + "/"))
        return fail_input("/" + prefix + " does not exist");
      return std::nullopt;
    }
    if (it->second.type != Type::symlink) return std::nullopt;
    return it->second.link_target;
  });
  if (!resolved) return std::nullopt;
  return std::move(*resolved);
}

Result<std::string> ImageFiles::read_file(const std::string& path) const {
  auto it = m_nodes.find(path);
  if (it == m_nodes.end() || it->second.type != Type::file) {
    return fail_input(m_what + ": /" + path + " is not a regular file");
  }
  const Node& node = it->second;
  auto a = open_layer(*m_layout, m_layers[node.layer], m_what);
  if (!a) return fail(a.error());
  archive_entry* entry = nullptr;
  while (archive_read_next_header(a->get(), &entry) == ARCHIVE_OK) {
    auto name = normalise_path(archive_entry_pathname(entry));
    if (!name || *name != node.data_path || archive_entry_hardlink(entry) != nullptr) continue;
    // Only libraries and the loader's cache are read: a file larger than any of them is refused
    // rather than held in memory.
    constexpr la_int64_t k_max_file = la_int64_t{1} << 30;
    if (archive_entry_size(entry) > k_max_file) {
      return fail_input(m_what + ": /" + path + " is larger than 1 GiB; not read as a library");
    }
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(std::max<la_int64_t>(archive_entry_size(entry), 0)));
    char buffer[1 << 16];
    la_ssize_t n = 0;
    while ((n = archive_read_data(a->get(), buffer, sizeof buffer)) > 0)
      bytes.append(buffer, static_cast<std::size_t>(n));
    if (n < 0) return fail_input(m_what + ": reading /" + path + ": " + archive_error_string(a->get()));
    return bytes;
  }
  return fail_input(m_what + ": /" + path + ": its bytes are missing from layer " + m_layers[node.layer].digest.str());
}

}  // namespace arec
