#include "recorder/runtime_closure.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "support/temp_dir.hpp"
#include "util/process.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

// Compiles with the system's compiler, as a build would; the test fails with the compiler's output.
void compile(const std::vector<std::string>& args) {
  std::vector<std::string> command{"c++"};
  command.insert(command.end(), args.begin(), args.end());
  auto run = run_process(command, {}, std::chrono::seconds(120), 1 << 16);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->exit_code, 0) << run->out;
}

// A library of the build (libgreet.so.1 -> libgreet.so.1.2, with symbol versions of its own) and a
// program using it through RUNPATH $ORIGIN/../lib, as CMake's build tree lays them out.
struct BuiltProgram {
  TempDir dir;
  fs::Path program;
  fs::Path library;
  BuiltProgram() {
    write_file(dir / "greet.cpp", "int greet_v1() { return 1; }\nint greet_v2() { return 2; }\n");
    write_file(dir / "greet.map",
               "GREET_1.0 { global: _Z8greet_v1v; local: *; };\nGREET_1.1 { global: _Z8greet_v2v; } GREET_1.0;\n");
    write_file(dir / "main.cpp",
               "#include <iostream>\nint greet_v2();\nint main() { std::cout << greet_v2() << '\\n'; }\n");
    std::filesystem::create_directories(dir / "lib");
    std::filesystem::create_directories(dir / "bin");
    library = dir / "lib/libgreet.so.1.2";
    compile({"-shared", "-fPIC", "-o", library.string(), (dir / "greet.cpp").string(), "-Wl,-soname,libgreet.so.1",
             "-Wl,--version-script=" + (dir / "greet.map").string()});
    std::filesystem::create_symlink("libgreet.so.1.2", dir / "lib/libgreet.so.1");
    program = dir / "bin/app";
    compile({"-o", program.string(), (dir / "main.cpp").string(), library.string(), "-Wl,-rpath,$ORIGIN/../lib",
             "-Wl,--enable-new-dtags"});
  }
};

BuiltProgram& built() {
  static BuiltProgram program;
  return program;
}

TEST(ElfTest, ReadsWhatTheLoaderNeedsFromAProgram) {
  auto elf = read_elf(built().program);
  ASSERT_TRUE(elf.has_value()) << elf.error().message;
  ASSERT_TRUE(elf->has_value());
  const ElfFile& file = **elf;
  EXPECT_EQ(file.elf_class, ELFCLASS64);
  EXPECT_TRUE(file.executable);
  EXPECT_TRUE(file.dynamic());
  EXPECT_FALSE(file.interpreter.empty());
  EXPECT_EQ(file.runpath, std::optional<std::string>("$ORIGIN/../lib"));
  EXPECT_FALSE(file.rpath.has_value());
  EXPECT_NE(std::find(file.needed.begin(), file.needed.end(), "libgreet.so.1"), file.needed.end());
  EXPECT_NE(std::find(file.needed.begin(), file.needed.end(), "libstdc++.so.6"), file.needed.end());
  EXPECT_EQ(file.version_needs.at("libgreet.so.1"), std::vector<std::string>{"GREET_1.1"});
  ASSERT_TRUE(file.version_needs.contains("libstdc++.so.6"));
}

// A program that loads plugins names dlopen among its undefined symbols; one that does not, and the
// C library that defines it, do not.
TEST(ElfTest, TellsAProgramThatCallsDlopen) {
  TempDir dir;
  write_file(dir / "loader.cpp",
             "#include <dlfcn.h>\nint main(int argc, char** argv) { return dlopen(argv[0], RTLD_NOW) ? 0 : 1; }\n");
  compile({"-o", (dir / "loader").string(), (dir / "loader.cpp").string()});
  auto loader = read_elf(dir / "loader");
  ASSERT_TRUE(loader.has_value() && loader->has_value());
  EXPECT_TRUE((*loader)->calls_dlopen);
  auto program = read_elf(built().program);
  ASSERT_TRUE(program.has_value() && program->has_value());
  EXPECT_FALSE((*program)->calls_dlopen);
  auto libc = read_elf(fs::Path("/lib/x86_64-linux-gnu/libc.so.6"));
  ASSERT_TRUE(libc.has_value() && libc->has_value());
  EXPECT_FALSE((*libc)->calls_dlopen) << "libc defines dlopen; it does not leave it undefined";
}

TEST(ElfTest, ReadsALibrarysSonameAndVersionDefinitions) {
  auto elf = read_elf(built().library);
  ASSERT_TRUE(elf.has_value() && elf->has_value());
  EXPECT_EQ((*elf)->soname, "libgreet.so.1");
  EXPECT_FALSE((*elf)->executable);
  EXPECT_EQ((*elf)->version_defs, (std::vector<std::string>{"GREET_1.0", "GREET_1.1"}));
}

