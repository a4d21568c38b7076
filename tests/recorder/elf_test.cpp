#include "recorder/elf.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace arec {
namespace {

using test::TempDir;

ElfFile elf_of(int elf_class, int machine, int data = ELFDATA2LSB, int arm_cpu_arch = -1) {
  ElfFile f;
  f.elf_class = elf_class;
  f.machine = machine;
  f.data = data;
  f.arm_cpu_arch = arm_cpu_arch;
  return f;
}

std::string platform_of(const ElfFile& f) {
  auto p = elf_platform(f);
  return p ? platform_text(*p) : "none";
}

// Writes an executable ELF file of `elf_class` and `machine` with libelf; with `attributes`, it gets an
// ARM attributes section holding those bytes, as the ARM toolchains write it.
void write_elf(const fs::Path& path, int elf_class, int machine, const std::string& attributes = {},
               int type = ET_EXEC) {
  elf_version(EV_CURRENT);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0755);
  ASSERT_GE(fd, 0);
  Elf* elf = elf_begin(fd, ELF_C_WRITE, nullptr);
  ASSERT_NE(elf, nullptr) << elf_errmsg(-1);
  ASSERT_NE(gelf_newehdr(elf, elf_class), nullptr) << elf_errmsg(-1);
  GElf_Ehdr ehdr;
  ASSERT_NE(gelf_getehdr(elf, &ehdr), nullptr);
  ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
  ehdr.e_type = static_cast<GElf_Half>(type);
  ehdr.e_machine = static_cast<GElf_Half>(machine);
  ehdr.e_version = EV_CURRENT;
  ASSERT_NE(gelf_update_ehdr(elf, &ehdr), 0) << elf_errmsg(-1);
  if (!attributes.empty()) {
    Elf_Scn* scn = elf_newscn(elf);
    Elf_Data* data = elf_newdata(scn);
    data->d_buf = const_cast<char*>(attributes.data());
    data->d_size = attributes.size();
    data->d_type = ELF_T_BYTE;
    data->d_align = 1;
    GElf_Shdr shdr;
    ASSERT_NE(gelf_getshdr(scn, &shdr), nullptr);
    shdr.sh_type = SHT_ARM_ATTRIBUTES;
    shdr.sh_addralign = 1;
    ASSERT_NE(gelf_update_shdr(scn, &shdr), 0) << elf_errmsg(-1);
  }
  ASSERT_GE(elf_update(elf, ELF_C_WRITE), 0) << elf_errmsg(-1);
  elf_end(elf);
  ::close(fd);
}

// The "aeabi" attributes of a file built for `cpu_name` with Tag_CPU_arch `arch` (little-endian lengths).
std::string arm_attributes(const std::string& cpu_name, char arch) {
  std::string tags;
  tags += '\x05' + cpu_name + '\0';  // Tag_CPU_name
  tags += '\x06';                    // Tag_CPU_arch
  tags += arch;
  tags +=
      "\x07"
      "A";  // Tag_CPU_arch_profile: application
  auto le32 = [](std::size_t n) {
    return std::string{static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                       static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  };
  const std::string file = '\x01' + le32(5 + tags.size()) + tags;  // Tag_File, its size, its tags
  const std::string vendor = std::string("aeabi") + '\0' + file;
  return "A" + le32(4 + vendor.size()) + vendor;
}

TEST(ElfPlatform, MachinesMapToTheirOciNames) {
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_X86_64)), "linux/amd64");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_AARCH64)), "linux/arm64");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_386)), "linux/386");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_RISCV)), "linux/riscv64");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_PPC64)), "linux/ppc64le");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_PPC64, ELFDATA2MSB)), "linux/ppc64");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_S390, ELFDATA2MSB)), "linux/s390x");
}

TEST(ElfPlatform, ArmVariantComesFromTagCpuArch) {
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2LSB, 10)), "linux/arm/v7");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2LSB, 6)), "linux/arm/v6");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2LSB, 9)), "linux/arm/v6");  // v6K
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2LSB, 4)), "linux/arm/v5");  // v5TE
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2LSB, 14)), "linux/arm/v8");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM)), "linux/arm");  // no attributes: no variant
}

