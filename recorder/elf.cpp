#include "recorder/elf.hpp"

#include <gelf.h>
#include <libelf.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <set>

#include "oci/digest.hpp"
#include "oci/machine.hpp"

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
    if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr)
      return elf_failure(what, "reading the dynamic section");
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
    if (gelf_getverneed(data, static_cast<int>(offset), &need) == nullptr)
      return elf_failure(what, "reading the version needs");
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

// Whether the dynamic symbol table `dlopen` leaves undefined: the file calls it, from whichever library.
Status read_dynsym(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr, ElfFile& out, std::string_view what) {
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return elf_failure(what, "reading the dynamic symbols");
  const std::size_t count = shdr.sh_entsize == 0 ? 0 : shdr.sh_size / shdr.sh_entsize;
  for (std::size_t i = 0; i < count && !out.calls_dlopen; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
      return elf_failure(what, "reading the dynamic symbols");
    if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
    const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    out.calls_dlopen = name != nullptr && std::string_view(name) == "dlopen";
  }
  return {};
}

// Reads an unsigned LEB128 number of a build attribute; nothing when the data ends inside it.
std::optional<std::uint64_t> read_uleb(std::span<const unsigned char> data, std::size_t& at) {
  std::uint64_t value = 0;
  for (unsigned shift = 0; at < data.size() && shift < 64; shift += 7) {
    const unsigned char byte = data[at++];
    value |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80u) == 0) return value;
  }
  return std::nullopt;
}

// Tag_CPU_arch of the "aeabi" file attributes, in the build attributes format of the ARM ABI addenda
// (section "Build Attributes"): 'A', then vendor subsections of [length, name, Tag_File, size, tags].
// libelf hands the section's bytes over as they are; their layout is the ABI's, not ELF's. -1 when absent.
int arm_cpu_arch(std::span<const unsigned char> data, int encoding) {
  constexpr std::uint64_t k_tag_file = 1, k_tag_cpu_arch = 6, k_tag_compatibility = 32;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      const std::size_t shift = encoding == ELFDATA2MSB ? 8 * (3 - i) : 8 * i;
      v |= std::uint32_t{data[at + i]} << shift;
    }
    return v;
  };
  if (data.empty() || data[0] != 'A') return -1;
  std::size_t at = 1;
  while (at + 4 <= data.size()) {
    const std::uint32_t length = u32(at);
    if (length < 4 || length > data.size() - at) return -1;
    const std::size_t end = at + length;
    std::size_t pos = at + 4;
    const auto name_end =
        std::find(data.begin() + static_cast<std::ptrdiff_t>(pos), data.begin() + static_cast<std::ptrdiff_t>(end), 0);
    const std::string vendor(data.begin() + static_cast<std::ptrdiff_t>(pos), name_end);
    pos = static_cast<std::size_t>(name_end - data.begin()) + 1;
    while (vendor == "aeabi" && pos + 5 <= end) {
      const std::uint64_t scope = data[pos];
      const std::uint32_t size = u32(pos + 1);
      if (size < 5 || size > end - pos) return -1;
      const std::size_t scope_end = pos + size;
      if (scope == k_tag_file) {
        auto attributes = data.subspan(0, scope_end);
        std::size_t a = pos + 5;
        while (a < scope_end) {
          auto tag = read_uleb(attributes, a);
          if (!tag) return -1;
          // Tags 4, 5 and 67 and odd tags above 32 are strings; Tag_compatibility is a number and a string.
          const bool text = *tag == 4 || *tag == 5 || *tag == 67 || (*tag > k_tag_compatibility && (*tag & 1) != 0);
          if (*tag == k_tag_compatibility && !read_uleb(attributes, a)) return -1;
          if (text || *tag == k_tag_compatibility) {
            while (a < scope_end && attributes[a] != 0) ++a;
            ++a;
            continue;
          }
          auto value = read_uleb(attributes, a);
          if (!value) return -1;
          if (*tag == k_tag_cpu_arch) return static_cast<int>(*value);
        }
      }
      pos = scope_end;
    }
    at = end;
  }
  return -1;
}

Result<std::optional<ElfFile>> read_handle(Elf* elf, std::string_view what) {
  if (elf == nullptr) return fail(elf_failure(what, "opening as ELF").error());
  if (elf_kind(elf) != ELF_K_ELF) return std::optional<ElfFile>();
  ElfFile out;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) return fail(elf_failure(what, "reading the ELF header").error());
  out.elf_class = ehdr.e_ident[EI_CLASS];
  out.machine = ehdr.e_machine;
  out.data = ehdr.e_ident[EI_DATA];
  out.type = ehdr.e_type;

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
    if (shdr.sh_type == SHT_DYNSYM) s = read_dynsym(elf, scn, shdr, out, what);
    if (shdr.sh_type == SHT_ARM_ATTRIBUTES && out.machine == EM_ARM) {
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data == nullptr) return fail(elf_failure(what, "reading the ARM attributes").error());
      out.arm_cpu_arch = arm_cpu_arch({static_cast<const unsigned char*>(data->d_buf), data->d_size}, out.data);
    }
    if (!s) return fail(s.error());
  }
  return std::optional<ElfFile>(std::move(out));
}

