// The entries of a layer, held as compactly as comparing two layers needs: each entry's numbers and its
// content's digest inline, its names in one buffer, sorted by path once read. A layer of 200,000 empty
// entries takes about 25 MiB here; one whose entries would take more than the budget (growing a buffer
// counted as the old one and the new one) is not held at all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/bundle.hpp"

namespace arec {

class EntryTable {
 public:
  // Reads the entries of `layer` that `wanted` takes (by image path; all without one), hashing each
  // file's content as it streams past. Nothing when they would take more than `budget` bytes.
  static Result<std::optional<EntryTable>> read(const Layout& layout, const Descriptor& layer, std::size_t budget,
                                                const std::function<bool(std::string_view path)>& wanted);

  std::size_t size() const { return m_entries.size(); }
  std::string_view path(std::size_t i) const;
  // Entry i as the tar gave it (names cut at 255 bytes), and its content's SHA-256 in hex (a hard
  // link's is its target's; empty for what holds no content).
  LayerFile file(std::size_t i) const;
  std::string digest_hex(std::size_t i) const;
  std::int64_t file_size(std::size_t i) const { return m_entries[i].size; }
  // What differs between entry i and entry j of `other`, in the order a reader weighs it: type,
  // content, size, mode, owner, link, device, mtime.
  std::vector<std::string> changes(std::size_t i, const EntryTable& other, std::size_t j) const;

 private:
  struct Entry {
    std::uint32_t at = 0;  // in m_names: path, link target, user name, group name, one after another
    std::uint32_t path_size = 0, link_size = 0;
    std::uint8_t uname_size = 0, gname_size = 0;
    std::uint32_t mode = 0, major = 0, minor = 0;
    std::uint32_t order = 0;  // in the tar: of two entries of one path, the later stands
    LayerFile::Type type = LayerFile::Type::file;
    char other_kind = '?';
    bool has_digest = false;
    std::int64_t size = 0, uid = 0, gid = 0, mtime = 0;
    std::array<unsigned char, 32> digest{};
  };
  std::string_view name(const Entry& e, std::size_t skip, std::size_t size) const {
    return std::string_view(m_names.data(), m_names.size()).substr(e.at + skip, size);
  }
  std::string_view link(const Entry& e) const { return name(e, e.path_size, e.link_size); }

  std::vector<char> m_names;  // a vector: reserve() gives exactly what is asked, which the budget counts
  std::vector<Entry> m_entries;
};

}  // namespace arec
