// The ELF reader (recorder/elf) on any bytes, as `arec diff` and the recorder give it a file of a layer:
// it never reads outside them, an error names the file, and what it reads is the same read twice
// (what read_elf_details accepts, read_elf accepts, and they agree on what the loader sees); every section's digest is
// a SHA-256, strings are at most the cap, sorted and each once.
#include <algorithm>

#include "recorder/elf.hpp"
#include "tests/fuzz/require.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using arec::fuzz::require;
  // A copy of exactly the input's size, so that AddressSanitizer sees any read past its end.
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  const auto details = arec::read_elf_details(bytes, "fuzz.elf");
  const auto file = arec::read_elf(bytes, "fuzz.elf");
  // The details read more than the loader's part (section names and bytes), so they may refuse what
  // read_elf accepts, never the other way round.
  require(!details.has_value() || file.has_value(), "what the details accept, read_elf accepts");
  if (!details) {
    require(details.error().message.starts_with("fuzz.elf"), "an error names the file");
    return 0;
  }
  require(details->has_value() == file->has_value(), "both readers see an ELF file or none");
  if (!*details) return 0;
  const auto& d = **details;
  require(d.file.needed == (*file)->needed && d.file.rpath == (*file)->rpath && d.file.runpath == (*file)->runpath &&
              d.file.interpreter == (*file)->interpreter && d.file.soname == (*file)->soname,
          "the details hold what the loader reads");
  for (const auto& s : d.sections) require(s.digest.empty() || s.digest.size() == 64, "a section's digest is SHA-256");
  for (const auto& [section, strings] : d.strings) {
    require(arec::is_string_section(section), "strings only of the string sections");
    require(strings.size() <= arec::k_max_section_strings + 1, "at most the cap of strings");
    require(std::is_sorted(strings.begin(), strings.end()) &&
                std::adjacent_find(strings.begin(), strings.end()) == strings.end(),
            "strings sorted, each once");
    for (const auto& s : strings) require(s.size() >= 4, "a string of four characters or more");
  }
  require(d.build_id.size() % 2 == 0, "the build-id in hex");
  return 0;
}