// The printable runs of at least four characters of `bytes`, as strings(1) finds them (each cut at
// k_max_string_bytes), into `out`, and GCC's DW_AT_producer strings among them into `producers`;
// false when there were more than k_max_section_strings.
bool add_strings(std::span<const unsigned char> bytes, std::set<std::string>& out,
                 std::vector<std::string>& producers) {
  std::size_t start = 0;
  bool complete = true;
  for (std::size_t i = 0; i <= bytes.size(); ++i) {
    const bool printable = i < bytes.size() && (std::isprint(bytes[i]) != 0 || bytes[i] == '\t');
    if (printable) continue;
    if (i - start >= 4) {
      const std::string_view run(reinterpret_cast<const char*>(bytes.data()) + start, i - start);
      if (run.starts_with("GNU ") && run.find(" -") != std::string_view::npos && producers.size() < k_max_producers &&
          std::ranges::find(producers, run.substr(0, k_max_string_bytes)) == producers.end()) {
        producers.emplace_back(run.substr(0, k_max_string_bytes));
      }
      if (complete) {
        std::string cut(run.substr(0, k_max_string_bytes));
        if (out.size() < k_max_section_strings) {
          out.insert(std::move(cut));
        } else if (!out.contains(cut)) {
          complete = false;
        }
      }
    }
    start = i + 1;
  }
  return complete;
}

// The number of section headers the ELF header of `bytes` announces, read before libelf is given the
// file: e_shnum, or for a file of more than 0xff00 (e_shnum 0 with headers) more than arec reads.
std::size_t announced_sections(std::span<const std::byte> bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  const bool is64 = bytes.size() > EI_CLASS && b[EI_CLASS] == ELFCLASS64;
  const bool big = bytes.size() > EI_DATA && b[EI_DATA] == ELFDATA2MSB;
  const std::size_t shoff_at = is64 ? 0x28 : 0x20, shnum_at = is64 ? 0x3c : 0x30;
  const std::size_t shoff_size = is64 ? 8 : 4;
  if (bytes.size() < shnum_at + 2) return 0;
  const std::size_t shnum =
      big ? (std::size_t{b[shnum_at]} << 8 | b[shnum_at + 1]) : (std::size_t{b[shnum_at + 1]} << 8 | b[shnum_at]);
  std::uint64_t shoff = 0;
  for (std::size_t i = 0; i < shoff_size; ++i)
    shoff |= std::uint64_t{b[shoff_at + (big ? shoff_size - 1 - i : i)]} << (8 * i);
  if (shnum != 0 || shoff == 0) return shnum;
  // Extended numbering: the count is the first section header's sh_size.
  const std::size_t size_at = is64 ? 32 : 20, size_size = is64 ? 8 : 4;
  if (shoff > bytes.size() || bytes.size() - shoff < size_at + size_size)
    return std::numeric_limits<std::size_t>::max();
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < size_size; ++i)
    count |= std::uint64_t{b[shoff + size_at + (big ? size_size - 1 - i : i)]} << (8 * i);
  return static_cast<std::size_t>(count);
}

// The build-id of the notes `bytes` (a SHT_NOTE section), in hex; empty when none is there.
std::string build_id_of(Elf_Data* data) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::size_t offset = 0;
  GElf_Nhdr note;
  std::size_t name_at = 0, desc_at = 0;
  while (offset < data->d_size && (offset = gelf_getnote(data, offset, &note, &name_at, &desc_at)) > 0) {
    if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 ||
        std::memcmp(static_cast<const char*>(data->d_buf) + name_at, "GNU", 4) != 0) {
      continue;
    }
    std::string out;
    const auto* desc = static_cast<const unsigned char*>(data->d_buf) + desc_at;
    for (std::size_t i = 0; i < note.n_descsz; ++i) {
      out += k_hex[desc[i] >> 4];
      out += k_hex[desc[i] & 15];
    }
    return out;
  }
  return {};
}

}  // namespace

bool is_string_section(std::string_view name) {
  return name == ".rodata" || name == ".comment" || name == ".debug_str" || name == ".debug_line_str";
}

