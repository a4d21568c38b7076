#include "diff/entry_table.hpp"

#include <algorithm>
#include <limits>

#include "oci/digest.hpp"

namespace arec {

namespace {

constexpr std::size_t k_max_name = 255;  // a user or group name is kept up to this, as ustar holds 32

int hex_value(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

}  // namespace

Result<std::optional<EntryTable>> EntryTable::read(const Layout& layout, const Descriptor& layer, std::size_t budget,
                                                   const std::function<bool(std::string_view path)>& wanted) {
  EntryTable out;
  bool over = false;
  // What a buffer holds once it has room for `needed`: grown by half, as the budget counts it.
  const auto grown = [](std::size_t capacity, std::size_t needed) {
    return needed <= capacity ? capacity : std::max(needed, capacity + capacity / 2);
  };
  auto s = for_each_layer_file(layout, layer, [&](const LayerFile& f, const NextBlock& next) -> Status {
    if (over || (wanted && !wanted(f.path))) return {};
    Entry e;
    e.type = f.type;
    e.other_kind = f.other_kind;
    e.mode = f.mode;
    e.major = f.major;
    e.minor = f.minor;
    e.size = f.size;
    e.uid = f.uid;
    e.gid = f.gid;
    e.mtime = f.mtime;
    e.order = static_cast<std::uint32_t>(out.m_entries.size());
    if (f.type == LayerFile::Type::file) {
      Hasher hasher;
      for (;;) {
        auto block = next();
        if (!block) return fail(block.error());
        if (block->empty()) break;
        hasher.update(*block);
      }
      const std::string hex = hasher.finish().hex();
      for (std::size_t i = 0; i < e.digest.size(); ++i)
        e.digest[i] = static_cast<unsigned char>(hex_value(hex[2 * i]) << 4 | hex_value(hex[2 * i + 1]));
      e.has_digest = true;
    }
    const std::string_view uname = std::string_view(f.uname).substr(0, k_max_name);
    const std::string_view gname = std::string_view(f.gname).substr(0, k_max_name);
    const std::size_t adding = f.path.size() + f.link_target.size() + uname.size() + gname.size();
    // Counted as held (capacity, with what growing it takes: the old buffer and the new one, while the
    // one is copied into the other), so a hostile layer stops here, not later.
    const std::size_t names = grown(out.m_names.capacity(), out.m_names.size() + adding);
    const std::size_t entries = grown(out.m_entries.capacity(), out.m_entries.size() + 1);
    const std::size_t growing_names = names == out.m_names.capacity() ? 0 : out.m_names.capacity();
    const std::size_t growing_entries = entries == out.m_entries.capacity() ? 0 : out.m_entries.capacity();
    if (names + growing_names + (entries + growing_entries) * sizeof(Entry) > budget ||
        names > std::numeric_limits<std::uint32_t>::max()) {
      over = true;
      return {};
    }
    out.m_names.reserve(names);
    out.m_entries.reserve(entries);
    e.at = static_cast<std::uint32_t>(out.m_names.size());
    e.path_size = static_cast<std::uint32_t>(f.path.size());
    e.link_size = static_cast<std::uint32_t>(f.link_target.size());
    e.uname_size = static_cast<std::uint8_t>(uname.size());
    e.gname_size = static_cast<std::uint8_t>(gname.size());
    for (const std::string_view part : {std::string_view(f.path), std::string_view(f.link_target), uname, gname})
      out.m_names.insert(out.m_names.end(), part.begin(), part.end());
    out.m_entries.push_back(e);
    return {};
  });
  if (!s) return fail(s.error());
  if (over) return std::optional<EntryTable>();
  // By path; of two entries of one path the later stands, as a tar is unpacked.
  std::sort(out.m_entries.begin(), out.m_entries.end(), [&out](const Entry& a, const Entry& b) {
    const auto x = out.name(a, 0, a.path_size);
    const auto y = out.name(b, 0, b.path_size);
    return x != y ? x < y : a.order > b.order;
  });
  auto last = std::unique(out.m_entries.begin(), out.m_entries.end(), [&out](const Entry& a, const Entry& b) {
    return out.name(a, 0, a.path_size) == out.name(b, 0, b.path_size);
  });
  out.m_entries.erase(last, out.m_entries.end());
  // A hard link's content is its target's.
  for (auto& e : out.m_entries) {
    if (e.type != LayerFile::Type::hardlink) continue;
    const auto target = out.link(e);
    const auto found =
        std::lower_bound(out.m_entries.begin(), out.m_entries.end(), target,
                         [&out](const Entry& x, std::string_view t) { return out.name(x, 0, x.path_size) < t; });
    if (found != out.m_entries.end() && out.name(*found, 0, found->path_size) == target && found->has_digest) {
      e.digest = found->digest;
      e.has_digest = true;
    }
  }
  return std::optional<EntryTable>(std::move(out));
}

std::string_view EntryTable::path(std::size_t i) const {
  const Entry& e = m_entries[i];
  return name(e, 0, e.path_size);
}

LayerFile EntryTable::file(std::size_t i) const {
  const Entry& e = m_entries[i];
  LayerFile f;
  f.type = e.type;
  f.path = std::string(path(i));
  f.mode = e.mode;
  f.size = e.size;
  f.link_target = std::string(link(e));
  f.other_kind = e.other_kind;
  f.major = e.major;
  f.minor = e.minor;
  f.uid = e.uid;
  f.gid = e.gid;
  f.uname = std::string(name(e, e.path_size + e.link_size, e.uname_size));
  f.gname = std::string(name(e, e.path_size + e.link_size + e.uname_size, e.gname_size));
  f.mtime = e.mtime;
  return f;
}

std::string EntryTable::digest_hex(std::size_t i) const {
  static constexpr char k_hex[] = "0123456789abcdef";
  const Entry& e = m_entries[i];
  if (!e.has_digest) return "";
  std::string out;
  for (const unsigned char byte : e.digest) {
    out.push_back(k_hex[byte >> 4]);
    out.push_back(k_hex[byte & 15]);
  }
  return out;
}

std::vector<std::string> EntryTable::changes(std::size_t i, const EntryTable& other, std::size_t j) const {
  const Entry& a = m_entries[i];
  const Entry& b = other.m_entries[j];
  const auto names = [](const EntryTable& t, const Entry& e) {
    return t.name(e, e.path_size + e.link_size, std::size_t{e.uname_size} + e.gname_size);
  };
  std::vector<std::string> out;
  if (a.type != b.type) out.push_back("type");
  if (a.has_digest != b.has_digest || a.digest != b.digest) out.push_back("content");
  if (a.size != b.size) out.push_back("size");
  if (a.mode != b.mode) out.push_back("mode");
  if (a.uid != b.uid || a.gid != b.gid || a.uname_size != b.uname_size || names(*this, a) != names(other, b))
    out.push_back("owner");
  if (link(a) != other.link(b)) out.push_back("link");
  if (a.major != b.major || a.minor != b.minor) out.push_back("device");
  if (a.mtime != b.mtime) out.push_back("mtime");
  return out;
}

}  // namespace arec
