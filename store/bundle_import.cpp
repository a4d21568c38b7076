// Bundles read back: every entry checked and every blob verified before the store is touched.
#include "store/bundle.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "store/bundle_internal.hpp"
#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace {

// index.json and oci-layout of a bundle are read whole; nothing arec writes comes near this.
constexpr std::int64_t k_max_document = std::int64_t{64} << 20;

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

// A digest and size of a blob the bundle holds.
using BundleBlobs = std::map<Digest, std::int64_t>;

struct CheckedBundle {
  BundleBlobs blobs;
  std::string index;
};

// The entry's path with "./" and a trailing "/" dropped, or why it is refused.
Result<std::string> bundle_path(std::string_view name, const std::string& what) {
  if (name.empty()) return fail_input(what + ": an entry without a name");
  if (name.front() == '/') return fail_input(what + ": entry " + in_quotes(name) + ": an absolute path");
  auto normal = normalise_path(name);
  if (!normal) return fail_input(what + ": entry " + in_quotes(name) + ": climbs out of the bundle (\"..\")");
  return std::move(*normal);
}

// The digest a blob entry's path (blobs/ALGORITHM/HEX) names.
Result<Digest> blob_digest(std::string_view path) {
  const auto slash = path.find('/', 6);
  if (!path.starts_with("blobs/") || slash == std::string_view::npos) return fail_input("not blobs/ALGORITHM/HEX");
  return Digest::parse(std::string(path.substr(6, slash - 6)) + ":" + std::string(path.substr(slash + 1)));
}

// Whether a link at `path` to `target` resolves outside the bundle's root.
bool points_out(const std::string& path, std::string_view target, LayerFile::Type type) {
  if (target.starts_with('/')) return true;
  // A hard link's target is a path from the root; a symbolic link's from its directory.
  int depth = 0;
  if (type == LayerFile::Type::symlink) depth = static_cast<int>(std::count(path.begin(), path.end(), '/'));
  std::size_t pos = 0;
  while (pos <= target.size()) {
    const std::size_t end = std::min(target.find('/', pos), target.size());
    const std::string_view part = target.substr(pos, end - pos);
    if (part == "..") {
      if (--depth < 0) return true;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    pos = end + 1;
  }
  return false;
}

Result<std::string> read_document(archive* a, archive_entry* entry, const std::string& what, const std::string& path) {
  const std::int64_t size = archive_entry_size(entry);
  if (size > k_max_document) return fail_input(what + ": entry " + in_quotes(path) + ": larger than 64 MiB");
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const la_ssize_t n = archive_read_data(a, text.data() + got, text.size() - got);
    if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != text.size()) return fail_input(what + ": entry " + in_quotes(path) + ": cut short");
  return text;
}

// Hashes the data of a blob entry; its size and digest must be what its name and header say.
Status check_blob_data(archive* a, const Digest& digest, std::int64_t size, std::vector<std::byte>& buffer,
                       const std::string& what, const std::string& path) {
  Hasher hasher(digest.algorithm());
  std::int64_t got = 0;
  for (;;) {
    const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
    if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
    if (n == 0) break;
    hasher.update(std::span(buffer.data(), static_cast<std::size_t>(n)));
    got += n;
  }
  if (got != size) return fail_input(what + ": entry " + in_quotes(path) + ": cut short");
  if (hasher.finish() != digest)
    return fail_input(what + ": entry " + in_quotes(path) + ": content does not match its digest");
  return {};
}

// Calls `visit` with each entry of the bundle and its path inside it, checked by bundle_path.
using EntryVisitor = std::function<Status(archive* a, archive_entry* entry, const std::string& path)>;
Status for_each_entry(const fs::Path& bundle, const std::string& what, const EntryVisitor& visit) {
  auto a = tar::open_reader(bundle, k_block, what);
  if (!a) return fail(a.error());
  archive_entry* entry = nullptr;
  int r = ARCHIVE_OK;
  while ((r = archive_read_next_header(a->get(), &entry)) == ARCHIVE_OK) {
    const char* raw = archive_entry_pathname(entry);
    auto path = bundle_path(raw != nullptr ? raw : "", what);
    if (!path) return fail(path.error());
    if (auto s = visit(a->get(), entry, *path); !s) return s;
  }
  if (r != ARCHIVE_EOF) return fail_input(what + ": " + tar::error_text(a->get()));
  return {};
}

