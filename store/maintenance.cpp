#include "store/maintenance.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>

#include "store/uploads.hpp"

namespace arec {

namespace {

// The blobs reachable from one index entry: the manifest, its config and layers, and through an
// image index, the manifests it lists. `problems` gets what cannot be read.
void reach(const Store& store, const Descriptor& d, std::set<Digest>& reached, std::vector<std::string>& problems,
           int depth = 0) {
  if (!reached.insert(d.digest).second) return;
  if (depth > 8) {
    problems.push_back(d.digest.str() + ": indexes nested too deeply");
    return;
  }
  const bool is_manifest = media_type::is_manifest(d.media_type);
  const bool is_index = media_type::is_index(d.media_type);
  if (!is_manifest && !is_index) {
    struct stat st {};
    const auto path = store.blob_path(d.digest);
    if (::lstat(path.c_str(), &st) != 0) {
      problems.push_back(path.string() + ": missing (" + d.media_type + ")");
    } else if (!S_ISREG(st.st_mode)) {
      problems.push_back(path.string() + ": " + fs::file_kind(st.st_mode) +
                         " where a blob must be (arec writes only regular files)");
    } else if (st.st_size != d.size) {
      problems.push_back(path.string() + ": " + std::to_string(st.st_size) + " bytes, its descriptor says " +
                         std::to_string(d.size));
    }
    return;
  }
  if (is_index) {
    auto index = store.read_image_index(d);
    if (!index) {
      problems.push_back(index.error().message);
      return;
    }
    for (const auto& m : index->manifests) reach(store, m, reached, problems, depth + 1);
    return;
  }
  auto manifest = store.read_manifest(d);
  if (!manifest) {
    problems.push_back(manifest.error().message);
    return;
  }
  for (const auto& blob : blobs_of(*manifest)) reach(store, blob, reached, problems, depth + 1);
}

// Hashes a blob file in blocks and compares it with its name.
std::optional<std::string> verify_blob_file(const fs::Path& path, const Digest& digest) {
  auto fd = fs::open_own_file(path);
  if (!fd) return fd.error().message;
  Hasher hasher(digest.algorithm());
  std::vector<std::byte> buffer(std::size_t{1} << 20);
  for (;;) {
    auto n = fs::read_some(fd->get(), buffer, path);
    if (!n) return n.error().message;
    if (*n == 0) break;
    hasher.update(std::span(buffer.data(), *n));
  }
  if (hasher.finish() != digest) return path.string() + ": content does not hash to its name";
  return std::nullopt;
}

void check_records(const Index& index, CheckReport& report, const std::string& where) {
  // module/name -> position of its newest entry, and of the entry carrying its ref.name
  std::map<std::string, std::size_t> newest;
  std::map<std::string, std::vector<std::size_t>> tagged;
  for (std::size_t i = 0; i < index.manifests.size(); ++i) {
    const auto& d = index.manifests[i];
    auto record = record_from_descriptor(d);
    if (!record) continue;
    ++report.records;
    newest[record->repository()] = i;
    if (d.annotation(annotation::k_ref_name) == record->repository()) tagged[record->repository()].push_back(i);
  }
  for (const auto& [repository, position] : newest) {
    const auto it = tagged.find(repository);
    if (it == tagged.end()) {
      report.problems.push_back(where + ": " + repository + " has records but none is marked latest");
    } else if (it->second.size() > 1) {
      report.problems.push_back(where + ": " + repository + " is marked latest " + std::to_string(it->second.size()) +
                                " times");
    } else if (it->second.front() != position) {
      report.problems.push_back(where + ": " + repository + " is marked latest on an older record than its newest");
    }
  }
}

}  // namespace

namespace {

// What the store holds, to reach blobs from: every history entry and every other entry (with the
// database), or index.json's entries (a store not converted yet).
Result<std::vector<Descriptor>> held_entries(const Store& store) {
  if (!store.history()) {
    auto index = store.read_index();
    if (!index) return fail(index.error());
    return std::move(index->manifests);
  }
  std::vector<Descriptor> out;
  std::set<Digest> seen;
  auto s = store.history()->for_each_record([&](Record&& r) -> Status {
    if (seen.insert(r.manifest.digest).second) out.push_back(to_descriptor(r, Latest::no));
    return {};
  });
  if (!s) return fail(s.error());
  auto others = store.history()->others();
  if (!others) return fail(others.error());
  for (auto& d : *others) out.push_back(std::move(d));
  // The image indexes over several platforms' records are derived, held by the view alone.
  auto indexes = store.indexes();
  if (!indexes) return fail(indexes.error());
  for (auto& [repository, image] : *indexes) out.push_back(std::move(image.descriptor));
  return out;
}

}  // namespace

Result<CheckReport> check_store(const Store& store) {
  CheckReport report;
  const auto index_path = (store.dir() / "index.json").string();
  auto entries = held_entries(store);
  if (!entries && !store.history()) {
    // A missing or malformed index.json is what check is for: a finding, and nothing more can be reached.
    report.problems.push_back(entries.error().message);
    return report;
  }
  if (!entries) return fail(entries.error());
  std::set<Digest> reached;
  for (const auto& d : *entries) reach(store, d, reached, report.problems);
  // Sizes were checked on the way; now every reached blob's content, which is the expensive part.
  for (const auto& digest : reached) {
    const auto path = store.blob_path(digest);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // reported on the way already
    ++report.blobs_checked;
    if (auto problem = verify_blob_file(path, digest)) report.problems.push_back(*problem);
  }
  if (!store.history()) {
    auto index = store.read_index();
    if (!index) return fail(index.error());
    check_records(*index, report, index_path);
  } else {
    auto count = store.history()->for_each_record([&](Record&&) -> Status {
      ++report.records;
      return {};
    });
    if (!count) return fail(count.error());
    auto problems = store.history()->integrity_problems();
    if (!problems) return fail(problems.error());
    for (auto& p : *problems) report.problems.push_back(std::move(p));
    auto state = store.view_state();
    if (!state) return fail(state.error());
    switch (*state) {
      case Store::ViewState::current: break;
      case Store::ViewState::behind: report.index_behind = true; break;
      case Store::ViewState::missing:
        report.problems.push_back(index_path + ": missing (--repair writes it from the history)");
        break;
      case Store::ViewState::differs:
        if (auto index = store.read_index(); !index) {
          report.problems.push_back(index.error().message + " (--repair rewrites it from the history)");
        } else {
          report.problems.push_back(index_path + ": does not match the history (--repair rewrites it)");
        }
        break;
    }
  }
  if (auto own = Store::check_own_directories(store.dir()); !own) report.problems.push_back(own.error().message);
  if (auto scan = fs::scan_temporaries(store.temp_dir(), fs::RemoveAbandoned::no); !scan) {
    report.problems.push_back(scan.error().message);
  } else {
    report.stray_temporaries = std::move(scan->abandoned);
    for (auto& foreign : scan->foreign) report.problems.push_back(std::move(foreign));
  }
  return report;
}

Result<RepairReport> repair_store(StoreWriter& writer) {
  RepairReport report;
  report.temporaries_removed = writer.store().sweep_abandoned_temporaries();
  auto state = writer.store().view_state();
  if (!state) return fail(state.error());
  if (*state != Store::ViewState::current) {
    if (auto s = writer.write_view(); !s) return fail(s.error());
    report.index_rewritten = true;
  }
  return report;
}

Result<GcReport> collect_garbage(StoreWriter& writer, std::size_t keep, DryRun dry_run) {
  const Store& store = writer.store();
  if (!writer.excludes_blob_writers()) {
    return fail_input("collecting garbage in " + store.dir().string() +
                      ": a recorder may be adding blobs (gc needs Store::writer(BlobWriters::excluded))");
  }
  auto& db = writer.history();

  GcReport report;
  std::set<Digest> reached;
  // Trimmed inside the transaction, so that a dry run sees what would be left, then rolls it back.
  auto s = db.transaction([&]() -> Result<HistoryDb::Outcome> {
    if (keep > 0) {
      auto dropped = db.trim(keep);
      if (!dropped) return fail(dropped.error());
      report.records_dropped = *dropped;
      // A referrer (an SBOM) goes with its subject.
      if (auto r = db.drop_orphan_referrers(); !r) return fail(r.error());
      if (auto b = db.bump_generation(); !b) return fail(b.error());
    }
    auto entries = held_entries(store);
    if (!entries) return fail(entries.error());
    std::vector<std::string> problems;
    for (const auto& d : *entries) reach(store, d, reached, problems);
    if (!problems.empty()) {
      return fail_input("collecting garbage in " + store.dir().string() +
                        ": the store has problems (run arec check): " + problems.front());
    }
    return dry_run == DryRun::yes || report.records_dropped == 0 ? HistoryDb::Outcome::roll_back
                                                                 : HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  std::vector<fs::Path> doomed;
  std::error_code ec;
  for (const auto& algorithm : std::filesystem::directory_iterator(store.dir() / "blobs", ec)) {
    // A link in blobs/ was planted: what it points at is not the store's to remove.
    if (!algorithm.is_directory(ec) || algorithm.is_symlink(ec)) continue;
    for (const auto& blob : std::filesystem::directory_iterator(algorithm.path(), ec)) {
      auto digest = Digest::parse(algorithm.path().filename().string() + ":" + blob.path().filename().string());
      if (digest && reached.contains(*digest)) continue;
      if (!digest || !blob.is_regular_file(ec) || blob.is_symlink(ec))
        continue;  // not a blob arec could have written: left alone
      ++report.blobs_removed;
      report.bytes_removed += static_cast<std::int64_t>(blob.file_size(ec));
      doomed.push_back(blob.path());
    }
  }
  report.upload_notes_removed = remove_stale_upload_notes(
      store, [&](const Digest& blob) { return reached.contains(blob); }, k_upload_note_age, dry_run == DryRun::yes);
  if (dry_run == DryRun::yes) return report;
  // The history and the view first: a crash after them leaves only unreferenced blobs, never a
  // dangling reference.
  if (report.records_dropped > 0) {
    if (auto v = writer.write_view(); !v) return fail(v.error());
  }
  for (const auto& path : doomed) ::unlink(path.c_str());
  // Remembered layers whose blob is gone are useless; drop them too. A files shortcut stays while a
  // remembered layer of its DiffID does (layer_cache_path: <DiffID hex>.<compression>).
  std::set<std::string> kept_diff_ids;
  std::vector<fs::Path> shortcuts;
  for (const auto& entry : std::filesystem::directory_iterator(store.layer_cache_dir(), ec)) {
    if (Store::is_files_shortcut(entry.path())) {
      shortcuts.push_back(entry.path());
      continue;
    }
    auto d = read_descriptor_file(entry.path());
    if (!d || !store.has_blob(*d)) {
      ::unlink(entry.path().c_str());
    } else {
      kept_diff_ids.insert(entry.path().stem().string());
    }
  }
  for (const auto& path : shortcuts) {
    auto text = fs::read_file(path);
    auto diff_id = Digest::parse(text ? *text : std::string());
    if (!diff_id || !kept_diff_ids.contains(diff_id->hex())) ::unlink(path.c_str());
  }
  // So are the repositories noted for a blob that is gone: no push will send it.
  for (const auto& entry : std::filesystem::directory_iterator(store.mount_hints_dir(), ec)) {
    auto digest = Digest::parse("sha256:" + entry.path().filename().string());
    if (!digest || !std::filesystem::exists(store.blob_path(*digest), ec)) ::unlink(entry.path().c_str());
  }
  return report;
}

}  // namespace arec
