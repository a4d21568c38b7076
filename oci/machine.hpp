// The machines arec knows, one row each: how an ELF file names it, how OCI, the kernel, the dynamic
// loader and Debian do. Every translation between those names reads this table (elf_platform, the
// loader's defaults, host_platform, the dpkg architecture of a package), so a machine is added once.
#pragma once

#include <span>
#include <string_view>

#include "oci/oci.hpp"

namespace arec {

struct Machine {
  int elf_machine;                // e_machine (EM_*)
  int elf_class;                  // ELFCLASS32 or ELFCLASS64
  int elf_data;                   // ELFDATA2LSB or ELFDATA2MSB
  std::string_view architecture;  // OCI platform.architecture (GOARCH)
  std::string_view variant;       // OCI platform.variant a row stands for; empty: none
  std::string_view uname;         // `uname -m` on it
  std::string_view triplet;       // the multiarch tuple: /usr/lib/TRIPLET
  std::string_view hwcap;         // what the loader's $PLATFORM expands to
  std::string_view debian;        // the dpkg architecture of its packages
};

std::span<const Machine> machines();

// The row of an ELF header's machine, class and byte order; null for one arec does not know. For
// 32-bit ARM it is the hard-float row: the variant comes from the file's attributes (elf.cpp).
const Machine* machine_of_elf(int elf_machine, int elf_class, int elf_data);
// The row of an OCI platform: its architecture, and the variant when rows differ by it (arm v5 is
// Debian's armel, any other arm its armhf); null for an architecture arec does not know.
const Machine* machine_of_platform(const Platform& platform);
// The row of a `uname -m` (aliases such as arm64, i386 and armv7* included); null when unknown.
const Machine* machine_of_uname(std::string_view uname);

}  // namespace arec
