#include "recorder/layering.hpp"

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "recorder/elf.hpp"
#include "recorder/image_files.hpp"

namespace arec {

namespace {

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

// An image path (no leading slash) of `target`, a link at `link_path`: relative to its directory, or
// from the root when absolute; ".." stops at the root.
std::string link_destination(const std::string& link_path, const std::string& target) {
  std::vector<std::string> parts;
  if (!target.starts_with('/')) parts = path_components(parent_of(link_path));
  for (auto& part : path_components(target)) {
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else {
      parts.push_back(std::move(part));
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

// A recorded file named like a shared object ("libfoo.so", "libfoo.so.1.2") that is one: an ELF
// shared object that is not a position-independent program.
Result<bool> is_shared_object(const LayerEntry& entry) {
  const std::string name = entry.path.substr(entry.path.rfind('/') + 1);
  if (!name.ends_with(".so") && name.find(".so.") == std::string::npos) return false;
  auto elf = read_elf(entry.source);
  if (!elf) return fail(elf.error());
  return *elf && (*elf)->type == ET_DYN && !(*elf)->executable;
}

// A group being filled: its entries by path, so one put twice (a link two paths pass through) is one.
struct Builder {
  LayerOrigin kind = LayerOrigin::files;
  std::string origin;
  std::string key;
  std::map<std::string, LayerEntry> entries;
  DebianPackage package;

  bool holds(const LayerEntry& e) const {
    auto it = entries.find(e.path);
    return it != entries.end() && it->second.type == e.type && it->second.link_target == e.link_target &&
           it->second.source == e.source;
  }
};

// A package's files under the library directories, as the closure would place them from the target's
// root. What the base holds or the recorded inputs name is left to them.
Status add_package_files(const std::vector<std::string>& listed, const std::string& root, const BaseHolds& base_holds,
                         const std::set<std::string>& recorded, Builder& group) {
  auto placed = placed_package_files(listed, root, [](const std::string& path) { return in_library_directory(path); });
  if (!placed) return fail(placed.error());
  for (auto& entry : *placed) {
    if (recorded.contains(entry.path) || (base_holds && base_holds(entry.path))) continue;
    group.entries.try_emplace(entry.path, std::move(entry));
  }
  return {};
}

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  return ec ? path : real.string();
}

// Real paths of many files in few directories: each directory resolved once (a package's hundreds of
// files would otherwise cost a readlink per component of each), the file itself only when it is a link.
class RealPaths {
 public:
  std::string operator()(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return canonical_or_same(path);
    const std::string dir = path.substr(0, slash);
    auto it = m_dirs.find(dir);
    if (it == m_dirs.end()) it = m_dirs.emplace(dir, canonical_or_same(dir)).first;
    std::string real = it->second + path.substr(slash);
    struct stat st {};
    if (::lstat(real.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return canonical_or_same(real);
    return real;
  }

 private:
  std::map<std::string, std::string> m_dirs;
};

// The entries of a group, sorted and with their parent directories, and the bytes of its files.
Result<LayerGroup> finish(Builder builder) {
  LayerGroup group;
  group.kind = builder.kind;
  group.origin = std::move(builder.origin);
  group.key = std::move(builder.key);
  group.package = std::move(builder.package);
  std::vector<LayerEntry> entries;
  entries.reserve(builder.entries.size());
  for (auto& [path, entry] : builder.entries) {
    if (entry.type == LayerEntry::Type::file) group.size += entry.size;
    entries.push_back(std::move(entry));
  }
  auto merged = merge_entries({}, std::move(entries), "the layer " + group.origin);
  if (!merged) return fail(merged.error());
  group.entries = std::move(*merged);
  return group;
}

// The union of groups' entries; where two put something at one path, the later group's, as the later
// layer's would be seen.
std::vector<LayerEntry> union_of(const std::vector<const LayerGroup*>& groups) {
  std::map<std::string, LayerEntry> by_path;
  for (const auto* g : groups) {
    for (const auto& e : g->entries) by_path.insert_or_assign(e.path, e);
  }
  std::vector<LayerEntry> out;
  out.reserve(by_path.size());
  for (auto& [path, e] : by_path) out.push_back(std::move(e));
  return out;
}

LayerGroup merge_groups(const std::vector<const LayerGroup*>& parts, LayerOrigin kind, std::string origin) {
  LayerGroup merged;
  merged.kind = kind;
  merged.origin = std::move(origin);
  merged.key = merged.origin;
  merged.entries = union_of(parts);
  for (const auto& e : merged.entries) {
    if (e.type == LayerEntry::Type::file) merged.size += e.size;
  }
  return merged;
}

}  // namespace

Result<std::vector<LayerEntry>> placed_package_files(const std::vector<std::string>& listed, const std::string& root,
                                                     const std::function<bool(const std::string& image_path)>& keep) {
  std::map<std::string, LayerEntry> out;
  auto put = [&](LayerEntry entry) { out.try_emplace(entry.path, std::move(entry)); };
  for (const auto& host_listed : listed) {
    if (!root.empty() && !host_listed.starts_with(root + "/")) continue;
    const std::string listed_path = host_listed.substr(root.size());
    std::string image_path;
    for (const auto& part : path_components(listed_path)) image_path += (image_path.empty() ? "" : "/") + part;
    if (image_path.empty() || !keep(image_path)) continue;
    std::vector<LayerEntry> links;
    bool missing = false;
    auto dir =
        resolve_symlinks(parent_of(image_path), [&](const std::string& prefix) -> Result<std::optional<std::string>> {
          struct stat st {};
          const std::string host = root + "/" + prefix;
          if (::lstat(host.c_str(), &st) != 0) {
            missing = true;
            return fail_input(host + ": " + fs::errno_text(errno));
          }
          if (!S_ISLNK(st.st_mode)) return std::nullopt;
          std::error_code ec;
          std::string target = std::filesystem::read_symlink(host, ec).string();
          if (ec) return fail_input(host + ": reading symlink: " + ec.message());
          links.push_back({LayerEntry::Type::symlink, prefix, {}, target, 0777, 0, {}});
          return target;
        });
    if (!dir && missing) continue;
    if (!dir) return fail(dir.error());
    const std::string name = image_path.substr(image_path.rfind('/') + 1);
    const std::string placed = dir->empty() ? name : *dir + "/" + name;
    const std::string host = root + "/" + placed;
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    for (auto& link : links) put(std::move(link));
    if (S_ISREG(st.st_mode)) {
      put({LayerEntry::Type::file, placed, fs::Path(host), {}, normalised_file_mode(st.st_mode), st.st_size, {}});
    } else if (S_ISLNK(st.st_mode)) {
      std::error_code ec;
      std::string target = std::filesystem::read_symlink(host, ec).string();
      if (ec) return fail_input(host + ": reading symlink: " + ec.message());
      put({LayerEntry::Type::symlink, placed, {}, std::move(target), 0777, 0, {}});
    }
  }
  std::vector<LayerEntry> entries;
  entries.reserve(out.size());
  for (auto& [path, entry] : out) entries.push_back(std::move(entry));
  return entries;
}

Result<std::vector<LayerEntry>> package_metadata(const DpkgDatabase& dpkg, const DebianPackage& package,
                                                 const std::string& stanza, const std::vector<LayerEntry>& held,
                                                 const std::string& root) {
  std::vector<LayerEntry> out;
  const std::string status = std::string(k_status_dir) + "/" + package.name;
  if (!stanza.empty()) out.push_back(generated_file(status, stanza));
  // The md5sums lines of the files this layer holds, found by where each file is on this machine.
  RealPaths real;
  std::set<std::string> sources;
  for (const auto& e : held) {
    if (e.type == LayerEntry::Type::file && !e.source.empty()) sources.insert(real(e.source.string()));
  }
  auto md5sums = dpkg.md5sums(package);
  if (!md5sums) return fail(md5sums.error());
  std::string kept;
  std::size_t pos = 0;
  while (pos < md5sums->size()) {
    const std::size_t end = std::min(md5sums->find('\n', pos), md5sums->size());
    const std::string_view line = std::string_view(*md5sums).substr(pos, end - pos);
    pos = end + 1;
    const auto gap = line.find("  ");
    if (gap == std::string_view::npos) continue;
    const std::string host = "/" + std::string(line.substr(gap + 2));
    if (!sources.contains(real(host))) continue;
    const std::string in_image =
        !root.empty() && host.starts_with(root + "/") ? host.substr(root.size() + 1) : host.substr(1);
    kept.append(line.substr(0, gap)).append("  ").append(in_image).push_back('\n');
  }
  if (!kept.empty()) out.push_back(generated_file(status + ".md5sums", std::move(kept)));
  auto copyright = dpkg.copyright_file(package);
  if (!copyright) return fail(copyright.error());
  struct stat st {};
  if (!*copyright || ::stat((*copyright)->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
  out.push_back({LayerEntry::Type::file,
                 "usr/share/doc/" + package.name + "/copyright",
                 **copyright,
                 {},
                 normalised_file_mode(st.st_mode),
                 st.st_size,
                 {}});
  // The licence texts it refers to ("see /usr/share/common-licenses/GPL-2"), which base-files holds
  // on a Debian system and an image without base-files would lack: redistributing asks for them too.
  auto text = fs::read_file(**copyright);
  if (!text) return fail(std::move(text.error()).context("the copyright of " + package_key(package)));
  for (const auto& name : common_licences_named(*text)) {
    const std::string host = std::string(k_common_licences) + "/" + name;
    const std::string in_image = host.substr(1);
    struct stat named {};
    if (::lstat(host.c_str(), &named) != 0) continue;
    std::string file = in_image;
    if (S_ISLNK(named.st_mode)) {  // GPL -> GPL-3: the link and the text it leads to, beside it
      std::error_code ec;
      const std::string target = std::filesystem::read_symlink(host, ec).string();
      if (ec || target.find('/') != std::string::npos) continue;
      out.push_back({LayerEntry::Type::symlink, in_image, {}, target, 0777, 0, {}});
      file = std::string(k_common_licences).substr(1) + "/" + target;
    }
    const fs::Path source = "/" + file;
    if (::stat(source.c_str(), &named) != 0 || !S_ISREG(named.st_mode)) continue;
    out.push_back({LayerEntry::Type::file, file, source, {}, normalised_file_mode(named.st_mode), named.st_size, {}});
  }
  return out;
}

std::vector<std::string> common_licences_named(std::string_view copyright) {
  std::set<std::string> names;
  const std::string prefix = std::string(k_common_licences) + "/";
  for (std::size_t at = copyright.find(prefix); at != std::string_view::npos; at = copyright.find(prefix, at + 1)) {
    std::size_t end = at + prefix.size();
    while (end < copyright.size() && (std::isalnum(static_cast<unsigned char>(copyright[end])) != 0 ||
                                      std::string_view("_.+-").find(copyright[end]) != std::string_view::npos)) {
      ++end;
    }
    std::string name(copyright.substr(at + prefix.size(), end - at - prefix.size()));
    // A name ends with a letter, a digit or '+': "GPL-2." closes a sentence.
    while (!name.empty() && std::isalnum(static_cast<unsigned char>(name.back())) == 0 && name.back() != '+') {
      name.pop_back();
    }
    if (!name.empty()) names.insert(std::move(name));
  }
  return {names.begin(), names.end()};
}

std::string os_origin(const Distribution& distribution) { return "os:" + distribution.id + "=" + distribution.version; }

std::string package_origin(const DebianPackage& package) {
  return "deb:" + package.name + "=" + package.version + ":" + package.architecture;
}

std::optional<DebianPackage> package_of_origin(std::string_view origin) {
  if (!origin.starts_with("deb:")) return std::nullopt;
  origin.remove_prefix(4);
  // The version may hold a colon (an epoch, "1:2.3"); the architecture is after the last one.
  const auto equals = origin.find('=');
  const auto colon = origin.rfind(':');
  if (equals == std::string_view::npos || colon == std::string_view::npos || colon < equals) return std::nullopt;
  return DebianPackage{std::string(origin.substr(0, equals)),
                       std::string(origin.substr(equals + 1, colon - equals - 1)),
                       std::string(origin.substr(colon + 1)),
                       {}};
}

bool in_library_directory(std::string_view image_path) {
  auto parts = path_components(image_path);
  const auto is_lib = [](const std::string& part) {
    return part == "lib" || part == "lib32" || part == "lib64" || part == "libx32";
  };
  if (!parts.empty() && is_lib(parts[0])) return true;
  return parts.size() >= 2 && parts[0] == "usr" && is_lib(parts[1]);
}

Result<std::vector<LayerGroup>> group_entries(const std::vector<LayerEntry>& recorded, const RuntimeClosure& closure,
                                              const DpkgDatabase& dpkg, const BaseHolds& base_holds,
                                              const OwnersOf& owners_of, const std::vector<PackageFiles>& added,
                                              const OsIdentity* os, PackageFilesTaken taken) {
  const std::string& root = closure.root;
  // The owners of the closure's files that can have one: under a system directory or the target's root.
  std::vector<std::string> system_sources;
  for (const auto& e : closure.entries) {
    if (e.type != LayerEntry::Type::file) continue;
    const auto source = std::filesystem::absolute(e.source).lexically_normal().string();
    if (is_system_path(source) || (!root.empty() && source.starts_with(root + "/"))) system_sources.push_back(source);
  }
  std::map<std::string, std::vector<DebianPackage>> owners;
  if (!system_sources.empty()) {
    auto found = owners_of ? owners_of(system_sources) : dpkg.owners(system_sources);
    if (!found) return fail(found.error());
    owners = std::move(*found);
  }

  std::map<std::string, DebianPackage> packages;  // "NAME:ARCH" -> the package
  std::map<std::string, Builder> package_groups;
  Builder no_package{LayerOrigin::no_package, "no-package", "no-package", {}, {}};
  Builder own{LayerOrigin::own_libraries, "own-libraries", "own-libraries", {}, {}};
  Builder files{LayerOrigin::files, "files", "files", {}, {}};

  std::set<std::string> recorded_paths;
  for (const auto& e : recorded) recorded_paths.insert(e.path);

  std::set<std::string> added_keys;  // their entries are all of what they take: their lists are not read again
  for (const auto& a : added) {
    const std::string key = a.package.name + ":" + a.package.architecture;
    added_keys.insert(key);
    packages.try_emplace(key, a.package);
    auto& group =
        package_groups.try_emplace(key, Builder{LayerOrigin::package, package_origin(a.package), key, {}, a.package})
            .first->second;
    for (const auto& e : a.entries) {
      if (recorded_paths.contains(e.path) || (base_holds && base_holds(e.path))) continue;
      group.entries.try_emplace(e.path, e);
    }
  }

  // Each closure file: its package's group (which then takes the rest of the package), else no-package
  // for a system file, else one of the build's own libraries.
  std::vector<const LayerEntry*> closure_links;
  for (const auto& e : closure.entries) {
    if (e.type != LayerEntry::Type::file) {
      closure_links.push_back(&e);
      continue;
    }
    const auto source = std::filesystem::absolute(e.source).lexically_normal().string();
    if (auto it = owners.find(source); it != owners.end() && !it->second.empty()) {
      const DebianPackage& package = it->second.front();
      const std::string key = package.name + ":" + package.architecture;
      packages.try_emplace(key, package);
      auto& group =
          package_groups.try_emplace(key, Builder{LayerOrigin::package, package_origin(package), key, {}, package})
              .first->second;
      group.entries.try_emplace(e.path, e);
    } else if (is_system_path(source) || (!root.empty() && source.starts_with(root + "/"))) {
      no_package.entries.try_emplace(e.path, e);
    } else {
      own.entries.try_emplace(e.path, e);
    }
  }
  for (const auto& [key, package] : packages) {
    if (added_keys.contains(key) || taken == PackageFilesTaken::needed) continue;
    auto listed = dpkg.listed_files(package);
    if (!listed) return fail(listed.error());
    if (auto s = add_package_files(*listed, root, base_holds, recorded_paths, package_groups.at(key)); !s)
      return fail(s.error());
  }
  // What a scanner reads of each package goes with its files: the stanzas from one read of status.
  std::vector<DebianPackage> all_packages;
  for (const auto& [key, package] : packages) all_packages.push_back(package);
  auto stanzas = dpkg.stanzas(all_packages);
  if (!stanzas) return fail(stanzas.error());
  for (auto& [key, group] : package_groups) {
    std::vector<LayerEntry> held;
    for (const auto& [path, e] : group.entries) held.push_back(e);
    const auto stanza = stanzas->find(key);
    auto metadata =
        package_metadata(dpkg, group.package, stanza == stanzas->end() ? std::string() : stanza->second, held, root);
    if (!metadata) return fail(metadata.error());
    for (auto& e : *metadata) group.entries.insert_or_assign(e.path, std::move(e));
  }

  // The recorded inputs: shared objects are the build's own libraries, everything else is files.
  std::vector<const LayerEntry*> recorded_links;
  for (const auto& e : recorded) {
    if (e.type == LayerEntry::Type::symlink) {
      recorded_links.push_back(&e);
    } else if (e.type == LayerEntry::Type::file) {
      auto shared = is_shared_object(e);
      if (!shared) return fail(shared.error());
      (*shared ? own : files).entries.try_emplace(e.path, e);
    } else {
      files.entries.try_emplace(e.path, e);
    }
  }

  // A link goes with what it leads to; a package's layer takes none it does not list itself (it stays
  // the same bytes in every image), so a closure link no package gave goes with no-package or the
  // build's own libraries, and a recorded one with the build's own libraries or the files.
  auto leads_into = [](const Builder& group, const std::string& destination) {
    if (group.entries.contains(destination)) return true;
    auto below = group.entries.lower_bound(destination + "/");
    return below != group.entries.end() && below->first.starts_with(destination + "/");
  };
  for (const auto* link : closure_links) {
    bool given = false;
    for (const auto& [key, group] : package_groups) given = given || group.holds(*link);
    if (given) continue;
    const std::string destination = link_destination(link->path, link->link_target);
    (leads_into(own, destination) && !leads_into(no_package, destination) ? own : no_package)
        .entries.try_emplace(link->path, *link);
  }
  for (const auto* link : recorded_links) {
    const std::string destination = link_destination(link->path, link->link_target);
    (leads_into(own, destination) ? own : files).entries.try_emplace(link->path, *link);
  }

  std::vector<LayerGroup> out;
  // The OS identity, with the first package, unless the base says what it is already.
  const bool base_has_os = base_holds && (base_holds("etc/os-release") || base_holds("usr/lib/os-release"));
  if (os != nullptr && !package_groups.empty() && !base_has_os) {
    Builder identity{LayerOrigin::os, os_origin(os->distribution), "os", {}, {}};
    for (const auto& e : os->entries) identity.entries.try_emplace(e.path, e);
    auto finished = finish(std::move(identity));
    if (!finished) return fail(finished.error());
    out.push_back(std::move(*finished));
  }
  for (auto& [key, group] : package_groups) {
    auto finished = finish(std::move(group));
    if (!finished) return fail(finished.error());
    out.push_back(std::move(*finished));
  }
  for (Builder* group : {&no_package, &own, &files}) {
    if (group->entries.empty()) continue;
    auto finished = finish(std::move(*group));
    if (!finished) return fail(finished.error());
    out.push_back(std::move(*finished));
  }
  return out;
}

Result<std::vector<LayerGroup>> separate_dependencies(std::vector<LayerGroup> groups,
                                                      const std::map<std::string, std::size_t>& dependency_of,
                                                      const std::vector<DeclaredPackage>& declared) {
  if (dependency_of.empty()) return groups;
  const auto of_packages = [](const LayerGroup& g) {
    return g.kind == LayerOrigin::os || g.kind == LayerOrigin::package || g.kind == LayerOrigin::merged_packages;
  };
  std::map<std::size_t, Builder> dependencies;
  std::vector<LayerGroup> kept;
  for (auto& group : groups) {
    if (of_packages(group)) {
      kept.push_back(std::move(group));
      continue;
    }
    // Where each moved path went: its files, then the links leading to one of them.
    std::map<std::string, std::size_t> moved;
    for (const auto& e : group.entries) {
      if (e.type != LayerEntry::Type::file) continue;
      if (auto it = dependency_of.find(e.path); it != dependency_of.end()) moved.emplace(e.path, it->second);
    }
    if (moved.empty()) {
      kept.push_back(std::move(group));
      continue;
    }
    for (const auto& e : group.entries) {
      if (e.type != LayerEntry::Type::symlink) continue;
      if (auto it = moved.find(link_destination(e.path, e.link_target)); it != moved.end())
        moved.emplace(e.path, it->second);
    }
    std::vector<LayerEntry> rest;
    for (auto& e : group.entries) {
      if (auto it = moved.find(e.path); it != moved.end()) {
        const auto& package = declared[it->second].package;
        auto& builder =
            dependencies
                .try_emplace(
                    it->second,
                    Builder{LayerOrigin::dependency, dependency_origin(package), dependency_origin(package), {}, {}})
                .first->second;
        builder.entries.try_emplace(e.path, std::move(e));
      } else {
        rest.push_back(std::move(e));
      }
    }
    // A directory stays unless what lay under it has all moved.
    const auto holds_under = [](const auto& paths, const std::string& dir) {
      auto below = paths.lower_bound(dir + "/");
      return below != paths.end() && below->first.starts_with(dir + "/");
    };
    std::map<std::string, bool> remaining;
    for (const auto& e : rest) {
      if (e.type != LayerEntry::Type::directory) remaining.emplace(e.path, true);
    }
    std::erase_if(rest, [&](const LayerEntry& e) {
      return e.type == LayerEntry::Type::directory && holds_under(moved, e.path) && !holds_under(remaining, e.path);
    });
    if (rest.empty()) continue;
    group.entries = std::move(rest);
    group.size = 0;
    for (const auto& e : group.entries) {
      if (e.type == LayerEntry::Type::file) group.size += e.size;
    }
    kept.push_back(std::move(group));
  }
  // After the OS identity's and the Debian packages' groups, in the order of their origins.
  std::vector<LayerGroup> made;
  for (auto& [index, builder] : dependencies) {
    auto finished = finish(std::move(builder));
    if (!finished) return fail(finished.error());
    made.push_back(std::move(*finished));
  }
  std::sort(made.begin(), made.end(), [](const LayerGroup& a, const LayerGroup& b) { return a.origin < b.origin; });
  const auto first_other = std::find_if_not(kept.begin(), kept.end(), of_packages);
  kept.insert(first_other, std::make_move_iterator(made.begin()), std::make_move_iterator(made.end()));
  return kept;
}

std::vector<LayerGroup> fit_budget(std::vector<LayerGroup> groups, unsigned budget) {
  budget = std::max(budget, 1U);
  if (groups.size() <= budget) return groups;
  std::vector<LayerGroup> packages;
  std::vector<LayerGroup> others;
  for (auto& g : groups) {
    const bool of_packages = g.kind == LayerOrigin::package || g.kind == LayerOrigin::os;
    (of_packages ? packages : others).push_back(std::move(g));
  }

  // The packages to merge: the smallest, by bytes then key, so which ones depends on the packages only.
  std::size_t keep = others.size() + 1 <= budget ? budget - others.size() - 1 : 0;
  keep = std::min(keep, packages.size());
  std::vector<std::size_t> by_size(packages.size());
  for (std::size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) {
    return packages[a].size != packages[b].size ? packages[a].size < packages[b].size
                                                : packages[a].key < packages[b].key;
  });
  std::set<std::size_t> merged_indexes(by_size.begin(), by_size.end() - static_cast<std::ptrdiff_t>(keep));

  std::vector<LayerGroup> out;
  std::vector<const LayerGroup*> merged_parts;
  for (std::size_t i = 0; i < packages.size(); ++i) {
    if (merged_indexes.contains(i)) {
      merged_parts.push_back(&packages[i]);
    }
  }
  for (std::size_t i = 0; i < packages.size(); ++i) {
    if (!merged_indexes.contains(i)) out.push_back(std::move(packages[i]));
  }
  // The merged layer after the packages kept: its bytes change whenever one of its packages does, and a
  // layer changes every layer above it in a node's snapshots (chain IDs), so the steadier go first.
  if (merged_parts.size() == 1) {
    out.push_back(*merged_parts.front());
  } else if (!merged_parts.empty()) {
    out.push_back(merge_groups(merged_parts, LayerOrigin::merged_packages, "deb:merged"));
  }
  for (auto& g : others) out.push_back(std::move(g));

  // Fewer layers than kinds of files: the first (the steadiest) are merged until the budget is met.
  while (out.size() > budget) {
    const std::string origin = out[0].origin + "," + out[1].origin;
    LayerGroup merged = merge_groups({&out[0], &out[1]}, LayerOrigin::mixed, origin);
    out.erase(out.begin(), out.begin() + 2);
    out.insert(out.begin(), std::move(merged));
  }
  return out;
}

Status check_layer_count(std::size_t base_layers, std::size_t record_layers) {
  if (base_layers + record_layers <= k_max_image_layers) return {};
  return fail_input("the image would have " + std::to_string(base_layers + record_layers) + " layers (" +
                    std::to_string(base_layers) + " of the base, " + std::to_string(record_layers) +
                    " of this record), more than the " + std::to_string(k_max_image_layers) +
                    " container runtimes accept; give a smaller --layers");
}

}  // namespace arec
