#include "recorder/runtime_closure.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "oci/machine.hpp"
#include "recorder/dpkg.hpp"
#include "recorder/runtime_closure_internal.hpp"

namespace arec {

namespace {

// The directory of an absolute host path ("/" for "/x"); layering's parent_of is of image paths.
std::string host_parent(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? "/" : std::string(path.substr(0, slash));
}

std::string file_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The version string's family ("GLIBCXX_" of "GLIBCXX_3.4.21") and its numbers, for "defines up to".
std::pair<std::string, std::vector<int>> split_version(std::string_view version) {
  const auto digit = version.find_first_of("0123456789");
  if (digit == std::string_view::npos) return {std::string(version), {}};
  std::vector<int> numbers;
  int current = 0;
  for (const char c : version.substr(digit)) {
    if (c == '.') {
      numbers.push_back(current);
      current = 0;
    } else if (c >= '0' && c <= '9') {
      current = current * 10 + (c - '0');
    } else {
      return {std::string(version), {}};
    }
  }
  numbers.push_back(current);
  return {std::string(version.substr(0, digit)), numbers};
}

// One object the loader maps: a recorded file, a library added from this machine, or one of the base.
struct Object {
  std::string image_path;
  fs::Path host_path;  // empty for a base object
  ElfFile elf;
  int loader = -1;  // the object that needed it first (whose RPATH chain it inherits)
  bool in_base = false;
};

struct SearchDir {
  std::string image_dir;  // where the loader looks inside the image
  std::string host_dir;   // the same entry on this machine (differs for $ORIGIN)
  std::string how;        // for messages: "RUNPATH of app"
  bool origin = false;    // the entry names $ORIGIN
};

class Resolver {
 public:
  Resolver(const std::vector<LayerEntry>& entries, const ClosureOptions& options) : m_options(options) {
    for (const auto& e : entries) m_recorded.emplace("/" + e.path, &e);
  }

  Status run(const std::vector<LayerEntry>& entries) {
    for (const auto& e : entries) {
      if (e.type != LayerEntry::Type::file) continue;
      auto elf = read_elf(e.source);
      if (!elf) return fail(elf.error());
      if (!*elf || !(*elf)->dynamic()) continue;
      m_objects.push_back({"/" + e.path, e.source, std::move(**elf), -1, false});
    }
    if (auto s = choose_root(); !s) return s;
    if (!m_objects.empty() && m_options.base) {
      auto base = m_options.base();
      if (!base) return fail(base.error());
      m_base = *base;
    }
    for (std::size_t i = 0; i < m_objects.size(); ++i) {
      // A base's library is followed too: what it needs and the base lacks is added like any other.
      if (auto s = add_interpreter(i); !s) return s;
      const std::vector<std::string> needed = m_objects[i].elf.needed;
      for (const auto& name : needed) {
        if (auto s = add_needed(i, name); !s) return s;
      }
    }
    return {};
  }

  std::vector<LayerEntry> take() { return std::move(m_added); }
  std::vector<std::pair<std::string, std::string>> take_needs() { return std::move(m_needs); }
  std::vector<KeptLibrary> take_kept() { return std::move(m_kept); }
  const std::string& root() const { return m_root; }

