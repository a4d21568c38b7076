#include "oci/machine.hpp"

#include <elf.h>

#include <array>

namespace arec {

namespace {

// The first row of an ELF machine is the one machine_of_elf gives (arm: armhf). A MIPS kernel says
// mips64 of either byte order, so that row has no uname.
constexpr std::array k_machines{
    Machine{EM_X86_64, ELFCLASS64, ELFDATA2LSB, "amd64", "", "x86_64", "x86_64-linux-gnu", "x86_64", "amd64"},
    Machine{EM_AARCH64, ELFCLASS64, ELFDATA2LSB, "arm64", "", "aarch64", "aarch64-linux-gnu", "aarch64", "arm64"},
    Machine{EM_386, ELFCLASS32, ELFDATA2LSB, "386", "", "i686", "i386-linux-gnu", "i686", "i386"},
    Machine{EM_ARM, ELFCLASS32, ELFDATA2LSB, "arm", "v7", "armv7l", "arm-linux-gnueabihf", "v7l", "armhf"},
    Machine{EM_ARM, ELFCLASS32, ELFDATA2LSB, "arm", "v5", "armv5tel", "arm-linux-gnueabi", "v5l", "armel"},
    Machine{EM_RISCV, ELFCLASS64, ELFDATA2LSB, "riscv64", "", "riscv64", "riscv64-linux-gnu", "riscv64", "riscv64"},
    Machine{EM_PPC64, ELFCLASS64, ELFDATA2LSB, "ppc64le", "", "ppc64le", "powerpc64le-linux-gnu", "power8", "ppc64el"},
    Machine{EM_PPC64, ELFCLASS64, ELFDATA2MSB, "ppc64", "", "ppc64", "powerpc64-linux-gnu", "power8", "ppc64"},
    Machine{EM_S390, ELFCLASS64, ELFDATA2MSB, "s390x", "", "s390x", "s390x-linux-gnu", "z196", "s390x"},
    Machine{EM_MIPS, ELFCLASS64, ELFDATA2LSB, "mips64le", "", "", "mips64el-linux-gnuabi64", "", "mips64el"},
};

}  // namespace

std::span<const Machine> machines() { return k_machines; }

const Machine* machine_of_elf(int elf_machine, int elf_class, int elf_data) {
  for (const Machine& m : k_machines) {
    if (m.elf_machine == elf_machine && m.elf_class == elf_class && m.elf_data == elf_data) return &m;
  }
  return nullptr;
}

const Machine* machine_of_platform(const Platform& platform) {
  const Machine* first = nullptr;
  for (const Machine& m : k_machines) {
    if (m.architecture != platform.architecture) continue;
    if (!platform.variant.empty() && m.variant == platform.variant) return &m;
    if (!first) first = &m;
  }
  return first;
}

const Machine* machine_of_uname(std::string_view uname) {
  if (uname.empty()) return nullptr;
  if (uname == "arm64") uname = "aarch64";
  if (uname == "i386") uname = "i686";
  if (uname.starts_with("armv7")) uname = "armv7l";
  for (const Machine& m : k_machines) {
    if (m.uname == uname) return &m;
  }
  return nullptr;
}

}  // namespace arec
