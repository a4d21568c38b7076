#include "oci/machine.hpp"

#include <elf.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace arec {
namespace {

TEST(MachineTest, EachNameOfAMachineLeadsBackToItsRow) {
  std::set<std::string> debian;
  for (const Machine& m : machines()) {
    SCOPED_TRACE(std::string(m.architecture) + "/" + std::string(m.variant));
    EXPECT_TRUE(debian.insert(std::string(m.debian)).second) << "two rows of dpkg architecture " << m.debian;
    EXPECT_EQ(machine_of_platform(Platform{std::string(m.architecture), "linux", std::string(m.variant)}), &m);
    if (!m.uname.empty()) {
      EXPECT_EQ(machine_of_uname(m.uname), &m);
    }
    const Machine* by_elf = machine_of_elf(m.elf_machine, m.elf_class, m.elf_data);
    ASSERT_NE(by_elf, nullptr);
    EXPECT_EQ(by_elf->architecture, m.architecture);
  }
}

TEST(MachineTest, NamesOfTheSameMachineAgree) {
  const Machine* x86 = machine_of_elf(EM_X86_64, ELFCLASS64, ELFDATA2LSB);
  ASSERT_NE(x86, nullptr);
  EXPECT_EQ(x86->architecture, "amd64");
  EXPECT_EQ(x86->triplet, "x86_64-linux-gnu");
  EXPECT_EQ(x86->debian, "amd64");
  EXPECT_EQ(machine_of_uname("arm64"), machine_of_uname("aarch64"));
  EXPECT_EQ(machine_of_uname("i386")->architecture, "386");
  EXPECT_EQ(machine_of_uname("armv7l")->debian, "armhf");
  // Byte order tells ppc64le from ppc64; arm's variant tells Debian's armel from armhf.
  EXPECT_EQ(machine_of_elf(EM_PPC64, ELFCLASS64, ELFDATA2LSB)->architecture, "ppc64le");
  EXPECT_EQ(machine_of_elf(EM_PPC64, ELFCLASS64, ELFDATA2MSB)->triplet, "powerpc64-linux-gnu");
  EXPECT_EQ(machine_of_elf(EM_ARM, ELFCLASS32, ELFDATA2LSB)->debian, "armhf");
  EXPECT_EQ(machine_of_platform({"arm", "linux", "v5"})->debian, "armel");
  EXPECT_EQ(machine_of_platform({"arm", "linux", ""})->debian, "armhf");
  EXPECT_EQ(machine_of_platform({"arm64", "linux", "v8"})->debian, "arm64");
}

TEST(MachineTest, UnknownMachinesHaveNoRow) {
  EXPECT_EQ(machine_of_elf(EM_X86_64, ELFCLASS32, ELFDATA2LSB), nullptr);  // x32 is not a platform of OCI
  EXPECT_EQ(machine_of_elf(EM_SPARCV9, ELFCLASS64, ELFDATA2MSB), nullptr);
  EXPECT_EQ(machine_of_platform({"wasm", "wasip1", ""}), nullptr);
  EXPECT_EQ(machine_of_uname(""), nullptr);
  EXPECT_EQ(machine_of_uname("mips64"), nullptr);  // either byte order
}

}  // namespace
}  // namespace arec