Result<std::optional<ElfDetails>> read_elf_details(std::span<const std::byte> bytes, std::string_view what) {
  init_libelf();
  if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) return std::optional<ElfDetails>();
  if (const auto sections = announced_sections(bytes); sections > k_max_elf_sections) {
    return fail_input(std::string(what) + ": " +
                      (sections == std::numeric_limits<std::size_t>::max() ? std::string("more than 65279")
                                                                           : std::to_string(sections)) +
                      " section headers, more than the " + std::to_string(k_max_elf_sections) +
                      " arec reads of a file: compared by digest");
  }
  // libelf takes a mutable pointer but only reads in ELF_C_READ mode.
  ElfHandle elf(elf_memory(const_cast<char*>(reinterpret_cast<const char*>(bytes.data())), bytes.size()));
  auto file = read_handle(elf.get(), what);
  if (!file) return fail(file.error());
  if (!*file) return std::optional<ElfDetails>();
  ElfDetails out;
  out.file = std::move(**file);
  std::size_t names = 0;
  if (elf_getshdrstrndx(elf.get(), &names) != 0) return fail(elf_failure(what, "reading the section names").error());
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn != nullptr; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) return fail(elf_failure(what, "reading the section headers").error());
    ElfSection section{string_at(elf.get(), names, shdr.sh_name), shdr.sh_size, {}};
    if (shdr.sh_type != SHT_NOBITS) {
      // elf_memory checks each section against the bytes given: a section beyond them is an error.
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data == nullptr && shdr.sh_size > 0) {
        return fail(elf_failure(what, "reading section " + section.name).error());
      }
      const std::span<const unsigned char> raw =
          data == nullptr || data->d_buf == nullptr
              ? std::span<const unsigned char>()
              : std::span(static_cast<const unsigned char*>(data->d_buf), data->d_size);
      Hasher hasher;
      hasher.update(std::as_bytes(raw));
      section.digest = hasher.finish().hex();
      if (shdr.sh_type == SHT_NOTE && out.build_id.empty()) {
        // Notes are read through elf_getdata, which gives them their type (gelf_getnote needs it).
        if (Elf_Data* notes = elf_getdata(scn, nullptr); notes != nullptr) out.build_id = build_id_of(notes);
      }
      if (is_string_section(section.name)) {
        std::set<std::string> found;
        std::vector<std::string> producers;
        if (!add_strings(raw, found, producers)) out.truncated_strings.push_back(section.name);
        if (section.name == ".debug_str") out.producers = std::move(producers);
        auto& strings = out.strings[section.name];
        strings.assign(found.begin(), found.end());
        if (section.name == ".comment") out.comment = strings;
      }
    }
    out.sections.push_back(std::move(section));
  }
  return std::optional<ElfDetails>(std::move(out));
}

std::optional<Platform> elf_platform(const ElfFile& file) {
  const Machine* m = machine_of_elf(file.machine, file.elf_class, file.data);
  if (!m) return std::nullopt;
  std::string variant;
  if (file.machine == EM_ARM) {
    // Tag_CPU_arch values of the ARM ABI: 3-5 v5, 6-9 v6 (v6, v6KZ, v6T2, v6K), 10 v7, 14 and above v8.
    const int arch = file.arm_cpu_arch;
    variant = arch >= 14               ? "v8"
              : arch == 10             ? "v7"
              : arch >= 6 && arch <= 9 ? "v6"
              : arch >= 3 && arch <= 5 ? "v5"
                                       : "";
  }
  return Platform{std::string(m->architecture), "linux", std::move(variant)};
}

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

Result<std::optional<Platform>> inputs_platform(const std::vector<LayerEntry>& entries,
                                                const std::optional<Platform>& requested) {
  std::optional<std::pair<Platform, std::string>> found;  // the platform, and the first file of it
  for (const auto& e : entries) {
    if (e.type != LayerEntry::Type::file) continue;
    auto elf = read_elf(e.source);
    if (!elf) return fail(elf.error());
    if (!*elf) continue;
    const std::string what = "/" + e.path + " (" + e.source.string() + ")";
    auto platform = elf_platform(**elf);
    if (!platform && (*elf)->type != ET_EXEC && (*elf)->type != ET_DYN) continue;
    if (!platform) {
      return fail_input(what + " is an ELF file for machine " + std::to_string((*elf)->machine) +
                        ", which arec has no platform for");
    }
    if (!found) {
      found = {*platform, what};
    } else if (platform_text(*platform) != platform_text(found->first)) {
      return fail_input("the inputs are for two platforms: " + found->second + " is " + platform_text(found->first) +
                        ", " + what + " is " + platform_text(*platform) + "; record each platform on its own");
    }
  }
  if (!found) return requested;
  Platform platform = found->first;
  if (requested) {
    const bool same =
        requested->os == platform.os && requested->architecture == platform.architecture &&
        (requested->variant.empty() || platform.variant.empty() || requested->variant == platform.variant);
    if (!same) {
      return fail_input("--platform " + platform_text(*requested) + " contradicts " + found->second + ", which is " +
                        platform_text(platform));
    }
    if (platform.variant.empty()) platform.variant = requested->variant;
  }
  return std::optional(platform);
}

}  // namespace arec