// The first pass: every entry checked, every blob verified, nothing written.
Result<CheckedBundle> check_bundle(const fs::Path& bundle, const std::string& what, std::int64_t max_expansion) {
  std::error_code ec;
  const auto bundle_size = static_cast<std::int64_t>(std::filesystem::file_size(bundle, ec));
  // A gzip stream expands up to about a thousand times: a few megabytes could fill the disk with a blob.
  const std::int64_t allowed = std::max<std::int64_t>(ec ? 0 : bundle_size * max_expansion, std::int64_t{1} << 20);
  std::int64_t expanded = 0;
  CheckedBundle out;
  std::set<std::string> seen;
  std::optional<std::string> layout;
  bool docker_manifest = false;
  std::vector<std::byte> buffer(k_block);
  auto read = for_each_entry(bundle, what, [&](archive* a, archive_entry* entry, const std::string& path) -> Status {
    const std::string name = archive_entry_pathname(entry);
    const auto type = file_type(entry);
    if (type == LayerFile::Type::symlink || type == LayerFile::Type::hardlink) {
      const char* target_text =
          type == LayerFile::Type::symlink ? archive_entry_symlink(entry) : archive_entry_hardlink(entry);
      const std::string target = target_text != nullptr ? target_text : "";
      const std::string kind = type == LayerFile::Type::symlink ? "a symbolic link" : "a hard link";
      if (points_out(path, target, type)) {
        return fail_input(what + ": entry " + in_quotes(name) + ": " + kind + " pointing out of the bundle (to " +
                          in_quotes(target) + ")");
      }
      return fail_input(what + ": entry " + in_quotes(name) + ": " + kind + " (to " + in_quotes(target) +
                        "), not a regular file");
    }
    if (type == LayerFile::Type::other)
      return fail_input(what + ": entry " + in_quotes(name) + ": not a regular file or directory");
    if (path.empty()) return {};
    if (!seen.insert(path).second) return fail_input(what + ": entry " + in_quotes(name) + ": appears twice");
    if (type == LayerFile::Type::directory) return {};
    expanded += std::max<std::int64_t>(archive_entry_size(entry), 0);
    if (expanded > allowed) {
      return fail_input(what + ": its entries hold more than " + std::to_string(allowed) + " bytes, " +
                        std::to_string(max_expansion) + " times the bundle's " + std::to_string(bundle_size) +
                        " (--max-expansion allows more)");
    }
    if (path.starts_with("blobs/")) {
      auto digest = blob_digest(path);
      if (!digest)
        return fail_input(what + ": entry " + in_quotes(name) + ": not a blob name (" + digest.error().message + ")");
      // The store keeps sha256 blobs (blobs/sha256/): another algorithm is refused here, before the
      // store is created or a byte written.
      if (digest->algorithm() != DigestAlgorithm::sha256) {
        return fail_input(what + ": entry " + in_quotes(name) + ": a blob under " +
                          std::string(digest->algorithm_name()) + ", which arec does not accept (only sha256)");
      }
      if (auto s = check_blob_data(a, *digest, archive_entry_size(entry), buffer, what, name); !s)
        return fail(s.error());
      out.blobs.emplace(*digest, archive_entry_size(entry));
    } else if (path == "index.json") {
      auto text = read_document(a, entry, what, name);
      if (!text) return fail(text.error());
      out.index = std::move(*text);
    } else if (path == "oci-layout") {
      auto text = read_document(a, entry, what, name);
      if (!text) return fail(text.error());
      layout = std::move(*text);
    } else if (path == "manifest.json") {
      docker_manifest = true;
    }
    return {};
  });
  if (!read) return fail(read.error());
  if (!layout || out.index.empty()) {
    if (docker_manifest)
      return fail_input(what + ": a docker archive; arec import reads OCI bundles (arec export --format oci)");
    return fail_input(what + ": not an OCI bundle (no " + std::string(layout ? "index.json" : "oci-layout") + ")");
  }
  if (auto s = check_oci_layout(*layout, what + ": oci-layout"); !s) return fail(s.error());
  return out;
}

