// What the dynamic loader reads from an ELF file, through elfutils' libelf.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/error.hpp"
#include "recorder/fs.hpp"

namespace arec {

struct ElfFile {
  int elf_class = 0;     // ELFCLASS32 or ELFCLASS64
  int machine = 0;       // e_machine (EM_X86_64, ...)
  bool executable = false;  // ET_EXEC, or a position-independent executable (ET_DYN with PT_INTERP)
  std::string interpreter;  // PT_INTERP: the dynamic loader, empty for static programs and libraries
  std::string soname;       // DT_SONAME
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::optional<std::string> rpath;    // DT_RPATH as written (':'-separated)
  std::optional<std::string> runpath;  // DT_RUNPATH
  // DT_VERNEED: for each library file name (as in DT_NEEDED), the symbol versions needed from it.
  std::map<std::string, std::vector<std::string>> version_needs;
  // DT_VERDEF: the versions this file defines, without the file's own base name entry.
  std::vector<std::string> version_defs;

  bool dynamic() const { return !interpreter.empty() || !needed.empty(); }
};

// Reads `path`; nothing when it is not an ELF file (a script, a data file). A file that starts like ELF
// but cannot be read as one is an error naming it.
Result<std::optional<ElfFile>> read_elf(const fs::Path& path);
// The same for bytes in memory (a file of a base image's layer); `what` names it in errors.
Result<std::optional<ElfFile>> read_elf(std::span<const std::byte> bytes, std::string_view what);

}  // namespace arec