 private:
  // Where the loader and libraries come from: the sysroot given; else this machine for its own
  // platform's files, /usr/TRIPLET for another's. A dynamic file of another machine with neither is
  // refused: this machine's libraries would not run there.
  Status choose_root() {
    if (m_options.sysroot) {
      std::error_code ec;
      if (!std::filesystem::is_directory(*m_options.sysroot, ec)) {
        return fail_input("--sysroot " + m_options.sysroot->string() + ": not a directory");
      }
      m_root = std::filesystem::absolute(*m_options.sysroot).lexically_normal().string();
      while (m_root.size() > 1 && m_root.ends_with('/')) m_root.pop_back();
      if (m_root == "/") m_root.clear();
      return {};
    }
    static const std::optional<ElfFile> self = [] {
      auto elf = read_elf(fs::Path("/proc/self/exe"));
      return elf && *elf ? std::optional<ElfFile>(**elf) : std::nullopt;
    }();
    for (const auto& o : m_objects) {
      if (self && o.elf.elf_class == self->elf_class && o.elf.machine == self->machine) continue;
      const LoaderDefaults defaults = loader_defaults(o.elf);
      const std::string platform =
          elf_platform(o.elf) ? platform_text(*elf_platform(o.elf)) : "machine " + std::to_string(o.elf.machine);
      const std::string debian_root = defaults.triplet.empty() ? std::string() : "/usr/" + defaults.triplet;
      std::error_code ec;
      if (!debian_root.empty() && std::filesystem::is_directory(debian_root, ec)) {
        m_root = debian_root;
        return {};
      }
      return fail_input(describe(o) + " is for " + platform +
                        ", not this machine's: its loader and libraries come from the target's "
                        "sysroot; give --sysroot DIR" +
                        (debian_root.empty() ? std::string() : " (" + debian_root + " is not there)"));
    }
    return {};
  }

  // Whether an absolute search path entry of this machine names a directory outside the build's trees
  // (under a system directory, when they are not known).
  bool outside_build(const std::string& dir) const {
    if (!m_root.empty() || !dir.starts_with('/')) return false;
    if (m_options.build_trees.empty()) return is_system_path(dir + "/");
    return std::none_of(m_options.build_trees.begin(), m_options.build_trees.end(), [&](const fs::Path& tree) {
      std::string prefix = std::filesystem::absolute(tree).lexically_normal().string();
      while (prefix.size() > 1 && prefix.ends_with('/')) prefix.pop_back();
      return dir == prefix || dir.starts_with(prefix + "/");
    });
  }

  // Where the loader, the cache and the default directories' file at image path `path` is read from.
  std::string system_file(std::string_view path) const { return m_root + std::string(path); }
  std::string where_system() const { return m_root.empty() ? "on this machine" : "in the sysroot " + m_root; }

  std::string describe(const Object& o) const {
    return o.host_path.empty() || o.host_path == o.image_path ? o.image_path
                                                              : o.image_path + " (" + o.host_path.string() + ")";
  }

  // What the image already holds at `image_path` for the loader: a recorded file, or a base file.
  bool recorded_at(const std::string& image_path) const {
    auto it = m_recorded.find(image_path);
    return it != m_recorded.end() && it->second->type != LayerEntry::Type::directory;
  }

  // Notes that the object at `index` needs what is at `image_path` (with or without its leading slash).
  void need(std::size_t index, const std::string& image_path) {
    const auto strip = [](const std::string& p) { return p.starts_with('/') ? p.substr(1) : p; };
    m_needs.emplace_back(strip(m_objects[index].image_path), strip(image_path));
  }

