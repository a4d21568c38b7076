#include "recorder/elf.hpp"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <memory>
#include <mutex>

namespace arec {

namespace {

struct ElfDeleter {
  void operator()(Elf* e) const { elf_end(e); }
};
using ElfHandle = std::unique_ptr<Elf, ElfDeleter>;

Status elf_failure(std::string_view what, std::string_view doing) {
  return fail_input(std::string(what) + ": " + std::string(doing) + ": " + elf_errmsg(-1));
}

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string string_at(Elf* elf, std::size_t section, std::size_t offset) {
  const char* s = elf_strptr(elf, section, offset);
  return s == nullptr ? std::string() : std::string(s);
}

Status read_dynamic(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfFile& out, std::string_view what) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return elf_failure(what, "reading the dynamic section");
  const std::size_t count = shdr.sh_entsize == 0 ? 0 : shdr.sh_size / shdr.sh_entsize;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr) return elf_failure(what, "reading the dynamic section");
    switch (dyn.d_tag) {
      case DT_NEEDED: out.needed.push_back(string_at(elf, shdr.sh_link, dyn.d_un.d_val)); break;
      case DT_SONAME: out.soname = string_at(elf, shdr.sh_link, dyn.d_un.d_val); break;
      case DT_RPATH: out.rpath = string_at(elf, shdr.sh_link, dyn.d_un.d_val); break;
      case DT_RUNPATH: out.runpath = string_at(elf, shdr.sh_link, dyn.d_un.d_val); break;
      default: break;
    }
    if (dyn.d_tag == DT_NULL) break;
  }
  return {};
}

Status read_verneed(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfFile& out, std::string_view what) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return elf_failure(what, "reading the version needs");
  std::size_t offset = 0;
  for (std::size_t n = 0; n < shdr.sh_info; ++n) {
    GElf_Verneed need;
    if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr) return elf_failure(what, "reading the version needs");
    auto& versions = out.version_needs[string_at(elf, shdr.sh_link, need.vn_file)];
    std::size_t aux_offset = offset + need.vn_aux;
    for (std::size_t a = 0; a < need.vn_cnt; ++a) {
      GElf_Vernaux aux;
      if (gelf_getvernaux(data, static_cast<int>(aux_offset), &aux) == nullptr) {
        return elf_failure(what, "reading the version needs");
      }
      versions.push_back(string_at(elf, shdr.sh_link, aux.vna_name));
      if (aux.vna_next == 0) break;
      aux_offset += aux.vna_next;
    }
    if (need.vn_next == 0) break;
    offset += need.vn_next;
  }
  return {};
}

Status read_verdef(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfFile& out, std::string_view what) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return elf_failure(what, "reading the version definitions");
  std::size_t offset = 0;
  for (std::size_t n = 0; n < shdr.sh_info; ++n) {
    GElf_Verdef def;
    if (gelf_getverdef(data, static_cast<int>(offset), &def) == nullptr) {
      return elf_failure(what, "reading the version definitions");
    }
    GElf_Verdaux aux;
    // The first auxiliary entry names the version; the others name its parents.
    if (def.vd_cnt > 0 && (def.vd_flags & VER_FLG_BASE) == 0 &&
        gelf_getverdaux(data, static_cast<int>(offset + def.vd_aux), &aux) != nullptr) {
      out.version_defs.push_back(string_at(elf, shdr.sh_link, aux.vda_name));
    }
    if (def.vd_next == 0) break;
    offset += def.vd_next;
  }
  return {};
}

Result<std::optional<ElfFile>> read_handle(Elf* elf, std::string_view what) {
  if (elf == nullptr) return fail(elf_failure(what, "opening as ELF").error());
  if (elf_kind(elf) != ELF_K_ELF) return std::optional<ElfFile>();
  ElfFile out;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return fail(elf_failure(what, "reading the ELF header").error());
  out.elf_class = ehdr.e_ident[EI_CLASS];
  out.machine = ehdr.e_machine;

  std::size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return fail(elf_failure(what, "reading the program headers").error());
  std::size_t raw_size = 0;
  const char* raw = elf_rawfile(elf, &raw_size);
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr) {
      return fail(elf_failure(what, "reading the program headers").error());
    }
    if (phdr.p_type != PT_INTERP) continue;
    if (raw == nullptr || phdr.p_offset >= raw_size || phdr.p_filesz > raw_size - phdr.p_offset) {
      return fail_input(std::string(what) + ": PT_INTERP lies outside the file");
    }
    out.interpreter.assign(raw + phdr.p_offset, ::strnlen(raw + phdr.p_offset, phdr.p_filesz));
  }
  out.executable = ehdr.e_type == ET_EXEC || (ehdr.e_type == ET_DYN && !out.interpreter.empty());

  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return fail(elf_failure(what, "reading the section headers").error());
    Status s;
    if (shdr.sh_type == SHT_DYNAMIC) s = read_dynamic(elf, scn, shdr, out, what);
    if (shdr.sh_type == SHT_GNU_verneed) s = read_verneed(elf, scn, shdr, out, what);
    if (shdr.sh_type == SHT_GNU_verdef) s = read_verdef(elf, scn, shdr, out, what);
    if (!s) return fail(s.error());
  }
  return std::optional<ElfFile>(std::move(out));
}

}  // namespace

Result<std::optional<ElfFile>> read_elf(const fs::Path& path) {
  init_libelf();
  const std::string what = "\"" + path.string() + "\"";
  auto fd = fs::open_read(path);
  if (!fd) return fail(fd.error());
  char magic[4] = {};
  if (::pread(fd->get(), magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic) ||
      std::memcmp(magic, ELFMAG, SELFMAG) != 0) {
    return std::optional<ElfFile>();
  }
  ElfHandle elf(elf_begin(fd->get(), ELF_C_READ_MMAP, nullptr));
  return read_handle(elf.get(), what);
}

Result<std::optional<ElfFile>> read_elf(std::span<const std::byte> bytes, std::string_view what) {
  init_libelf();
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) return std::optional<ElfFile>();
  // libelf takes a mutable pointer but only reads in ELF_C_READ mode.
  ElfHandle elf(elf_memory(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), bytes.size()));
  return read_handle(elf.get(), what);
}

}  // namespace arec