// Calls `visit` with each regular entry under blobs/ of the bundle and the digest its name gives
// (nothing when the name is not one); entries that `visit` does not read are skipped.
using BlobEntryVisitor =
    std::function<Status(archive* a, archive_entry* entry, const std::string& path, const Result<Digest>& digest)>;
Status for_each_blob_entry(const fs::Path& bundle, const std::string& what, const BlobEntryVisitor& visit) {
  return for_each_entry(bundle, what, [&](archive* a, archive_entry* entry, const std::string& path) -> Status {
    if (!path.starts_with("blobs/") || file_type(entry) != LayerFile::Type::file) return {};
    return visit(a, entry, path, blob_digest(path));
  });
}

// The second pass: the blobs the store lacks, streamed into it. Each is hashed again as it is written
// and committed under the digest of what was written, so a bundle changed since the first pass cannot
// put wrong bytes under a name.
Status write_blobs(const fs::Path& bundle, const std::string& what, Store& store, const BundleBlobs& blobs,
                   ImportSummary& summary) {
  std::vector<std::byte> buffer(k_block);
  return for_each_blob_entry(
      bundle, what, [&](archive* a, archive_entry*, const std::string& path, const Result<Digest>& digest) -> Status {
        if (!digest || !blobs.contains(*digest)) return fail_input(what + ": changed while it was being read");
        const Descriptor d{"", *digest, blobs.at(*digest), {}, {}, {}, {}};
        if (store.has_blob(d)) {
          ++summary.blobs_present;
          return {};
        }
        auto writer = store.begin_blob(Hashing::yes);
        if (!writer) return fail(writer.error());
        for (;;) {
          const la_ssize_t n = archive_read_data(a, buffer.data(), buffer.size());
          if (n < 0) return fail_input(what + ": entry " + in_quotes(path) + ": " + tar::error_text(a));
          if (n == 0) break;
          if (auto s = writer->write(std::span(buffer.data(), static_cast<std::size_t>(n))); !s) return s;
        }
        auto written = writer->commit("");
        if (!written) return fail(written.error());
        if (written->digest != d.digest || written->size != d.size)
          return fail_input(what + ": changed while it was being read");
        ++summary.blobs_written;
        summary.bytes += d.size;
        return {};
      });
}

// Calls `visit` with each blob of `wanted` read whole from the bundle (small ones: manifests, bundles),
// its bytes checked against its digest; the other entries are skipped, which for an uncompressed tarball
// is a seek.
using SmallBlobVisitor = std::function<Status(const Digest& digest, std::string&& bytes)>;
Status for_each_small_blob(const fs::Path& bundle, const std::string& what, const std::set<Digest>& wanted,
                           const SmallBlobVisitor& visit) {
  return for_each_blob_entry(
      bundle, what,
      [&](archive* a, archive_entry* entry, const std::string& path, const Result<Digest>& digest) -> Status {
        if (!digest || !wanted.contains(*digest)) return {};
        auto text = read_document(a, entry, what, path);
        if (!text) return fail(text.error());
        if (digest_of(*text, digest->algorithm()) != *digest)
          return fail_input(what + ": changed while it was being read");
        return visit(*digest, std::move(*text));
      });
}

// The manifests `wanted` (those index.json lists), read from the bundle.
Result<std::map<Digest, Manifest>> read_bundle_manifests(const fs::Path& bundle, const std::string& what,
                                                         const std::set<Digest>& wanted) {
  std::map<Digest, Manifest> out;
  auto s = for_each_small_blob(bundle, what, wanted, [&](const Digest& digest, std::string&& text) -> Status {
    auto manifest = parse_document<Manifest>(text, what + ": manifest " + digest.str());
    if (!manifest) return fail(manifest.error());
    out.emplace(digest, std::move(*manifest));
    return {};
  });
  if (!s) return fail(s.error());
  return out;
}

