// The runtime closure of recorded ELF files: what the dynamic loader (glibc's ld.so) would load for
// them, so an image holds its programs' loader and libraries and runs them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/elf.hpp"
#include "recorder/image_files.hpp"
#include "recorder/layer.hpp"

namespace arec {

enum class Runtime { automatic, none };

// "auto" or "none", as `--runtime` and the CMake module's RUNTIME spell it.
Result<Runtime> parse_runtime(std::string_view text);

// One entry of /etc/ld.so.cache (glibc's "glibc-ld.so.cache1.1" format, see glibc's dl-cache.h).
struct LdCacheEntry {
  std::string name;  // the SONAME looked up ("libc.so.6")
  std::string path;  // where it is ("/lib/x86_64-linux-gnu/libc.so.6")
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;  // non-zero for glibc-hwcaps subdirectories
};
// Parses a cache file, in either the new format or the old one followed by the new one.
Result<std::vector<LdCacheEntry>> parse_ld_cache(std::span<const std::byte> bytes, std::string_view what);

// What the loader assumes for files of one class, machine and byte order (Debian's multiarch ld.so).
struct LoaderDefaults {
  std::vector<std::string> dirs;  // the default search path, in order
  std::string lib;                // what $LIB means
  std::string platform;           // what $PLATFORM means
  std::string standard_dir;       // where a library of the build itself goes when no $ORIGIN entry says
  std::string triplet;            // the multiarch name (aarch64-linux-gnu); empty for a machine arec does not know
};
LoaderDefaults loader_defaults(const ElfFile& file);

// Substitutes $ORIGIN / ${ORIGIN}, $LIB / ${LIB} and $PLATFORM / ${PLATFORM} in one search path entry.
std::string expand_dynamic_tokens(std::string_view entry, std::string_view origin, const LoaderDefaults& defaults);

struct ClosureOptions {
  fs::Path ld_cache = "/etc/ld.so.cache";  // this machine's cache; missing or unreadable, an empty one
  // The target's root: the loader, the cache (its etc/ld.so.cache) and the default directories are looked
  // up in it, never on this machine, and a file at DIR/PATH goes to PATH in the image. Without it, files
  // of this machine's platform are looked up on this machine, and another machine's in /usr/TRIPLET
  // (where Debian's cross packages put them, e.g. /usr/aarch64-linux-gnu) when that exists.
  std::optional<fs::Path> sysroot;
  // The base image's files, when recording on a base: read only when a recorded file is dynamic.
  std::function<Result<const ImageFiles*>()> base;
  // The build's source and build directories. A library found through an absolute RPATH or RUNPATH
  // entry outside them (a vendor's /opt/vendor/lib) is kept at its path, where the loader looks; one
  // inside them is placed as the build's own. Without them, an entry under a system directory (/opt,
  // /usr, ...) is taken to be outside the build.
  std::vector<fs::Path> build_trees;
};

// The entries to add so the loader finds, inside the image, everything the ELF files among `entries`
// need: the loader itself, libraries at the paths it will look them up at, their SONAME links, and the
// symlinks of the path leading there (merged /usr: lib -> usr/lib). A library the base holds where the
// loader will look is not added; every symbol version needed from it must be defined by the base's copy.
Result<std::vector<LayerEntry>> runtime_closure(const std::vector<LayerEntry>& entries, const ClosureOptions& options);

// A library kept at the path an absolute search path entry outside the build gave it.
struct KeptLibrary {
  std::string image_path;  // "/opt/vendor/lib/libvendor.so.4"
  std::string how;         // "RUNPATH /opt/vendor/lib of indexer"
};

// The closure's entries and the target root they were taken from: empty for this machine, else the
// sysroot or /usr/TRIPLET (a file at ROOT/PATH is at PATH in the image). Layering needs the root to
// find the rest of a package's files where the closure found some.
struct RuntimeClosure {
  std::vector<LayerEntry> entries;
  std::string root;
  // Which file needs which at run time, as image paths without the leading slash: an ELF file and its
  // loader, and each library it needs where the loader finds it (a link's name, as looked up). The
  // SBOM's dependency graph.
  std::vector<std::pair<std::string, std::string>> needs = {};
  std::vector<KeptLibrary> kept = {};
};
Result<RuntimeClosure> resolve_runtime_closure(const std::vector<LayerEntry>& entries, const ClosureOptions& options);

// A warning about one file of the image.
struct FileWarning {
  std::string file;  // the image path warned about
  std::string text;
};

// One warning for each RPATH or RUNPATH entry of the ELF files among `checked` (the build's own files)
// that names an absolute directory the image holds neither in `entries` (all its files) nor in the base
// (`base`, read only when such an entry is met; may be empty): the entry is then a path of this machine
// (a build tree), the loader looks there in vain, and the digest changes with where the file was built.
// Each names the file and the entry; `$ORIGIN` entries and the loader's default directories are never
// warned about.
Result<std::vector<FileWarning>> foreign_search_path_warnings(const std::vector<LayerEntry>& entries,
                                                              const std::vector<LayerEntry>& checked,
                                                              const std::function<Result<const ImageFiles*>()>& base);

// The one warning said for `files` (more than a few) warned of by foreign_search_path_warnings, `named`
// listing the first of them: "12 files (/bin/a, /bin/b, /bin/c, and 9 more) have ...".
std::string foreign_search_path_summary(std::size_t files, std::string_view named);

// The image paths of the dynamically linked executables among `entries`.
Result<std::vector<std::string>> dynamic_executables(const std::vector<LayerEntry>& entries);

}  // namespace arec