TEST(ElfTest, ReadsFromMemoryAsFromAFile) {
  const std::string bytes = test::read_file(built().library);
  auto elf = read_elf(std::as_bytes(std::span(bytes)), "libgreet");
  ASSERT_TRUE(elf.has_value() && elf->has_value());
  EXPECT_EQ((*elf)->soname, "libgreet.so.1");
}

TEST(ElfTest, AFileThatIsNotElfIsNothing) {
  TempDir dir;
  write_file(dir / "script", "#!/bin/sh\necho hi\n");
  auto elf = read_elf(dir / "script");
  ASSERT_TRUE(elf.has_value());
  EXPECT_FALSE(elf->has_value());
}

TEST(ElfTest, ATruncatedElfFileIsAnErrorNamingIt) {
  TempDir dir;
  const std::string bytes = test::read_file(built().library);
  write_file(dir / "broken.so", bytes.substr(0, 40));
  auto elf = read_elf(dir / "broken.so");
  ASSERT_FALSE(elf.has_value());
  EXPECT_NE(elf.error().message.find("broken.so"), std::string::npos) << elf.error().message;
}

TEST(LdCacheTest, ParsesThisMachinesCache) {
  const std::string bytes = test::read_file("/etc/ld.so.cache");
  if (bytes.empty()) GTEST_SKIP() << "this machine has no /etc/ld.so.cache";
  auto entries = parse_ld_cache(std::as_bytes(std::span(bytes)), "/etc/ld.so.cache");
  ASSERT_TRUE(entries.has_value()) << entries.error().message;
  auto libc =
      std::find_if(entries->begin(), entries->end(), [](const LdCacheEntry& e) { return e.name == "libc.so.6"; });
  ASSERT_NE(libc, entries->end());
  EXPECT_TRUE(libc->path.ends_with("/libc.so.6")) << libc->path;
  EXPECT_TRUE(std::filesystem::exists(libc->path)) << libc->path;
}

// Builds a new-format cache of one entry by the layout of glibc's dl-cache.h.
std::string one_entry_cache(std::uint32_t key, std::uint32_t value) {
  std::string out = "glibc-ld.so.cache1.1";
  auto put32 = [&out](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put32(1);              // nlibs
  put32(40);             // len_strings
  out.append(4, '\0');   // flags, padding
  out.append(16, '\0');  // extension offset, unused
  put32(0x0303);         // flags: ELF libc6, x86-64
  put32(key);
  put32(value);
  put32(0);             // osversion
  out.append(8, '\0');  // hwcap
  out += std::string("libz.so.1") + '\0' + "/lib/x86_64-linux-gnu/libz.so.1" + '\0';
  return out;
}

TEST(LdCacheTest, ReadsEntriesOfTheNewFormat) {
  const std::string cache = one_entry_cache(72, 82);
  auto entries = parse_ld_cache(std::as_bytes(std::span(cache)), "cache");
  ASSERT_TRUE(entries.has_value()) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().name, "libz.so.1");
  EXPECT_EQ(entries->front().path, "/lib/x86_64-linux-gnu/libz.so.1");
  EXPECT_EQ(entries->front().flags, 0x0303);
}

TEST(LdCacheTest, RefusesStringsOutsideTheFileAndOtherFormats) {
  const std::string outside = one_entry_cache(72, 5000);
  auto entries = parse_ld_cache(std::as_bytes(std::span(outside)), "cache");
  ASSERT_FALSE(entries.has_value());
  EXPECT_NE(entries.error().message.find("outside the file"), std::string::npos) << entries.error().message;
  const std::string other = "not a cache at all, but long enough for a header..............";
  EXPECT_FALSE(parse_ld_cache(std::as_bytes(std::span(other)), "cache").has_value());
  const std::string truncated = one_entry_cache(72, 82).substr(0, 50);
  EXPECT_FALSE(parse_ld_cache(std::as_bytes(std::span(truncated)), "cache").has_value());
}

