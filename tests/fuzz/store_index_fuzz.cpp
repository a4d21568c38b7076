// The readers of a store of format 1 on any index.json: read_index agrees with parsing the bytes in memory, the latest
// records are among all records, and an index read is written in its canonical form and read back unchanged.
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "store/store.hpp"
#include "tests/fuzz/require.hpp"

namespace {

using arec::fuzz::require;

const arec::Store& store() {
  static const arec::Store opened = [] {
    // In memory where there is a tmpfs: on a disk, renaming index.json costs more than reading it.
    std::error_code ec;
    const auto parent = std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                                      : std::filesystem::temp_directory_path();
    std::string dir = (parent / "arec-fuzz-store.XXXXXX").string();
    require(::mkdtemp(dir.data()) != nullptr, "a temporary directory is made");
    static const std::filesystem::path made = dir;
    std::atexit([] { std::filesystem::remove_all(made); });
    require(arec::Store::open(made / "store").has_value(), "a new store opens");
    // A store of format 1, without the history database: its readers read index.json itself, which is
    // what is fuzzed here (the database's view is written by arec alone).
    for (const char* name : {"history.db", "history.db-wal", "history.db-shm"})
      std::filesystem::remove(made / "store" / "arec" / name);
    auto s = arec::Store::open_existing(made / "store");
    require(s.has_value(), "a store of format 1 opens");
    return std::move(*s);
  }();
  return opened;
}

void put(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = arec::fuzz::as_text(data, size);
  const auto& s = store();
  const auto index_path = s.dir() / "index.json";
  put(index_path, bytes);

  const auto index = s.read_index();
  const auto json = arec::parse_json(bytes, index_path.string());
  require(index.has_value() == (json && arec::index_from_json(*json, index_path.string())),
          "read_index agrees with the bytes");
  const auto all = s.records(arec::History::all);
  const auto latest = s.records(arec::History::latest);
  require(all.has_value() == index.has_value() && latest.has_value() == index.has_value(),
          "records read where the index reads");
  (void)s.latest("mesh", "controlplane");

  // The same bytes as a remembered layer's descriptor: read or nothing, never a failure.
  const auto descriptor_path = s.layer_cache_dir() / "fuzz.descriptor";
  put(descriptor_path, bytes);
  (void)arec::read_descriptor_file(descriptor_path);

  if (!index) return 0;
  require(latest->size() <= all->size() && all->size() <= index->manifests.size(),
          "latest records are among all records");
  for (const auto& r : *latest) {
    require(std::any_of(all->begin(), all->end(), [&](const auto& a) { return a.identity() == r.identity(); }),
            "each latest record is a record");
  }
  const auto written = arec::canonical_json(to_json(*index));
  require(written.has_value(), "a read index has a canonical form");
  put(index_path, *written);
  const auto reread = s.read_index();
  require(reread.has_value(), "a written index reads");
  require(arec::canonical_json(to_json(*reread)) == *written, "a written index reads back unchanged");
  return 0;
}