  Status add_interpreter(std::size_t index) {
    const std::string interp = m_objects[index].elf.interpreter;
    if (!interp.empty()) need(index, normal_path(interp));
    if (interp.empty() || m_interpreters.contains(interp)) return {};
    m_interpreters.insert(interp);
    if (recorded_at(normal_path(interp))) return {};
    if (m_base != nullptr) {
      auto resolved = m_base->resolve(interp);
      if (resolved && m_base->lstat(*resolved) != nullptr && m_base->lstat(*resolved)->type == ImageFiles::Type::file) {
        return {};
      }
    }
    struct stat st {};
    if (::stat(system_file(interp).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return fail_input(describe(m_objects[index]) + " needs the dynamic loader " + interp + ", which is not " +
                        where_system());
    }
    return place_mirrored(interp, describe(m_objects[index]));
  }

  Status add_needed(std::size_t index, const std::string& name) {
    const Object needer = m_objects[index];  // copied: m_objects grows below
    const LoaderDefaults defaults = loader_defaults(needer.elf);
    const std::string key =
        std::to_string(needer.elf.elf_class) + ":" + std::to_string(needer.elf.machine) + ":" + name;
    if (auto it = m_loaded.find(key); it != m_loaded.end()) {
      need(index, m_objects[it->second].image_path);
      return check_versions(needer, name, it->second);
    }
    if (name.find('/') != std::string::npos) {
      return fail_input(describe(needer) + " needs " + name +
                        " by a path, which arec does not follow; link it by its SONAME");
    }

    std::vector<SearchDir> dirs = search_dirs(index, defaults);
    // Inside the image: what a recorded file or the base holds where the loader looks, first hit wins.
    std::vector<std::string> image_dirs;
    for (const auto& d : dirs) image_dirs.push_back(d.image_dir);
    for (const auto& path : base_cache_paths(name)) image_dirs.push_back(host_parent(path));
    for (const auto& d : defaults.dirs) image_dirs.push_back(d);
    for (const auto& dir : image_dirs) {
      const std::string candidate = normal_path(dir + "/" + name);
      if (recorded_at(candidate)) {  // a recorded file: it is a root of its own
        need(index, candidate);
        return {};
      }
      if (auto base = base_object(candidate, needer); base) {
        if (!*base) return fail((*base).error());
        m_objects.push_back(std::move(**base));
        m_objects.back().loader = static_cast<int>(index);
        remember(key, m_objects.size() - 1);
        return check_versions(needer, name, m_objects.size() - 1);
      }
    }

    // As ld.so searches: RPATH chain or RUNPATH (as written: the build tree is on this machine), then
    // the cache and the default directories of the target's root (this machine's, or the sysroot).
    struct Found {
      fs::Path host_path;
      const SearchDir* via = nullptr;
      std::string system_path;  // for a file of the cache or a default directory: its path on the target
    };
    std::vector<std::string> looked;
    std::optional<Found> found;
    for (const auto& d : dirs) {
      looked.push_back(d.host_dir + " (" + d.how + ")");
      if (matches(d.host_dir + "/" + name, needer.elf)) {
        found = Found{fs::Path(d.host_dir + "/" + name), &d, {}};
        break;
      }
    }
    if (!found) {
      looked.push_back(cache_path().string());
      for (const auto& e : host_cache()) {
        if (e.name == name && e.hwcap == 0 && matches(system_file(e.path), needer.elf)) {
          found = Found{fs::Path(system_file(e.path)), nullptr, e.path};
          break;
        }
      }
    }
    if (!found) {
      for (const auto& d : defaults.dirs) {
        looked.push_back(system_file(d));
        if (matches(system_file(d + "/" + name), needer.elf)) {
          found = Found{fs::Path(system_file(d + "/" + name)), nullptr, d + "/" + name};
          break;
        }
      }
    }
    if (!found) {
      std::string where;
      for (const auto& l : looked) where += (where.empty() ? "" : ", ") + l;
      return fail_input(describe(needer) + " needs " + name + ", which was not found; looked in " + where);
    }

    // Where it goes in the image: a system directory the loader searches keeps its path; a library
    // found through $ORIGIN goes where the image's $ORIGIN says; any other (the build tree, a directory
    // only this machine's cache knows) goes where the needing file's first $ORIGIN entry says, else
    // to the standard library directory.
    const fs::Path& host_path = found->host_path;
    const SearchDir* via = found->via;
    const bool system = via == nullptr;
    const std::string target_path = normal_path(system ? found->system_path : host_path.string());
    std::string image_path;
    if (via != nullptr && via->origin) {
      image_path = normal_path(via->image_dir + "/" + name);
    } else if (std::find(defaults.dirs.begin(), defaults.dirs.end(), host_parent(target_path)) != defaults.dirs.end()) {
      image_path = target_path;
    } else if (via != nullptr && outside_build(via->host_dir)) {
      // A vendor's directory: the loader looks there in the image as it did here.
      image_path = target_path;
      m_kept.push_back({image_path, via->how});
    } else {
      auto origin_dir = std::find_if(dirs.begin(), dirs.end(), [](const SearchDir& d) { return d.origin; });
      image_path = normal_path((origin_dir != dirs.end() ? origin_dir->image_dir : defaults.standard_dir) + "/" + name);
    }
    const std::string origin = "the runtime closure of " + needer.image_path;
    // A file of the target's root keeps its path (and the links leading to it); any other is placed.
    const bool mirrored = image_path == target_path && (system || m_root.empty());
    Status placed = mirrored ? place_mirrored(image_path, origin) : place_at(image_path, host_path, origin);
    if (!placed) return placed;
    m_objects.push_back({image_path, host_path, *m_host_files.at(host_path.string()), static_cast<int>(index), false});
    remember(key, m_objects.size() - 1);
    need(index, image_path);
    return {};
  }

  // As ld.so, a later need is met by an object loaded under that name or carrying it as its SONAME.
  void remember(const std::string& key, std::size_t object) {
    m_loaded[key] = object;
    const ElfFile& elf = m_objects[object].elf;
    if (!elf.soname.empty()) {
      m_loaded.try_emplace(std::to_string(elf.elf_class) + ":" + std::to_string(elf.machine) + ":" + elf.soname,
                           object);
    }
  }

  // RPATH of the needer and of its loaders (when the needer has no RUNPATH), then its RUNPATH.
  std::vector<SearchDir> search_dirs(std::size_t index, const LoaderDefaults& defaults) const {
    std::vector<SearchDir> out;
    auto add = [&](const Object& owner, const std::string& text, const char* tag) {
      const std::string image_origin = host_parent(owner.image_path);
      const std::string host_origin = owner.host_path.empty() ? image_origin : host_parent(owner.host_path.string());
      for (const auto& entry : split_search_path(text)) {
        const std::string how = std::string(tag) + " " + entry + " of " + file_name(owner.image_path);
        out.push_back({normal_path(expand_dynamic_tokens(entry, image_origin, defaults)),
                       normal_path(expand_dynamic_tokens(entry, host_origin, defaults)), how, mentions_origin(entry)});
      }
    };
    const Object& needer = m_objects[index];
    if (!needer.elf.runpath) {
      for (int l = static_cast<int>(index); l != -1; l = m_objects[static_cast<std::size_t>(l)].loader) {
        const Object& o = m_objects[static_cast<std::size_t>(l)];
        if (o.elf.rpath && !o.elf.runpath) add(o, *o.elf.rpath, "RPATH");
      }
    } else {
      add(needer, *needer.elf.runpath, "RUNPATH");
    }
    return out;
  }

  // A library of the base at `image_path`, read from its layer; nothing when the base has no such
  // file, or one of another class or machine (the loader would skip it too).
  std::optional<Result<Object>> base_object(const std::string& image_path, const Object& needer) const {
    if (m_base == nullptr) return std::nullopt;
    auto resolved = m_base->resolve(image_path);
    if (!resolved) return std::nullopt;
    const auto* node = m_base->lstat(*resolved);
    if (node == nullptr || node->type != ImageFiles::Type::file) return std::nullopt;
    auto bytes = m_base->read_file(*resolved);
    if (!bytes) return Result<Object>(fail(bytes.error()));
    auto elf = read_elf(std::as_bytes(std::span(*bytes)), "the base's " + image_path);
    if (!elf) return Result<Object>(fail(elf.error()));
    if (!*elf || (*elf)->elf_class != needer.elf.elf_class || (*elf)->machine != needer.elf.machine)
      return std::nullopt;
    return Result<Object>(Object{image_path, {}, std::move(**elf), -1, true});
  }

  Status check_versions(const Object& needer, const std::string& name, std::size_t provider_index) const {
    const Object& provider = m_objects[provider_index];
    if (!provider.in_base) return {};
    auto needs = needer.elf.version_needs.find(name);
    if (needs == needer.elf.version_needs.end()) return {};
    // Of the versions the base lacks, the newest of the first family missing one: what the base must reach.
    std::optional<std::pair<std::vector<int>, std::string>> missing;
    std::string family;
    for (const auto& version : needs->second) {
      if (std::find(provider.elf.version_defs.begin(), provider.elf.version_defs.end(), version) !=
          provider.elf.version_defs.end()) {
        continue;
      }
      auto [version_family, numbers] = split_version(version);
      if (missing && version_family != family) continue;
      family = version_family;
      if (!missing || missing->first < numbers) missing = {numbers, version};
    }
    if (!missing) return {};
    std::optional<std::pair<std::vector<int>, std::string>> newest;
    for (const auto& def : provider.elf.version_defs) {
      auto [def_family, def_numbers] = split_version(def);
      if (def_family != family || def_numbers.empty()) continue;
      if (!newest || newest->first < def_numbers) newest = {def_numbers, def};
    }
    return fail_input(file_name(needer.image_path) + " needs " + missing->second + " from " + name + "; the base's " +
                      name + " (" + provider.image_path + ") " +
                      (newest ? "defines up to " + newest->second : "defines no " + family + " version"));
  }

  // Whether `path` on this machine is an ELF file the loader would accept for `needer`. Each file is
  // read once: the one taken is kept for its own needs.
  bool matches(const std::string& path, const ElfFile& needer) {
    auto it = m_host_files.find(path);
    if (it == m_host_files.end()) {
      std::optional<ElfFile> file;
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        auto elf = read_elf(fs::Path(path));
        if (elf && *elf) file = std::move(**elf);
      }
      it = m_host_files.emplace(path, std::move(file)).first;
    }
    return it->second && it->second->elf_class == needer.elf_class && it->second->machine == needer.machine;
  }