// Under a policy that checks: every record signed by a trusted key, by the bundles `bundle` holds for
// its image (its referrers of the bundle type), or an error (exit 4) naming the first that is not.
Status admit_imported(const fs::Path& bundle, const std::string& what, const TrustPolicy& policy,
                      const std::vector<Record>& records,
                      const std::map<std::string, std::vector<Descriptor>>& referrers,
                      const std::map<Digest, Manifest>& manifests) {
  std::set<Digest> layers;
  for (const auto& [subject, listed] : referrers) {
    for (const auto& d : listed) {
      const auto m = manifests.find(d.digest);
      if (d.artifact_type != media_type::k_sigstore_bundle || m == manifests.end() || m->second.layers.size() != 1 ||
          m->second.layers.front().size > static_cast<std::int64_t>(k_max_bundle))
        continue;
      layers.insert(m->second.layers.front().digest);
    }
  }
  std::map<Digest, std::string> texts;
  auto read = for_each_small_blob(bundle, what, layers, [&](const Digest& digest, std::string&& bytes) -> Status {
    texts.emplace(digest, std::move(bytes));
    return {};
  });
  if (!read) return fail(read.error());
  for (const auto& record : records) {
    std::vector<std::string> bundles;
    if (const auto listed = referrers.find(record.manifest.digest.str()); listed != referrers.end()) {
      for (const auto& d : listed->second) {
        const auto m = manifests.find(d.digest);
        if (m == manifests.end() || m->second.layers.size() != 1) continue;
        if (const auto t = texts.find(m->second.layers.front().digest); t != texts.end()) bundles.push_back(t->second);
      }
    }
    const auto verdict = judge_signatures(bundles, record.manifest.digest, record.repository(), &record, policy);
    if (verdict.state != SignatureState::trusted) {
      return fail(Error::trust(what + ": the record " + record.identity() + " is " + refusal(verdict) +
                               ": no bundle verifies under a trusted key; nothing imported"));
    }
  }
  return {};
}

}  // namespace

nlohmann::json to_json(const ImportSummary& s) {
  return {{"records_added", s.records_added},
          {"records_present", s.records_present},
          {"referrers", s.referrers},
          {"blobs_written", s.blobs_written},
          {"blobs_present", s.blobs_present},
          {"bytes", s.bytes},
          {"kept", s.kept}};
}

