// What the loader reads, as the closure reads it: ld.so.cache, the loader's defaults for an ELF file and
// the dynamic string tokens of its search paths; and what the image's ELF files say of themselves: search
// paths naming a directory of this machine, dynamic linking.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "oci/machine.hpp"
#include "recorder/runtime_closure.hpp"
#include "recorder/runtime_closure_internal.hpp"

namespace arec {

namespace {

constexpr std::string_view k_old_magic = "ld.so-1.7.0";
constexpr std::string_view k_new_magic = "glibc-ld.so.cache1.1";
constexpr std::size_t k_new_header_size = 48;  // magic, version, nlibs, len_strings, flags, extension, unused
constexpr std::size_t k_new_entry_size = 24;   // flags, key, value, osversion, hwcap
constexpr std::size_t k_old_header_size = 16;  // magic[11] padded, nlibs
constexpr std::size_t k_old_entry_size = 12;   // flags, key, value

template <typename T>
T load(std::span<const std::byte> bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

Result<std::vector<LdCacheEntry>> parse_new_cache(std::span<const std::byte> bytes, std::string_view what) {
  auto bad = [&](std::string_view why) { return fail_input(std::string(what) + ": " + std::string(why)); };
  if (bytes.size() < k_new_header_size || std::memcmp(bytes.data(), k_new_magic.data(), k_new_magic.size()) != 0) {
    return bad("not a glibc-ld.so.cache1.1 file");
  }
  const auto count = load<std::uint32_t>(bytes, 20);
  if (count > (bytes.size() - k_new_header_size) / k_new_entry_size) return bad("more entries than the file holds");
  auto string_at = [&](std::uint32_t offset) -> std::optional<std::string> {
    if (offset >= bytes.size()) return std::nullopt;
    const auto* start = reinterpret_cast<const char*>(bytes.data()) + offset;
    const std::size_t length = ::strnlen(start, bytes.size() - offset);
    if (offset + length == bytes.size()) return std::nullopt;  // no terminating NUL
    return std::string(start, length);
  };
  std::vector<LdCacheEntry> out;
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = k_new_header_size + i * k_new_entry_size;
    LdCacheEntry e;
    e.flags = load<std::int32_t>(bytes, at);
    auto name = string_at(load<std::uint32_t>(bytes, at + 4));
    auto path = string_at(load<std::uint32_t>(bytes, at + 8));
    if (!name || !path) return bad("entry " + std::to_string(i) + " names a string outside the file");
    e.name = std::move(*name);
    e.path = std::move(*path);
    e.hwcap = load<std::uint64_t>(bytes, at + 16);
    out.push_back(std::move(e));
  }
  return out;
}

// Why an absolute search path naming a directory the image lacks is warned of, and what to do.
constexpr std::string_view k_search_path_harm =
    "the loader looks there in vain, and the digest changes with where it was built; link with $ORIGIN-relative "
    "paths (CMake: BUILD_RPATH_USE_ORIGIN)";

}  // namespace

Result<std::vector<LdCacheEntry>> parse_ld_cache(std::span<const std::byte> bytes, std::string_view what) {
  if (bytes.size() >= k_old_magic.size() && std::memcmp(bytes.data(), k_old_magic.data(), k_old_magic.size()) == 0) {
    // The old format first, then the new one at the next 8-byte boundary; its strings are relative to it.
    if (bytes.size() < k_old_header_size) return fail_input(std::string(what) + ": truncated");
    const auto count = load<std::uint32_t>(bytes, 12);
    if (count > (bytes.size() - k_old_header_size) / k_old_entry_size)
      return fail_input(std::string(what) + ": truncated");
    const std::size_t offset = (k_old_header_size + count * k_old_entry_size + 7) & ~std::size_t{7};
    if (offset >= bytes.size())
      return fail_input(std::string(what) + ": holds only the old format, which arec does not read");
    return parse_new_cache(bytes.subspan(offset), what);
  }
  return parse_new_cache(bytes, what);
}

LoaderDefaults loader_defaults(const ElfFile& file) {
  LoaderDefaults d;
  if (const Machine* m = machine_of_elf(file.machine, file.elf_class, file.data); m && !m->triplet.empty()) {
    d.platform = m->hwcap;
    d.triplet = m->triplet;
    d.dirs = {"/lib/" + d.triplet, "/usr/lib/" + d.triplet};
    d.lib = "lib/" + d.triplet;
    d.standard_dir = "/usr/lib/" + d.triplet;
  } else {
    d.lib = "lib";
    d.standard_dir = "/usr/lib";
  }
  d.dirs.insert(d.dirs.end(), {"/lib", "/usr/lib"});
  return d;
}

std::string expand_dynamic_tokens(std::string_view entry, std::string_view origin, const LoaderDefaults& defaults) {
  const std::pair<std::string_view, std::string_view> tokens[] = {
      {"ORIGIN", origin}, {"LIB", defaults.lib}, {"PLATFORM", defaults.platform}};
  std::string out;
  std::size_t pos = 0;
  while (pos < entry.size()) {
    if (entry[pos] != '$') {
      out.push_back(entry[pos++]);
      continue;
    }
    bool replaced = false;
    for (const auto& [name, value] : tokens) {
      const std::string braced = "{" + std::string(name) + "}";
      const std::string_view rest = entry.substr(pos + 1);
      std::size_t length = 0;
      if (rest.starts_with(braced)) {
        length = braced.size();
      } else if (rest.starts_with(name) &&
                 (rest.size() == name.size() ||
                  !(std::isalnum(static_cast<unsigned char>(rest[name.size()])) || rest[name.size()] == '_'))) {
        length = name.size();
      }
      if (length == 0) continue;
      out.append(value);
      pos += 1 + length;
      replaced = true;
      break;
    }
    if (!replaced) out.push_back(entry[pos++]);
  }
  return out;
}

Result<std::vector<FileWarning>> foreign_search_path_warnings(const std::vector<LayerEntry>& entries,
                                                              const std::vector<LayerEntry>& checked,
                                                              const std::function<Result<const ImageFiles*>()>& base) {
  std::map<std::string, const LayerEntry*, std::less<>> by_path;
  for (const auto& e : entries) by_path.emplace(e.path, &e);
  std::optional<const ImageFiles*> base_files;
  // Whether the image has a directory at `dir`, following the image's own symlinks (lib -> usr/lib).
  auto image_holds = [&](const std::string& dir) -> Result<bool> {
    auto resolved = resolve_symlinks(dir, [&](const std::string& prefix) -> Result<std::optional<std::string>> {
      auto it = by_path.find(prefix);
      if (it == by_path.end()) return fail_input("/" + prefix + " is not in the image's entries");
      if (it->second->type != LayerEntry::Type::symlink) return std::nullopt;
      return it->second->link_target;
    });
    if (resolved) {
      auto it = by_path.find(*resolved);
      if (it != by_path.end() && it->second->type == LayerEntry::Type::directory) return true;
    }
    if (!base) return false;
    if (!base_files) {
      auto files = base();
      if (!files) return fail(files.error());
      base_files = *files;
    }
    if (*base_files == nullptr) return false;
    auto in_base = (*base_files)->resolve(dir);
    if (!in_base) return false;
    const auto* node = (*base_files)->lstat(*in_base);
    return node != nullptr && node->type == ImageFiles::Type::directory;
  };
  std::vector<FileWarning> warnings;
  for (const auto& e : checked) {
    if (e.type != LayerEntry::Type::file || e.source.empty()) continue;
    auto elf = read_elf(e.source);
    if (!elf) return fail(elf.error());
    if (!*elf) continue;
    const LoaderDefaults defaults = loader_defaults(**elf);
    for (const auto& [tag, text] : {std::pair{"RPATH", (*elf)->rpath}, std::pair{"RUNPATH", (*elf)->runpath}}) {
      if (!text) continue;
      for (const auto& entry : split_search_path(*text)) {
        if (mentions_origin(entry)) continue;
        const std::string dir = normal_path(expand_dynamic_tokens(entry, "", defaults));
        if (!entry.starts_with('/') ||
            std::find(defaults.dirs.begin(), defaults.dirs.end(), dir) != defaults.dirs.end())
          continue;
        auto held = image_holds(dir);
        if (!held) return fail(held.error());
        if (*held) continue;
        const std::string file = "/" + e.path;
        warnings.push_back({file, file + (e.source.string() == file ? std::string() : " (" + e.source.string() + ")") +
                                      " has " + tag + " " + entry +
                                      ", a directory the image does not hold: " + std::string(k_search_path_harm)});
      }
    }
  }
  return warnings;
}

std::string foreign_search_path_summary(std::size_t files, std::string_view named) {
  return std::to_string(files) + " files (" + std::string(named) +
         ") have an RPATH or RUNPATH entry naming a directory the image does not hold: " +
         std::string(k_search_path_harm);
}

Result<std::vector<std::string>> dynamic_executables(const std::vector<LayerEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    if (e.type != LayerEntry::Type::file) continue;
    auto elf = read_elf(e.source);
    if (!elf) return fail(elf.error());
    if (*elf && (*elf)->executable && (*elf)->dynamic()) out.push_back("/" + e.path);
  }
  return out;
}

}  // namespace arec