  // This machine's cache, or the sysroot's own: never this machine's for another machine's files.
  fs::Path cache_path() const {
    return m_root.empty() ? m_options.ld_cache : fs::Path(system_file("/etc/ld.so.cache"));
  }

  const std::vector<LdCacheEntry>& host_cache() {
    if (!m_host_cache) {
      m_host_cache.emplace();
      // No cache, or one that cannot be read, is an empty one: ld.so then searches the default directories.
      const fs::Path cache = cache_path();
      if (::access(cache.c_str(), F_OK) == 0) {
        auto bytes = fs::read_file(cache);
        if (bytes) {
          auto entries = parse_ld_cache(std::as_bytes(std::span(*bytes)), cache.string());
          if (entries) m_host_cache = std::move(*entries);
        }
      }
    }
    return *m_host_cache;
  }

  std::vector<std::string> base_cache_paths(const std::string& name) {
    if (m_base == nullptr) return {};
    if (!m_base_cache) {
      m_base_cache.emplace();
      auto resolved = m_base->resolve("etc/ld.so.cache");
      if (resolved && m_base->lstat(*resolved) != nullptr && m_base->lstat(*resolved)->type == ImageFiles::Type::file) {
        auto bytes = m_base->read_file(*resolved);
        // The loader ignores a cache it cannot read; so does this lookup.
        if (bytes) {
          if (auto entries = parse_ld_cache(std::as_bytes(std::span(*bytes)), "the base's /etc/ld.so.cache")) {
            m_base_cache = std::move(*entries);
          }
        }
      }
    }
    std::vector<std::string> out;
    for (const auto& e : *m_base_cache) {
      if (e.name == name && e.hwcap == 0) out.push_back(e.path);
    }
    return out;
  }