TEST(ElfPlatform, ClassOrByteOrderAMachineDoesNotHaveIsNoPlatform) {
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_X86_64)), "none");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_AARCH64, ELFDATA2MSB)), "none");  // big-endian arm64
  EXPECT_EQ(platform_of(elf_of(ELFCLASS32, EM_ARM, ELFDATA2MSB, 10)), "none");
  EXPECT_EQ(platform_of(elf_of(ELFCLASS64, EM_SPARCV9, ELFDATA2MSB)), "none");
}

TEST(ElfPlatform, ThisProgramIsOfThisMachinesPlatform) {
  auto self = read_elf(fs::Path("/proc/self/exe"));
  ASSERT_TRUE(self.has_value()) << self.error().message;
  ASSERT_TRUE(self->has_value());
  auto platform = elf_platform(**self);
  ASSERT_TRUE(platform.has_value());
  EXPECT_EQ(platform->os + "/" + platform->architecture, host_platform().os + "/" + host_platform().architecture);
}

TEST(ElfPlatform, ArmAttributesOfAFileGiveItsVariant) {
  TempDir dir;
  write_elf(dir / "v7", ELFCLASS32, EM_ARM, arm_attributes("7-A", 10));
  write_elf(dir / "v6", ELFCLASS32, EM_ARM, arm_attributes("ARM1176JZF-S", 9));
  write_elf(dir / "bare", ELFCLASS32, EM_ARM);
  for (const auto& [name, arch, platform] :
       {std::tuple{"v7", 10, "linux/arm/v7"}, {"v6", 9, "linux/arm/v6"}, {"bare", -1, "linux/arm"}}) {
    auto file = read_elf(dir / name);
    ASSERT_TRUE(file.has_value()) << file.error().message;
    ASSERT_TRUE(file->has_value()) << name;
    EXPECT_EQ((*file)->arm_cpu_arch, arch) << name;
    EXPECT_EQ(platform_of(**file), platform) << name;
  }
}

TEST(ElfPlatform, DamagedArmAttributesGiveNoVariant) {
  TempDir dir;
  const std::string whole = arm_attributes("7-A", 10);
  // Cut inside the Tag_File subsection, a length past the end, another format version.
  for (const std::string& bytes : {whole.substr(0, whole.size() - 3),
                                   std::string("A\xff\xff\x00\x00"
                                               "aeabi\0",
                                               12),
                                   "B" + whole.substr(1)}) {
    write_elf(dir / "arm", ELFCLASS32, EM_ARM, bytes);
    auto file = read_elf(dir / "arm");
    ASSERT_TRUE(file.has_value()) << file.error().message;
    ASSERT_TRUE(file->has_value());
    EXPECT_EQ((*file)->arm_cpu_arch, -1);
    EXPECT_EQ(platform_of(**file), "linux/arm");
  }
}

TEST(ElfPlatform, ParsesAndSpellsPlatforms) {
  for (const char* text : {"linux/arm64", "linux/arm/v7", "linux/amd64", "linux/riscv64"}) {
    auto p = parse_platform(text);
    ASSERT_TRUE(p.has_value()) << text;
    EXPECT_EQ(platform_text(*p), text);
  }
  auto v7 = parse_platform("linux/arm/v7");
  ASSERT_TRUE(v7.has_value());
  EXPECT_EQ(v7->os, "linux");
  EXPECT_EQ(v7->architecture, "arm");
  EXPECT_EQ(v7->variant, "v7");
  for (const char* bad : {"linux", "Linux/AMD64", "linux//v7", "linux/arm/v7/x", "/arm64", ""}) {
    auto p = parse_platform(bad);
    ASSERT_FALSE(p.has_value()) << bad;
    EXPECT_EQ(p.error().kind, ErrorKind::input) << bad;
    EXPECT_NE(p.error().message.find("--platform"), std::string::npos) << p.error().message;
  }
}

LayerEntry file_entry(const fs::Path& source, const std::string& path) {
  return {LayerEntry::Type::file,
          path,
          source,
          {},
          0755,
          static_cast<std::int64_t>(std::filesystem::file_size(source)),
          {}};
}

