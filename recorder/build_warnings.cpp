// What a build should hear of where its files landed in a record: libraries at paths made from the
// build tree's layout, libraries of this machine that nothing names, plugins left out of every image.
#include <algorithm>
#include <set>

#include "recorder/image_internal.hpp"
#include "util/paths.hpp"

namespace arec {

namespace {

std::string parent_dir(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

// Whether an image directory is where libraries are installed: a lib, lib32, lib64 or libx32 directory, or a
// multiarch one below it (usr/lib/x86_64-linux-gnu), and not one a build tree's layout made (below a
// program's bin/, in a FetchContent _deps/ tree, in CMakeFiles/).
bool library_directory(const std::string& dir) {
  const auto parts = path_components(dir);
  const auto is_lib = [](const std::string& part) {
    return part == "lib" || part == "lib32" || part == "lib64" || part == "libx32";
  };
  if (parts.empty()) return false;
  for (const char* layout : {"_deps", "bin", "sbin", "CMakeFiles"}) {
    if (std::find(parts.begin(), parts.end(), layout) != parts.end()) return false;
  }
  return is_lib(parts.back()) ||
         (parts.size() >= 2 && is_lib(parts[parts.size() - 2]) && parts.back().find("-linux-") != std::string::npos);
}

// "a, b and c" of the first few `names`, "and N more" past them.
std::string named_list(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min(names.size(), k_warning_named_files);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? "" : (i + 1 == shown && names.size() == shown ? " and " : ", ")) + names[i];
  }
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

// The one warning for the build's libraries that the closure put where the build tree's RUNPATH led
// ($ORIGIN/../_deps/..., a target's own folder): they run, but the image has a copy of the build tree's
// layout where the project's install rules would have put them in lib/.
std::optional<RecordWarning> layout_warning(const RecordRequest& request, const RuntimeClosure& closure) {
  if (request.paths != EntryPaths::build_tree) return std::nullopt;
  std::set<std::string> kept;
  for (const auto& k : closure.kept) kept.insert(k.image_path.substr(1));
  std::vector<std::string> files;
  for (const auto& e : closure.entries) {
    if (e.type != LayerEntry::Type::file || kept.contains(e.path)) continue;
    const std::string source = std::filesystem::absolute(e.source).lexically_normal().string();
    if (is_system_path(source) || (!closure.root.empty() && source.starts_with(closure.root + "/"))) continue;
    if (library_directory(parent_dir(e.path))) continue;
    files.push_back("/" + e.path);
  }
  if (files.empty()) return std::nullopt;
  const bool one = files.size() == 1;
  std::string text = (one ? "" : std::to_string(files.size()) + " libraries of the build (") + named_list(files) +
                     (one ? " is" : ") are") + " at " + (one ? "a path" : "paths") +
                     " made from the build tree's layout (where its RUNPATH leads), not where the project installs " +
                     (one ? "it" : "them") +
                     "; record the project's install component to give libraries their install paths "
                     "(CMake: arec_record(... COMPONENT <name>); arec record --component)";
  return RecordWarning{"build-layout", files, {text}, {}};
}

// A library of this machine found through an absolute search path outside the build (a vendor's
// /opt/vendor/lib), which no packages info names: kept at that path, and only a file to the SBOM.
std::optional<RecordWarning> unnamed_warning(const RuntimeClosure& closure,
                                             const std::map<std::string, std::size_t>& dependency_of) {
  std::vector<FileWarning> each;
  for (const auto& k : closure.kept) {
    if (dependency_of.contains(k.image_path.substr(1))) continue;
    each.push_back({k.image_path, k.image_path + " is recorded at that path, from this machine, since the " + k.how +
                                      " names a directory outside the build; no Debian package and no packages info "
                                      "names it, so the SBOM lists it as a file only: name it in a packages-info "
                                      "file (CMake: PACKAGES_INFO; arec record --packages-info)"});
  }
  if (each.empty()) return std::nullopt;
  return warning_of("unnamed-library", each, [](std::size_t files, std::string_view named) {
    return std::to_string(files) + " libraries of this machine (" + std::string(named) +
           ") are recorded at their paths, named by no Debian package and no packages info; name them in a "
           "packages-info file (CMake: PACKAGES_INFO; arec record --packages-info)";
  });
}

// A recorded program that calls dlopen, while a MODULE library of the project is in no image: the
// program may fail when it loads it.
Result<std::optional<RecordWarning>> plugin_warning(const RecordRequest& request,
                                                    const std::vector<LayerGroup>& groups) {
  if (request.project_modules.empty()) return std::nullopt;
  std::vector<std::string> callers;
  for (const auto& e : request.entries) {
    if (e.type != LayerEntry::Type::file || e.source.empty()) continue;
    auto elf = read_elf(e.source);
    if (!elf) return fail(elf.error());
    if (*elf && (*elf)->calls_dlopen) callers.push_back("/" + e.path);
  }
  if (callers.empty()) return std::nullopt;
  // Held by the image: the same file, or in an install tree a file of its name.
  std::set<std::string> sources;
  std::set<std::string> names;
  for (const auto& g : groups) {
    for (const auto& e : g.entries) {
      if (e.type != LayerEntry::Type::file || e.source.empty()) continue;
      sources.insert(std::filesystem::weakly_canonical(e.source).string());
      names.insert(e.path.substr(e.path.rfind('/') + 1));
    }
  }
  std::vector<std::string> missing;
  for (const auto& module : request.project_modules) {
    std::error_code ec;
    const auto real = std::filesystem::weakly_canonical(module, ec).string();
    const bool held = sources.contains(real) ||
                      (request.paths == EntryPaths::install_tree && names.contains(module.filename().string()));
    if (!held) missing.push_back(module.string());
  }
  if (missing.empty()) return std::nullopt;
  const bool one = missing.size() == 1;
  std::string text = named_list(callers) + (callers.size() == 1 ? " calls" : " call") +
                     " dlopen, and the project's MODULE " + (one ? "library " : "libraries ") + named_list(missing) +
                     (one ? " is" : " are") +
                     " in no image: a plugin left out fails only when the program loads it; add it to the image "
                     "(CMake: arec_record(... PLUGINS <target>); arec record --plugin)";
  return RecordWarning{"plugin", missing, {text}, {}};
}

}  // namespace

Result<std::vector<RecordWarning>> build_warnings(const RecordRequest& request, const RuntimeClosure& closure,
                                                  const std::vector<LayerGroup>& groups,
                                                  const std::map<std::string, std::size_t>& dependency_of) {
  std::vector<RecordWarning> out;
  if (auto w = layout_warning(request, closure)) out.push_back(std::move(*w));
  if (auto w = unnamed_warning(closure, dependency_of)) out.push_back(std::move(*w));
  auto plugins = plugin_warning(request, groups);
  if (!plugins) return fail(plugins.error());
  if (*plugins) out.push_back(std::move(**plugins));
  return out;
}

}  // namespace arec