TEST(DynamicTokensTest, ExpandsOriginLibAndPlatform) {
  ElfFile x86_64;
  x86_64.elf_class = ELFCLASS64, x86_64.machine = EM_X86_64, x86_64.data = ELFDATA2LSB;
  const LoaderDefaults d = loader_defaults(x86_64);
  EXPECT_EQ(expand_dynamic_tokens("$ORIGIN/../lib", "/usr/local/bin", d), "/usr/local/bin/../lib");
  EXPECT_EQ(expand_dynamic_tokens("${ORIGIN}/plugins", "/opt/app", d), "/opt/app/plugins");
  EXPECT_EQ(expand_dynamic_tokens("/opt/$LIB/$PLATFORM", "/x", d), "/opt/lib/x86_64-linux-gnu/x86_64");
  EXPECT_EQ(expand_dynamic_tokens("$ORIGINAL/x", "/o", d), "$ORIGINAL/x");  // not the token
  EXPECT_EQ(d.dirs,
            (std::vector<std::string>{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"}));
}

TEST(RuntimeClosureTest, AddsTheLoaderTheSystemLibrariesAndTheBuildsOwnThroughOrigin) {
  std::vector<LayerEntry> entries{{LayerEntry::Type::file, "usr/local/bin/app", built().program, {}, 0755, 0, {}}};
  auto closure = runtime_closure(entries, {});
  ASSERT_TRUE(closure.has_value()) << closure.error().message;
  auto find = [&](const std::string& path) -> const LayerEntry* {
    auto it = std::find_if(closure->begin(), closure->end(), [&](const LayerEntry& e) { return e.path == path; });
    return it == closure->end() ? nullptr : &*it;
  };
  // $ORIGIN/../lib of /usr/local/bin/app, with the SONAME link as the build tree has it.
  const LayerEntry* soname = find("usr/local/lib/libgreet.so.1");
  ASSERT_NE(soname, nullptr);
  EXPECT_EQ(soname->type, LayerEntry::Type::symlink);
  EXPECT_EQ(soname->link_target, "libgreet.so.1.2");
  const LayerEntry* greet = find("usr/local/lib/libgreet.so.1.2");
  ASSERT_NE(greet, nullptr);
  EXPECT_EQ(greet->source, std::filesystem::canonical(built().library));
  // The loader and libc, wherever this machine's path to them leads.
  const std::string interp = (*read_elf(built().program))->interpreter;
  auto ends_with = [&](const std::string& name) {
    return std::any_of(closure->begin(), closure->end(),
                       [&](const LayerEntry& e) { return e.type == LayerEntry::Type::file && e.path.ends_with(name); });
  };
  EXPECT_TRUE(ends_with(std::filesystem::canonical(interp).filename().string()));
  EXPECT_TRUE(ends_with("/libc.so.6"));
  EXPECT_TRUE(ends_with("/libm.so.6"));  // needed by libstdc++, not by the program
  EXPECT_TRUE(std::any_of(closure->begin(), closure->end(),
                          [](const LayerEntry& e) { return e.path.find("libstdc++.so.6.") != std::string::npos; }));
}

TEST(RuntimeClosureTest, AMissingLibraryNamesTheNeederAndWhereItLooked) {
  TempDir dir;
  std::filesystem::copy(built().program, dir / "app");
  std::vector<LayerEntry> entries{{LayerEntry::Type::file, "usr/local/bin/app", dir / "app", {}, 0755, 0, {}}};
  auto closure = runtime_closure(entries, {});
  ASSERT_FALSE(closure.has_value());
  const std::string& message = closure.error().message;
  EXPECT_NE(message.find("/usr/local/bin/app"), std::string::npos) << message;
  EXPECT_NE(message.find("needs libgreet.so.1, which was not found"), std::string::npos) << message;
  EXPECT_NE(message.find((dir.path() / "../lib").lexically_normal().string()), std::string::npos) << message;
  EXPECT_NE(message.find("/etc/ld.so.cache"), std::string::npos) << message;
}

// Only an absolute entry naming a directory the image lacks is a path of the build machine: $ORIGIN
// entries, the loader's default directories and directories the image holds (through its own symlinks
// too) are not warned about.
TEST(RuntimeClosureTest, AnAbsoluteSearchPathEntryTheImageDoesNotHoldIsWarnedAbout) {
  TempDir dir;
  write_file(dir / "p.cpp", "int main() { return 0; }\n");
  const std::string build_dir = (dir / "build/lib").string();
  compile({"-o", (dir / "p").string(), (dir / "p.cpp").string(),
           "-Wl,-rpath,$ORIGIN/../lib:/lib/x86_64-linux-gnu:" + build_dir + ":/opt/held/lib:/opt/linked/lib",
           "-Wl,--enable-new-dtags"});
  std::vector<LayerEntry> entries{{LayerEntry::Type::directory, "opt", {}, {}, 0755, 0, {}},
                                  {LayerEntry::Type::directory, "opt/held", {}, {}, 0755, 0, {}},
                                  {LayerEntry::Type::directory, "opt/held/lib", {}, {}, 0755, 0, {}},
                                  {LayerEntry::Type::symlink, "opt/linked", {}, "held", 0777, 0, {}},
                                  {LayerEntry::Type::file, "usr/local/bin/p", dir / "p", {}, 0755, 0, {}}};
  auto warnings = foreign_search_path_warnings(entries, entries, {});
  ASSERT_TRUE(warnings.has_value()) << warnings.error().message;
  ASSERT_EQ(warnings->size(), 1U);
  EXPECT_EQ(warnings->front().file, "/usr/local/bin/p");
  EXPECT_EQ(warnings->front().text.rfind("/usr/local/bin/p (" + (dir / "p").string() + ") has RUNPATH " + build_dir +
                                             ", a directory the image does not hold",
                                         0),
            0U)
      << warnings->front().text;
}

TEST(RuntimeClosureTest, AStaticProgramGetsNothing) {
  TempDir dir;
  write_file(dir / "s.cpp", "int main() { return 0; }\n");
  compile({"-static", "-o", (dir / "s").string(), (dir / "s.cpp").string()});
  std::vector<LayerEntry> entries{{LayerEntry::Type::file, "usr/local/bin/s", dir / "s", {}, 0755, 0, {}}};
  auto closure = runtime_closure(entries, {});
  ASSERT_TRUE(closure.has_value()) << closure.error().message;
  EXPECT_TRUE(closure->empty());
}

// A sysroot holding the same files as this machine: the closure comes from it, at the same image paths,
// and nothing from this machine; a library the sysroot lacks is missing, not taken from this machine.
TEST(RuntimeClosureTest, ASysrootGivesTheLoaderAndLibrariesAtTheSamePaths) {
  TempDir dir;
  write_file(dir / "d.cpp", "int main() { return 0; }\n");
  compile({"-o", (dir / "d").string(), (dir / "d.cpp").string()});
  std::vector<LayerEntry> entries{{LayerEntry::Type::file, "usr/local/bin/d", dir / "d", {}, 0755, 0, {}}};
  auto host = runtime_closure(entries, {});
  ASSERT_TRUE(host.has_value()) << host.error().message;
  const fs::Path root = dir / "sysroot";
  for (const auto& e : *host) {
    std::filesystem::create_directories((root / e.path).parent_path());
    if (e.type == LayerEntry::Type::symlink) std::filesystem::create_symlink(e.link_target, root / e.path);
    if (e.type == LayerEntry::Type::file) std::filesystem::copy_file(e.source, root / e.path);
  }
  ClosureOptions options;
  options.sysroot = root;
  auto closure = runtime_closure(entries, options);
  ASSERT_TRUE(closure.has_value()) << closure.error().message;
  ASSERT_EQ(closure->size(), host->size());
  for (std::size_t i = 0; i < closure->size(); ++i) {
    const LayerEntry& e = (*closure)[i];
    EXPECT_EQ(e.path, (*host)[i].path);
    if (e.type == LayerEntry::Type::file) {
      EXPECT_EQ(e.source, root / e.path) << e.path;
    }
  }
  auto libc =
      std::find_if(host->begin(), host->end(), [](const LayerEntry& e) { return e.path.ends_with("/libc.so.6"); });
  ASSERT_NE(libc, host->end());
  std::filesystem::remove(root / libc->path);
  auto missing = runtime_closure(entries, options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("needs libc.so.6, which was not found"), std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find(root.string() + "/etc/ld.so.cache"), std::string::npos)
      << missing.error().message;
}

// An arm64 program built with Debian's cross compiler: without --sysroot, its loader and libraries come
// from /usr/aarch64-linux-gnu, at the paths the arm64 loader searches, never from this machine.
TEST(RuntimeClosureTest, AForeignProgramTakesTheCrossPackagesRoot) {
  if (::access("/usr/bin/aarch64-linux-gnu-g++", X_OK) != 0)
    GTEST_SKIP() << "no aarch64-linux-gnu-g++ (scripts/deps installs it)";
  TempDir dir;
  write_file(dir / "a.cpp", "#include <iostream>\nint main() { std::cout << 1; }\n");
  auto run = run_process({"aarch64-linux-gnu-g++", "-o", (dir / "a").string(), (dir / "a.cpp").string()}, {},
                         std::chrono::seconds(120), 1 << 16);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->exit_code, 0) << run->out;
  std::vector<LayerEntry> entries{{LayerEntry::Type::file, "usr/local/bin/a", dir / "a", {}, 0755, 0, {}}};
  auto closure = runtime_closure(entries, {});
  ASSERT_TRUE(closure.has_value()) << closure.error().message;
  std::map<std::string, fs::Path> files;
  for (const auto& e : *closure) {
    if (e.type == LayerEntry::Type::file) files[e.path] = e.source;
  }
  EXPECT_EQ(files["lib/ld-linux-aarch64.so.1"], "/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1");
  EXPECT_EQ(files["lib/libc.so.6"], "/usr/aarch64-linux-gnu/lib/libc.so.6");
  for (const auto& [path, source] : files) {
    EXPECT_TRUE(source.string().starts_with("/usr/aarch64-linux-gnu/")) << path << " from " << source;
    auto elf = read_elf(source);
    ASSERT_TRUE(elf.has_value() && elf->has_value()) << source;
    EXPECT_EQ((*elf)->machine, EM_AARCH64) << source;
  }
}

}  // namespace
}  // namespace arec