TEST(ElfPlatform, InputsHaveOnePlatform) {
  TempDir dir;
  write_elf(dir / "arm64", ELFCLASS64, EM_AARCH64);
  write_elf(dir / "amd64", ELFCLASS64, EM_X86_64);
  test::write_file(dir / "data", "not ELF\n");
  const auto arm64 = file_entry(dir / "arm64", "usr/local/bin/a");
  const auto amd64 = file_entry(dir / "amd64", "usr/local/bin/b");
  const auto data = file_entry(dir / "data", "etc/data");

  auto one = inputs_platform({data, arm64}, std::nullopt);
  ASSERT_TRUE(one.has_value()) << one.error().message;
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ(platform_text(**one), "linux/arm64");

  auto mixed = inputs_platform({arm64, data, amd64}, std::nullopt);
  ASSERT_FALSE(mixed.has_value());
  EXPECT_EQ(mixed.error().kind, ErrorKind::input);
  EXPECT_NE(mixed.error().message.find("/usr/local/bin/a"), std::string::npos) << mixed.error().message;
  EXPECT_NE(mixed.error().message.find("/usr/local/bin/b"), std::string::npos) << mixed.error().message;

  auto contradicted = inputs_platform({arm64}, Platform{"amd64", "linux", ""});
  ASSERT_FALSE(contradicted.has_value());
  EXPECT_NE(contradicted.error().message.find("--platform linux/amd64 contradicts /usr/local/bin/a"), std::string::npos)
      << contradicted.error().message;

  auto variant = inputs_platform({arm64}, Platform{"arm64", "linux", "v8"});
  ASSERT_TRUE(variant.has_value()) << variant.error().message;
  EXPECT_EQ(platform_text(**variant), "linux/arm64/v8");

  // A program of a machine arec has no name for is refused; an object file of one (eBPF) is data.
  write_elf(dir / "sparc", ELFCLASS64, EM_SPARCV9);
  write_elf(dir / "bpf.o", ELFCLASS64, EM_BPF, {}, ET_REL);
  auto unknown = inputs_platform({arm64, file_entry(dir / "sparc", "usr/local/bin/s")}, std::nullopt);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("/usr/local/bin/s"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("which arec has no platform for"), std::string::npos)
      << unknown.error().message;
  auto bpf = inputs_platform({arm64, file_entry(dir / "bpf.o", "usr/lib/bpf/probe.o")}, std::nullopt);
  ASSERT_TRUE(bpf.has_value()) << bpf.error().message;
  EXPECT_EQ(platform_text(**bpf), "linux/arm64");

  auto none = inputs_platform({data}, std::nullopt);
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());  // the base's platform or this machine's
  auto asked = inputs_platform({data}, Platform{"arm", "linux", "v7"});
  ASSERT_TRUE(asked.has_value());
  EXPECT_EQ(platform_text(**asked), "linux/arm/v7");
}

}  // namespace
}  // namespace arec

namespace arec {
namespace {

// What `arec diff` reads of an ELF file, on a real one: this test program, built by the project's compiler.
TEST(ElfDetails, ReadsBuildIdCompilerAndSectionsOfARealProgram) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto details = read_elf_details(std::as_bytes(std::span(bytes.data(), bytes.size())), "self");
  ASSERT_TRUE(details.has_value()) << details.error().message;
  ASSERT_TRUE(details->has_value());
  const ElfDetails& d = **details;
  EXPECT_EQ(40u, d.build_id.size()) << "a SHA-1 build-id in hex, as GNU ld writes by default on Debian";
  ASSERT_FALSE(d.comment.empty());
  // GCC's start files are linked into every program on Debian, whichever compiler built the rest.
  EXPECT_TRUE(std::any_of(d.comment.begin(), d.comment.end(), [](const std::string& c) {
    return c.find("GCC: ") != std::string::npos;
  })) << d.comment.front();
  const auto text =
      std::find_if(d.sections.begin(), d.sections.end(), [](const ElfSection& s) { return s.name == ".text"; });
  ASSERT_NE(d.sections.end(), text);
  EXPECT_EQ(64u, text->digest.size());
  EXPECT_FALSE(d.file.needed.empty());
  EXPECT_TRUE(d.strings.contains(".rodata"));
}

TEST(ElfDetails, NotElfIsNothingAndACutFileIsAnErrorNamingIt) {
  const std::string text = "#!/bin/sh\necho hi\n";
  auto none = read_elf_details(std::as_bytes(std::span(text.data(), text.size())), "script");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(200);  // the ELF header, and section headers beyond the end
  auto cut = read_elf_details(std::as_bytes(std::span(bytes.data(), bytes.size())), "cut.elf");
  ASSERT_FALSE(cut.has_value());
  EXPECT_TRUE(cut.error().message.starts_with("cut.elf")) << cut.error().message;
}

}  // namespace
}  // namespace arec