  Status add_entry(LayerEntry entry, const std::string& origin) {
    if (m_base != nullptr && entry.type == LayerEntry::Type::file) {
      if (const auto* node = m_base->lstat(entry.path); node != nullptr) {
        return fail_input(origin + ": /" + entry.path + " would replace the base's file at that path");
      }
    }
    if (m_recorded.contains("/" + entry.path)) {
      return fail_input(origin + " needs /" + entry.path +
                        (entry.type == LayerEntry::Type::symlink ? " -> " + entry.link_target : std::string()) +
                        ", where the recorded inputs put something else");
    }
    if (m_placed.contains(entry.path)) return {};
    m_placed.insert(entry.path);
    m_added.push_back(std::move(entry));
    return {};
  }

  // Puts the target root's `path` at the same path in the image, with each symlink met on the way
  // (lib -> usr/lib, libstdc++.so.6 -> libstdc++.so.6.0.30), unless the base holds that path already.
  Status place_mirrored(const std::string& path, const std::string& origin) {
    Status added;  // a link the image cannot take ends the walk with add_entry's own message
    auto resolved = resolve_symlinks(path, [&](const std::string& prefix) -> Result<std::optional<std::string>> {
      struct stat st {};
      const std::string host = system_file("/" + prefix);
      if (::lstat(host.c_str(), &st) != 0) return fail_input(host + ": " + fs::errno_text(errno));
      if (!S_ISLNK(st.st_mode)) return std::nullopt;
      std::error_code ec;
      std::string target = std::filesystem::read_symlink(host, ec).string();
      if (ec) return fail_input(host + ": reading symlink: " + ec.message());
      if (m_base == nullptr || m_base->lstat(prefix) == nullptr) {
        added = add_entry({LayerEntry::Type::symlink, prefix, {}, target, 0777, 0, {}}, origin);
        if (!added) return fail(added.error());
      }
      return target;
    });
    if (!added) return added;
    if (!resolved) return fail(std::move(resolved.error()).context(origin));
    const std::string& real = *resolved;
    struct stat st {};
    if (::stat(system_file("/" + real).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return fail_input(origin + ": " + system_file(path) + " is not a regular file");
    }
    return add_entry({LayerEntry::Type::file,
                      real,
                      fs::Path(system_file("/" + real)),
                      {},
                      normalised_file_mode(st.st_mode),
                      st.st_size,
                      {}},
                     origin);
  }

  // Puts the library found at `host_path` at `image_path`. When the name found is a link to a file
  // beside it (libgreet.so.1 -> libgreet.so.1.2), both go in, as they are on this machine.
  Status place_at(const std::string& image_path, const fs::Path& host_path, const std::string& origin) {
    std::error_code ec;
    const fs::Path real = std::filesystem::canonical(host_path, ec);
    if (ec) return fail_input(origin + ": " + host_path.string() + ": " + ec.message());
    struct stat st {};
    if (::stat(real.c_str(), &st) != 0) return fail_input(origin + ": " + real.string() + ": " + fs::errno_text(errno));
    std::string file_path = image_path.substr(1);
    if (real.parent_path() == std::filesystem::weakly_canonical(host_path.parent_path()) &&
        real.filename() != host_path.filename()) {
      file_path = host_parent(image_path).substr(1) + "/" + real.filename().string();
      if (auto s = add_entry(
              {LayerEntry::Type::symlink, image_path.substr(1), {}, real.filename().string(), 0777, 0, {}}, origin);
          !s) {
        return s;
      }
    }
    return add_entry({LayerEntry::Type::file, file_path, real, {}, normalised_file_mode(st.st_mode), st.st_size, {}},
                     origin);
  }

  const ClosureOptions& m_options;
  std::string m_root;  // the target's root on this machine, without a trailing slash; empty: this machine
  const ImageFiles* m_base = nullptr;
  std::map<std::string, const LayerEntry*> m_recorded;
  std::vector<Object> m_objects;
  std::map<std::string, std::size_t> m_loaded;  // class:machine:name -> object
  std::set<std::string> m_interpreters;
  std::set<std::string> m_placed;
  std::map<std::string, std::optional<ElfFile>> m_host_files;
  std::optional<std::vector<LdCacheEntry>> m_host_cache;
  std::optional<std::vector<LdCacheEntry>> m_base_cache;
  std::vector<LayerEntry> m_added;
  std::vector<std::pair<std::string, std::string>> m_needs;
  std::vector<KeptLibrary> m_kept;
};

}  // namespace

Result<Runtime> parse_runtime(std::string_view text) {
  if (text == "auto") return Runtime::automatic;
  if (text == "none") return Runtime::none;
  return fail_input("--runtime \"" + std::string(text) + "\": expected auto or none");
}

Result<std::vector<LayerEntry>> runtime_closure(const std::vector<LayerEntry>& entries, const ClosureOptions& options) {
  auto closure = resolve_runtime_closure(entries, options);
  if (!closure) return fail(closure.error());
  return std::move(closure->entries);
}

Result<RuntimeClosure> resolve_runtime_closure(const std::vector<LayerEntry>& entries, const ClosureOptions& options) {
  Resolver resolver(entries, options);
  if (auto s = resolver.run(entries); !s) return fail(s.error());
  return RuntimeClosure{resolver.take(), resolver.root(), resolver.take_needs(), resolver.take_kept()};
}

}  // namespace arec
