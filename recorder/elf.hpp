// What the dynamic loader reads from an ELF file, through elfutils' libelf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oci/oci.hpp"
#include "recorder/layer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec {

struct ElfFile {
  int elf_class = 0;  // ELFCLASS32 or ELFCLASS64
  int machine = 0;    // e_machine (EM_X86_64, ...)
  int data = 0;       // ELFDATA2LSB or ELFDATA2MSB
  int type = 0;       // e_type (ET_EXEC, ET_DYN, ET_REL, ...)
  // Tag_CPU_arch of the ARM attributes section (6 = v6, 10 = v7, ...); -1 when the file has none.
  int arm_cpu_arch = -1;
  bool executable = false;             // ET_EXEC, or a position-independent executable (ET_DYN with PT_INTERP)
  std::string interpreter;             // PT_INTERP: the dynamic loader, empty for static programs and libraries
  std::string soname;                  // DT_SONAME
  std::vector<std::string> needed;     // DT_NEEDED, in order
  std::optional<std::string> rpath;    // DT_RPATH as written (':'-separated)
  std::optional<std::string> runpath;  // DT_RUNPATH
  // DT_VERNEED: for each library file name (as in DT_NEEDED), the symbol versions needed from it.
  std::map<std::string, std::vector<std::string>> version_needs;
  // DT_VERDEF: the versions this file defines, without the file's own base name entry.
  std::vector<std::string> version_defs;
  // An undefined dynamic symbol `dlopen`: the file loads libraries by name at run time (plugins), which
  // no DT_NEEDED names.
  bool calls_dlopen = false;

  bool dynamic() const { return !interpreter.empty() || !needed.empty(); }
};

// The OCI platform (GOOS/GOARCH names) a file of this class, machine and byte order runs on: x86-64 ->
// linux/amd64, AArch64 -> linux/arm64, ARM -> linux/arm with the variant of Tag_CPU_arch (v5, v6, v7,
// v8), ... Nothing for a machine arec has no name for.
std::optional<Platform> elf_platform(const ElfFile& file);

// The platform of a record of `entries`: the one platform of its ELF files, with the variant `requested`
// adds; with no ELF file, `requested` (nothing when neither says: the base's or this machine's). Refused,
// naming the files: ELF files of two platforms, a program or library of a machine arec has no platform
// for (an object file of one, such as eBPF, is data), a `requested` platform the files contradict.
Result<std::optional<Platform>> inputs_platform(const std::vector<LayerEntry>& entries,
                                                const std::optional<Platform>& requested);

// What `arec diff` tells apart in two builds of one file, beyond what the loader reads: the build-id,
// the compilers that wrote it (`.comment`), and each section's bytes by digest, with the strings of the
// sections where a build's inputs leave text (`.rodata`, `.comment`, `.debug_str`, `.debug_line_str`).
struct ElfSection {
  std::string name;
  std::uint64_t size = 0;  // sh_size; a SHT_NOBITS section (.bss) holds no bytes and has no digest
  std::string digest;      // sha256 hex of its bytes in the file, empty for SHT_NOBITS
};
struct ElfDetails {
  ElfFile file;
  std::string build_id;              // NT_GNU_BUILD_ID in hex, empty when there is none
  std::vector<std::string> comment;  // .comment's strings ("GCC: (Debian 12.2.0-14) 12.2.0")
  std::vector<ElfSection> sections;  // in the order of the section headers
  // Per section of k_string_sections: its printable strings (of 4 or more characters, as strings(1)
  // finds them, each cut at k_max_string_bytes), each once, sorted; at most k_max_section_strings.
  std::map<std::string, std::vector<std::string>> strings;
  std::vector<std::string> truncated_strings;  // sections whose strings were more than that
  // GCC's DW_AT_producer strings of .debug_str ("GNU C++17 12.2.0 -mtune=generic -g -O2"), each once:
  // the compiler and the flags it was given (at most k_max_producers).
  std::vector<std::string> producers;
};
inline constexpr std::size_t k_max_section_strings = 4096;
inline constexpr std::size_t k_max_string_bytes = 512;
inline constexpr std::size_t k_max_producers = 16;
// The most section headers read_elf_details reads: libelf keeps a descriptor for each, so a file of
// more (a few bytes a header on disk) would take memory without bound. Linked programs and libraries
// have a few dozen.
inline constexpr std::size_t k_max_elf_sections = 4096;
bool is_string_section(std::string_view name);

// Reads the details of the ELF file `bytes`; nothing when it is not one, an error naming `what` when it
// starts like one but cannot be read, or has more than k_max_elf_sections section headers. Every
// offset is checked against the bytes given.
Result<std::optional<ElfDetails>> read_elf_details(std::span<const std::byte> bytes, std::string_view what);

// Reads `path`; nothing when it is not an ELF file (a script, a data file). A file that starts like ELF
// but cannot be read as one is an error naming it.
Result<std::optional<ElfFile>> read_elf(const fs::Path& path);
// The same for bytes in memory (a file of a base image's layer); `what` names it in errors.
Result<std::optional<ElfFile>> read_elf(std::span<const std::byte> bytes, std::string_view what);

}  // namespace arec
