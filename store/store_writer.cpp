// The store's view (index.json, derived from the history) and every change StoreWriter makes under the
// store's lock: commit, keep, tag, platforms, remove.
#include "store/store.hpp"

#include <algorithm>
#include <cstdlib>

#include "store/store_internal.hpp"

namespace arec {

namespace {

constexpr std::string_view k_generation = "dev.arec.generation";

// The view without its entries: what index.json holds besides them.
Index view_shell(std::int64_t generation) {
  Index index;
  if (generation > 0) index.annotations.emplace(k_generation, std::to_string(generation));
  return index;
}

}  // namespace

Result<Index> Store::view() const {
  if (!m_history) return read_index();
  auto generation = m_history->generation();
  if (!generation) return fail(generation.error());
  Index index = view_shell(*generation);
  auto s = for_each_view_entry([&](Descriptor&& d, std::string_view) -> Status {
    index.manifests.push_back(std::move(d));
    return {};
  });
  if (!s) return fail(s.error());
  return index;
}

Status StoreWriter::write_view() {
  Store& store = *m_store;
  const auto path = store.m_dir / "index.json";
  const auto context = "writing " + path.string();
  auto generation = history().generation();
  if (!generation) return fail(generation.error());
  // Every byte is canonical_json's, as check and view_state read it back: the view without entries,
  // its empty "manifests" array then filled entry by entry, each canonical_json of its descriptor (keys
  // sorted, no space, so an array's elements are its members' texts joined by commas). Streamed rather
  // than canonical_json(to_json(view())), so that the memory of each commit does not grow with the
  // store's module/names (5,000 of them: 12 MB more and twice the CPU of a record).
  auto shell = canonical_json(to_json(view_shell(*generation)));
  if (!shell) return fail(std::move(shell.error()).context(context));
  constexpr std::string_view k_entries = R"("manifests":[)";
  const auto at = shell->find(std::string(k_entries) + "]");
  if (at == std::string::npos) return fail_input(context + ": the view has no manifests array");
  std::string text = shell->substr(0, at + k_entries.size());
  bool first = true;
  auto s = store.for_each_view_entry([&](Descriptor&& d, std::string_view index_bytes) -> Status {
    // The blob of a derived index is written before the view names it.
    if (!index_bytes.empty() && !store.has_blob(d)) {
      if (auto w = fs::write_file_atomic(store.temp_dir(), store.blob_path(d.digest), index_bytes); !w) return w;
    }
    auto entry = canonical_json(to_json(d));
    if (!entry) return fail(std::move(entry.error()).context(context));
    if (!first) text.push_back(',');
    first = false;
    text += *entry;
    return {};
  });
  if (!s) return s;
  text += shell->substr(at + k_entries.size());
  if (auto w = fs::write_file_atomic(store.temp_dir(), path, text); !w) return w;
  return history().set_view_generation(*generation);
}

Status Store::catch_up_view() {
  auto generation = m_history->generation();
  if (!generation) return fail(generation.error());
  auto written = m_history->view_generation();
  if (!written) return fail(written.error());
  if (*written == *generation && path_exists(m_dir / "index.json")) return {};
  auto writer = this->writer();
  if (!writer) return fail(writer.error());
  return writer->write_view();
}

Result<Store::ViewState> Store::view_state() const {
  if (!path_exists(m_dir / "index.json")) return ViewState::missing;
  auto on_disk = read_index();
  if (!on_disk) return ViewState::differs;
  if (!m_history) return ViewState::current;
  auto derived = view();
  if (!derived) return fail(derived.error());
  const auto generation_of = [](const Index& index) {
    const auto it = index.annotations.find(std::string(k_generation));
    return it == index.annotations.end() ? std::int64_t{0} : std::strtoll(it->second.c_str(), nullptr, 10);
  };
  if (generation_of(*on_disk) < generation_of(*derived)) return ViewState::behind;
  auto a = canonical_json(to_json(*on_disk));
  auto b = canonical_json(to_json(*derived));
  if (!a || !b || *a != *b) return ViewState::differs;
  return ViewState::current;
}

Status StoreWriter::refresh_view_if_behind() {
  auto state = m_store->view_state();
  if (!state) return fail(state.error());
  if (*state == Store::ViewState::current) return {};
  return write_view();
}

// Inside a writer's transaction, `record` and its referrers, as commit() and commit_all() add them. The
// record is not appended again when its own configuration's latest has its digest and revision: another
// configuration's record of the same bytes does not stand for it, and a newer revision of the same bytes
// is appended, so the history keeps every revision that built them. Also says whether anything was
// written, a referrer included.
namespace {
Result<std::pair<Store::Commit, bool>> add_record(HistoryDb& db, const Record& record,
                                                  const std::vector<Descriptor>& referrers) {
  auto lines = db.config_latest_of(record.module, record.name);
  if (!lines) return fail(lines.error());
  const auto latest = std::ranges::find(*lines, record.config, &Record::config);
  const bool held = latest != lines->end() && latest->manifest.digest == record.manifest.digest &&
                    latest->revision == record.revision;
  if (!held) {
    if (auto a = db.append(record); !a) return fail(a.error());
  }
  bool referrer_added = false;
  for (const auto& referrer : referrers) {
    auto added = db.add_other(referrer);
    if (!added) return fail(added.error());
    referrer_added = referrer_added || *added;
  }
  return std::pair{Store::Commit{held ? *latest : record, !held}, !held || referrer_added};
}
}  // namespace

Result<Store::Commit> StoreWriter::commit(const Record& record, const std::vector<Descriptor>& referrers) {
  HistoryDb* db = &history();
  std::optional<Commit> committed;
  bool wrote = false;
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto c = add_record(*db, record, referrers);
    if (!c) return fail(c.error());
    committed = std::move(c->first);
    wrote = c->second;
    if (!wrote) return HistoryDb::Outcome::roll_back;
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  // After the commit: a writer killed here leaves index.json behind, which the next one rewrites.
  if (auto v = wrote ? write_view() : refresh_view_if_behind(); !v) return fail(v.error());
  return std::move(*committed);
}

Result<std::vector<Store::Commit>> StoreWriter::commit_all(
    const std::vector<std::pair<Record, std::vector<Descriptor>>>& records) {
  HistoryDb* db = &history();
  std::vector<Commit> out;
  bool any = false;
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    out.clear();
    any = false;
    for (const auto& [record, referrers] : records) {
      auto c = add_record(*db, record, referrers);
      if (!c) return fail(c.error());
      // A record held already is "changed" here when a referrer came with it.
      any = any || c->second;
      out.push_back({std::move(c->first.record), c->second});
    }
    if (!any) return HistoryDb::Outcome::roll_back;
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  if (auto v = any ? write_view() : refresh_view_if_behind(); !v) return fail(v.error());
  return out;
}

Result<bool> StoreWriter::keep(const Descriptor& image) {
  HistoryDb* db = &history();
  bool added = false;
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto is_record = db->has_record_digest(image.digest);
    if (!is_record) return fail(is_record.error());
    if (*is_record) return HistoryDb::Outcome::roll_back;
    auto other = db->add_other(image);
    if (!other) return fail(other.error());
    if (!*other) return HistoryDb::Outcome::roll_back;
    added = true;
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  if (auto v = added ? write_view() : refresh_view_if_behind(); !v) return fail(v.error());
  return added;
}

Result<Store::Commit> StoreWriter::tag(std::string_view module, std::string_view name, const Digest& digest) {
  HistoryDb* db = &history();
  const std::string identity = std::string(module) + "/" + std::string(name) + "@" + digest.str();
  std::optional<Commit> outcome;
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto latest = db->latest(module, name);
    if (!latest) return fail(latest.error());
    if (*latest && (*latest)->manifest.digest == digest) {
      outcome = Commit{**latest, false};
      return HistoryDb::Outcome::roll_back;
    }
    auto history = db->history_of(module, name);
    if (!history) return fail(history.error());
    const auto found = std::ranges::find_if(history->rbegin(), history->rend(),
                                            [&](const Record& r) { return r.manifest.digest == digest; });
    if (found == history->rend()) return fail_input(identity + ": no such record in store " + m_store->dir().string());
    Record again = *found;
    again.recorded = now_rfc3339();
    if (auto a = db->append(again); !a) return fail(a.error());
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    outcome = Commit{std::move(again), true};
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  if (auto v = outcome->changed ? write_view() : refresh_view_if_behind(); !v) return fail(v.error());
  return *outcome;
}

Result<Store::LatestImage> StoreWriter::set_platforms(std::string_view module, std::string_view name,
                                                      const std::vector<std::string>& platforms) {
  HistoryDb* db = &history();
  const std::string repository = std::string(module) + "/" + std::string(name);
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto recorded = db->recorded_platforms(module, name);
    if (!recorded) return fail(recorded.error());
    if (recorded->empty())
      return fail_input(repository + ": no record with a platform in store " + m_store->dir().string());
    std::vector<std::string> wanted = platforms.empty() ? *recorded : platforms;
    std::ranges::sort(wanted);
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    if (auto set = db->set_platforms(module, name, wanted); !set) return fail(set.error());
    if (wanted.size() == 1) {
      // One platform: its record becomes the latest too, unless it is already.
      auto latest = db->latest(module, name);
      if (!latest) return fail(latest.error());
      auto set = db->platform_set(module, name);
      if (!set) return fail(set.error());
      if (!*latest || (*latest)->manifest.digest != set->front().manifest.digest) {
        Record again = set->front();
        again.recorded = now_rfc3339();
        if (auto a = db->append(again); !a) return fail(a.error());
      }
    }
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  if (auto v = write_view(); !v) return fail(v.error());
  auto image = m_store->latest_image(module, name);
  if (!image) return fail(image.error());
  return std::move(**image);
}

Result<std::size_t> StoreWriter::remove(std::string_view module, std::string_view name, std::optional<Digest> digest) {
  HistoryDb* db = &history();
  std::size_t removed = 0;
  auto s = db->transaction([&]() -> Result<HistoryDb::Outcome> {
    auto n = db->remove(module, name, digest);
    if (!n) return fail(n.error());
    removed = *n;
    if (removed == 0) return HistoryDb::Outcome::roll_back;
    if (auto o = db->drop_orphan_referrers(); !o) return fail(o.error());
    if (auto b = db->bump_generation(); !b) return fail(b.error());
    return HistoryDb::Outcome::commit;
  });
  if (!s) return fail(s.error());
  if (auto v = removed > 0 ? write_view() : refresh_view_if_behind(); !v) return fail(v.error());
  return removed;
}

}  // namespace arec