Result<ImportSummary> import_bundle(const fs::Path& bundle, const fs::Path& store_dir, std::int64_t max_expansion,
                                    const ImportChecks& checks) {
  const std::string what = "bundle " + bundle.string();
  auto checked = check_bundle(bundle, what, max_expansion);
  if (!checked) return fail(checked.error());
  auto index = parse_document<Index>(checked->index, what + ": index.json");
  if (!index) return fail(index.error());

  std::vector<Record> records;
  std::map<std::string, std::vector<Descriptor>> referrers;  // by subject digest
  for (const auto& d : index->manifests) {
    if (auto subject = d.annotation(annotation::k_subject); !subject.empty()) {
      referrers[subject].push_back(d);
    } else if (auto record = record_from_descriptor(d)) {
      records.push_back(std::move(*record));
    }
  }
  if (records.empty())
    return fail_input(what + ": index.json lists no records (arec import reads what arec export writes)");
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  for (const auto& record : records) {
    if (auto s = validate_record_fields(record, what + ": index.json"); !s) return fail(s.error());
    // What the index says of a record is believed only as far as a record document could hold it: a
    // record names an image manifest, never an index.
    auto document = record_document(record);
    if (!document) return fail(document.error());
    if (auto read = parse_record_document(*document, what + ": index.json: the record " + record.identity()); !read)
      return fail(read.error());
    // A record from the future would be the newest, and stay the latest, until that time comes.
    if (rfc3339_seconds(record.recorded).value_or(0) > now + k_clock_tolerance_seconds) {
      return fail_input(what + ": the record " + record.identity() + " is recorded " + record.recorded +
                        ", more than " + std::to_string(k_clock_tolerance_seconds / 60) +
                        " minutes ahead of this machine's clock (" + rfc3339(now) + ")");
    }
  }
  // Everything named must be in the bundle before anything is written: the manifests index.json lists,
  // and their configs and layers.
  const auto held = [&](const Descriptor& d) {
    const auto found = checked->blobs.find(d.digest);
    return found != checked->blobs.end() && found->second == d.size;
  };
  std::vector<Descriptor> listed;
  for (const auto& r : records) listed.push_back(r.manifest);
  for (const auto& [subject, of_subject] : referrers) listed.insert(listed.end(), of_subject.begin(), of_subject.end());
  std::set<Digest> wanted;
  for (const auto& d : listed) {
    if (!held(d)) return fail_input(what + ": index.json lists " + d.digest.str() + ", which the bundle does not hold");
    wanted.insert(d.digest);
  }
  auto manifests = read_bundle_manifests(bundle, what, wanted);
  if (!manifests) return fail(manifests.error());
  for (const auto& record : records) {
    const auto m = manifests->find(record.manifest.digest);
    if (m != manifests->end() && !m->second.subject) continue;
    return fail_input(what + ": index.json: the record " + record.identity() + " names no image manifest");
  }
  for (const auto& [digest, manifest] : *manifests) {
    for (const auto& blob : manifest.layers) {
      if (!held(blob))
        return fail_input(what + ": manifest " + digest.str() + " needs the layer " + blob.digest.str() +
                          ", which the bundle does not hold");
    }
    if (!held(manifest.config)) {
      return fail_input(what + ": manifest " + digest.str() + " needs the config " + manifest.config.digest.str() +
                        ", which the bundle does not hold");
    }
  }

  if (checks.trust && checks.trust->checks()) {
    if (auto s = admit_imported(bundle, what, *checks.trust, records, referrers, *manifests); !s)
      return fail(s.error());
  }

  auto store = Store::open(store_dir);
  if (!store) return fail(store.error());
  ImportSummary summary;
  auto history = store->records(History::all);
  if (!history) return fail(history.error());
  // Looked up in a set, not by a walk of the history per record: an import is O(N log N) in records.
  std::set<std::tuple<std::string, Digest, std::string>> held_records;
  for (const auto& r : *history) held_records.emplace(r.repository(), r.manifest.digest, r.recorded);
  std::vector<Record> incoming;
  for (const auto& record : records) {
    if (held_records.contains({record.repository(), record.manifest.digest, record.recorded})) {
      ++summary.records_present;
      continue;
    }
    incoming.push_back(record);
  }
  // Never an older record in the place of the store's latest, unless asked.
  std::set<std::size_t> older;
  if (checks.older == Older::refused) {
    const HeldLatest latest_of = [&](const Record& r) { return store->latest_of_config(r.module, r.name, r.config); };
    auto back = rollbacks(incoming, latest_of);
    if (!back) return fail(back.error());
    for (const std::size_t i : *back) {
      auto latest = latest_of(incoming[i]);
      if (!latest) return fail(latest.error());
      summary.kept.push_back(incoming[i].identity() + ", recorded " + incoming[i].recorded +
                             ", is older than the store's latest " + (*latest)->identity() + ", recorded " +
                             (*latest)->recorded + ": not added (import --allow-older takes it)");
      older.insert(i);
    }
  }
  if (auto s = write_blobs(bundle, what, *store, checked->blobs, summary); !s) return fail(s.error());
  // Added in one transaction and one write of the view, so an import is O(N) in records.
  std::vector<std::pair<Record, std::vector<Descriptor>>> to_add;
  for (std::size_t i = 0; i < incoming.size(); ++i) {
    if (!older.contains(i)) to_add.emplace_back(incoming[i], referrers[incoming[i].manifest.digest.str()]);
  }
  auto writer = store->writer();
  if (!writer) return fail(writer.error());
  auto committed = writer->commit_all(to_add);
  if (!committed) return fail(committed.error());
  // Records of one image (the same bytes built again) share its referrers: each is counted once, as
  // export counts them.
  std::set<Digest> referrers_added;
  for (std::size_t i = 0; i < committed->size(); ++i) {
    if ((*committed)[i].changed) {
      ++summary.records_added;
      for (const auto& r : to_add[i].second) referrers_added.insert(r.digest);
    } else {
      ++summary.records_present;
    }
  }
  summary.referrers = static_cast<int>(referrers_added.size());
  return summary;
}

}  // namespace arec
