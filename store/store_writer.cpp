// The store's view (index.json, derived from the history) and every change StoreWriter makes under the
// store's lock: commit, keep, tag, platforms, remove.
#include "store/store.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "store/store_internal.hpp"

namespace arec {

namespace {

constexpr std::string_view k_generation = "dev.arec.generation";
// The default configuration a view was derived with, when it is not k_default_config (so the view of a
// store of Release builds reads as it always did).
constexpr std::string_view k_view_default_config = "dev.arec.default-config";

// The view without its entries: what index.json holds besides them.
Index view_shell(std::int64_t generation, std::string_view default_config) {
  Index index;
  if (generation > 0) index.annotations.emplace(k_generation, std::to_string(generation));
  if (default_config != k_default_config) index.annotations.emplace(k_view_default_config, default_config);
  return index;
}

// The default configuration index.json says it was derived with.
std::string written_default_config(const Index& index) {
  const auto it = index.annotations.find(std::string(k_view_default_config));
  return it == index.annotations.end() || !is_config_name(it->second) ? std::string(k_default_config) : it->second;
}

}  // namespace

Status Store::for_each_view_entry(std::string_view default_config,
                                  const std::function<Status(Descriptor&&, std::string_view)>& visit) const {
  // Only module/names of several platforms are in `indexes`, and of several configurations in
  // `several`: the view of a large store of neither streams.
  auto images = indexes();
  if (!images) return fail(images.error());
  std::map<std::string, std::vector<std::string>> several;  // module/name -> its configurations, sorted
  auto configs = m_history->for_each_config_latest([&](Record&& r) -> Status {
    several[r.repository()].push_back(std::move(r.config));
    return {};
  });
  if (!configs) return fail(configs.error());
  std::erase_if(several, [](const auto& entry) { return entry.second.size() < 2; });
  for (auto& [repository, names] : several) std::ranges::sort(names);

  // Records are listed each under its own name, even two of one digest; other entries once each.
  std::set<std::string> listed;
  auto add = [&](Descriptor&& d, std::string_view index_bytes = {}) -> Status {
    listed.insert(d.digest.str());
    return visit(std::move(d), index_bytes);
  };
  auto add_once = [&](Descriptor&& d) -> Status {
    return listed.contains(d.digest.str()) ? Status{} : add(std::move(d));
  };
  // An image named `ref_name`: a record, or an index carrying the name (so tools find it) followed by
  // each platform's record and its referrers (the view's other entries below are the referrers of the
  // records listed only). The index blob is derived like the view; its bytes go with its entry, for
  // the writer to write them first.
  auto add_image = [&](const LatestImage& image, const std::string& ref_name) -> Status {
    if (!image.is_index()) {
      Descriptor d = to_descriptor(image.platforms.front(), Latest::no);
      d.annotations.emplace(annotation::k_ref_name, ref_name);
      return add(std::move(d));
    }
    Descriptor index = image.descriptor;
    index.annotations.emplace(annotation::k_ref_name, ref_name);
    if (auto s = add(std::move(index), image.index); !s) return s;
    for (const auto& p : image.platforms) {
      if (auto s = add(to_descriptor(p, Latest::no)); !s) return s;
      auto referrers = m_history->others(p.manifest.digest.str());
      if (!referrers) return fail(referrers.error());
      for (auto& d : *referrers) {
        if (auto s = add_once(std::move(d)); !s) return s;
      }
    }
    return {};
  };
  // The image of one configuration of module/name: its newest record, or its index over platforms.
  auto config_image = [&](const Record& latest, std::string_view config,
                          const std::vector<Record>& lines) -> Result<std::optional<LatestImage>> {
    if (images->contains(latest.repository())) return latest_image(latest.module, latest.name, std::string(config));
    const auto found = std::ranges::find(lines, config, &Record::config);
    if (found == lines.end()) return std::optional<LatestImage>();
    return std::optional<LatestImage>(LatestImage{found->manifest, {}, {*found}});
  };

  auto latest = m_history->for_each_latest([&](Record&& r) -> Status {
    const std::string repository = r.repository();
    const auto configurations = several.find(repository);
    if (configurations == several.end()) {
      const auto found = images->find(repository);
      if (found != images->end()) return add_image(found->second, repository);
      return add_image(LatestImage{r.manifest, {}, {r}}, repository);
    }
    // Several configurations: module/name names the one compose takes without --config (the default,
    // as choose_config decides), each other is named as push tags it (module/name:latest-<config>);
    // where none is the default, each has only its own name.
    const auto& names = configurations->second;
    auto chosen = choose_config(repository, names, ConfigChoice{std::nullopt, std::string(default_config)});
    const std::optional<std::string> named = chosen ? chosen->config : std::nullopt;
    auto lines = m_history->config_latest_of(r.module, r.name);
    if (!lines) return fail(lines.error());
    std::vector<std::string> order;
    if (named) order.push_back(*named);
    for (const auto& c : names) {
      if (c != named) order.push_back(c);
    }
    for (const auto& config : order) {
      auto image = config_image(r, config, *lines);
      if (!image) return fail(image.error());
      if (!*image) continue;
      const std::string ref_name =
          config == named ? repository : repository + ":" + latest_tag(config, names, default_config);
      if (auto s = add_image(**image, ref_name); !s) return s;
    }
    return {};
  });
  if (!latest) return fail(latest.error());
  auto others = m_history->others_in_view();
  if (!others) return fail(others.error());
  // Pulled images, and the referrers of what the view lists; those of older records stay in the history.
  for (auto& d : *others) {
    const auto subject = d.annotation(annotation::k_subject);
    if (!subject.empty() && !listed.contains(subject)) continue;
    if (auto s = add_once(std::move(d)); !s) return s;
  }
  return {};
}

Result<Index> Store::view() const { return view(default_config()); }

Result<Index> Store::view(std::string_view default_config) const {
  if (!m_history) return read_index();
  auto generation = m_history->generation();
  if (!generation) return fail(generation.error());
  Index index = view_shell(*generation, default_config);
  auto s = for_each_view_entry(default_config, [&](Descriptor&& d, std::string_view) -> Status {
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
  const std::string& default_config = Store::default_config();
  // Every byte is canonical_json's, as check and view_state read it back: the view without entries,
  // its empty "manifests" array then filled entry by entry, each canonical_json of its descriptor (keys
  // sorted, no space, so an array's elements are its members' texts joined by commas). Streamed rather
  // than canonical_json(to_json(view())), so that the memory of each commit does not grow with the
  // store's module/names (5,000 of them: 12 MB more and twice the CPU of a record).
  auto shell = canonical_json(to_json(view_shell(*generation, default_config)));
  if (!shell) return fail(std::move(shell.error()).context(context));
  constexpr std::string_view k_entries = R"("manifests":[)";
  const auto at = shell->find(std::string(k_entries) + "]");
  if (at == std::string::npos) return fail_input(context + ": the view has no manifests array");
  std::string text = shell->substr(0, at + k_entries.size());
  bool first = true;
  auto s = store.for_each_view_entry(default_config, [&](Descriptor&& d, std::string_view index_bytes) -> Status {
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

Result<Store::ViewState> Store::view_state(std::string* written_with) const {
  if (!path_exists(m_dir / "index.json")) return ViewState::missing;
  auto on_disk = read_index();
  if (!on_disk) return ViewState::differs;
  const std::string default_config = written_default_config(*on_disk);
  if (written_with != nullptr) *written_with = default_config;
  if (!m_history) return ViewState::current;
  // Derived with the default configuration it was written with: a view written under another
  // AREC_DEFAULT_CONFIG is current for what it says it is.
  auto derived = view(default_config);
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
  std::string written_with;
  auto state = m_store->view_state(&written_with);
  if (!state) return fail(state.error());
  if (*state == Store::ViewState::current && written_with == Store::default_config()) return {};
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
