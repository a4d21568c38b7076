// Bundles written: records and their referrers as one reproducible tarball (an OCI layout or a docker
// archive).
#include "store/bundle.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "store/bundle_internal.hpp"
#include "util/paths.hpp"
#include "util/tar_handles.hpp"

namespace arec {

namespace {

// One entry of a bundle: a directory, a blob streamed from the store, or a small generated document.
struct BundleEntry {
  std::string path;
  enum class Kind { directory, blob, text } kind = Kind::text;
  Descriptor blob;
  std::string text;
};

struct TarOutput {
  fs::AtomicFile* file;
  Status status;
};

la_ssize_t write_to_file(archive*, void* context, const void* buffer, std::size_t length) {
  auto* out = static_cast<TarOutput*>(context);
  if (auto s = out->file->write(std::span(static_cast<const std::byte*>(buffer), length)); !s) {
    out->status = s;
    return -1;
  }
  return static_cast<la_ssize_t>(length);
}

// Streams a blob into the tar entry whose header was just written, checking its size and digest.
Status copy_blob_data(archive* a, const Layout& store, const Descriptor& blob, std::vector<std::byte>& buffer,
                      const TarOutput& out) {
  const auto path = store.blob_path(blob.digest);
  auto fd = store.open_blob(blob.digest);
  if (!fd) return fail(fd.error());
  Hasher hasher(blob.digest.algorithm());
  std::int64_t remaining = blob.size;
  while (remaining > 0) {
    const auto want =
        static_cast<std::size_t>(std::min<std::int64_t>(remaining, static_cast<std::int64_t>(buffer.size())));
    auto n = fs::read_some(fd->get(), std::span(buffer.data(), want), path);
    if (!n) return fail(n.error());
    if (*n == 0)
      return fail_input(path.string() + ": shorter than its descriptor's " + std::to_string(blob.size) + " bytes");
    hasher.update(std::span(buffer.data(), *n));
    if (archive_write_data(a, buffer.data(), *n) < 0) {
      if (!out.status) return out.status;
      return fail_input("writing the bundle: " + tar::error_text(a));
    }
    remaining -= static_cast<std::int64_t>(*n);
  }
  if (hasher.finish() != blob.digest) return fail_input(path.string() + ": content does not match its digest");
  return {};
}

Status write_bundle_tar(const Layout& store, std::vector<BundleEntry> entries, const fs::Path& output,
                        std::int64_t mtime) {
  std::sort(entries.begin(), entries.end(), [](const BundleEntry& x, const BundleEntry& y) { return x.path < y.path; });
  auto file = fs::AtomicFile::create(fs::directory_of(output), output);
  if (!file) return fail(std::move(file.error()).context("writing " + output.string()));
  TarOutput out{&*file, {}};
  tar::Writer a(archive_write_new());
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_per_block(a.get(), static_cast<int>(k_block));
  // No padding after the end blocks: the bytes depend on the entries only.
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open2(a.get(), &out, nullptr, write_to_file, nullptr, nullptr) != ARCHIVE_OK) {
    return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
  }
  tar::Entry e(archive_entry_new());
  std::vector<std::byte> buffer(k_block);
  for (const auto& entry : entries) {
    archive_entry_clear(e.get());
    archive_entry_copy_pathname(e.get(), entry.path.c_str());
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), mtime, 0);
    if (entry.kind == BundleEntry::Kind::directory) {
      archive_entry_set_filetype(e.get(), AE_IFDIR);
      archive_entry_set_perm(e.get(), 0755);
    } else {
      archive_entry_set_filetype(e.get(), AE_IFREG);
      archive_entry_set_perm(e.get(), 0644);
      archive_entry_set_size(e.get(), entry.kind == BundleEntry::Kind::blob
                                          ? entry.blob.size
                                          : static_cast<std::int64_t>(entry.text.size()));
    }
    if (archive_write_header(a.get(), e.get()) < ARCHIVE_WARN) {
      if (!out.status) return out.status;
      return fail_input("writing " + output.string() + ": " + entry.path + ": " + tar::error_text(a.get()));
    }
    if (entry.kind == BundleEntry::Kind::blob) {
      if (auto s = copy_blob_data(a.get(), store, entry.blob, buffer, out); !s) return s;
    } else if (entry.kind == BundleEntry::Kind::text && !entry.text.empty()) {
      if (archive_write_data(a.get(), entry.text.data(), entry.text.size()) < 0) {
        if (!out.status) return out.status;
        return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
      }
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    if (!out.status) return out.status;
    return fail_input("writing " + output.string() + ": " + tar::error_text(a.get()));
  }
  return file->commit();
}

// What the bundle names by module/name, by position in `records` (oldest first): the last record of
// each module/name, or where it holds several configurations the last of each, the default's (as
// choose_config decides) as module/name and the others as module/name:latest-<config>.
std::map<std::size_t, std::string> bundle_names(const std::vector<Record>& records, std::string_view default_config) {
  std::map<std::string, std::map<std::string, std::size_t>> last;  // module/name -> configuration -> position
  for (std::size_t i = 0; i < records.size(); ++i) last[records[i].repository()][records[i].config] = i;
  std::map<std::size_t, std::string> out;
  for (const auto& [repository, configs] : last) {
    if (configs.size() == 1) {
      out.emplace(configs.begin()->second, repository);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& [config, at] : configs) names.push_back(config);
    auto chosen = choose_config(repository, names, ConfigChoice{std::nullopt, std::string(default_config)});
    for (const auto& [config, at] : configs) {
      const bool is_default = chosen && chosen->config == config;
      out.emplace(at, is_default ? repository : repository + ":" + latest_tag(config, names, default_config));
    }
  }
  return out;
}

std::string blob_entry_path(const Digest& digest) {
  return "blobs/" + std::string(digest.algorithm_name()) + "/" + digest.hex();
}

}  // namespace

nlohmann::json to_json(const BundleSummary& s) {
  return {{"records", s.records}, {"referrers", s.referrers}, {"blobs", s.blobs}, {"bytes", s.bytes}};
}

Result<BundleSummary> export_bundle(const Store& store, const std::vector<Record>& records, const fs::Path& output,
                                    BundleFormat format, std::int64_t mtime) {
  BundleSummary summary;
  std::map<Digest, Descriptor> blobs;
  auto add_blob = [&](const Descriptor& d, const std::string& of) -> Status {
    if (!store.has_blob(d))
      return fail_input(of + ": the store lacks its blob " + d.digest.str() + " (see arec check)");
    blobs.emplace(d.digest, d);
    return {};
  };
  // The bundle names each module/name as the store's view does: the last record of each module/name
  // (of its default configuration, where it has records of several; each other configuration's last as
  // module/name:latest-<config>), unless the module/name's image is an index over records the bundle
  // holds: then the index is, for OCI tools (arec import derives it again from the records).
  std::map<std::size_t, std::string> named = bundle_names(records, Store::default_config());
  auto indexes = store.indexes_of(records);
  if (!indexes) return fail(indexes.error());
  std::set<std::string> exported;
  for (const auto& r : records) exported.insert(r.identity());
  std::vector<BundleEntry> index_blobs;
  Index index;
  if (format == BundleFormat::oci) {
    for (const auto& image : *indexes) {
      if (!std::ranges::all_of(image.platforms, [&](const Record& p) { return exported.contains(p.identity()); }))
        continue;
      const auto repository = image.platforms.front().repository();
      std::erase_if(named, [&](const auto& entry) { return records[entry.first].repository() == repository; });
      Descriptor d = image.descriptor;
      d.annotations.emplace(annotation::k_ref_name, repository);
      index.manifests.push_back(std::move(d));
      index_blobs.push_back({blob_entry_path(image.descriptor.digest), BundleEntry::Kind::text, {}, image.index});
    }
  }

  nlohmann::json docker = nlohmann::json::array();
  std::set<Digest> listed;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& record = records[i];
    const auto name = named.find(i);
    const bool latest = name != named.end();
    const std::string of = record.identity();
    auto manifest = store.read_manifest(record.manifest);
    if (!manifest) return fail(std::move(manifest.error()).context(of));
    if (format == BundleFormat::oci) {
      if (auto s = add_blob(record.manifest, of); !s) return fail(s.error());
    }
    if (auto s = add_blob(manifest->config, of); !s) return fail(s.error());
    for (const auto& layer : manifest->layers) {
      if (auto s = add_blob(layer, of); !s) return fail(s.error());
    }
    ++summary.records;
    if (format == BundleFormat::docker) {
      // docker's archive format (docker save): config and layers named by path; layers may be compressed.
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& layer : manifest->layers) layers.push_back(blob_entry_path(layer.digest));
      nlohmann::json tags = nlohmann::json::array();
      // module/name:latest, or the configuration's own tag, as push tags them.
      if (latest) tags.push_back(name->second.find(':') == std::string::npos ? name->second + ":latest" : name->second);
      docker.push_back({{"Config", blob_entry_path(manifest->config.digest)}, {"RepoTags", tags}, {"Layers", layers}});
      continue;
    }
    Descriptor entry = to_descriptor(record, Latest::no);
    if (latest) entry.annotations.emplace(annotation::k_ref_name, name->second);
    index.manifests.push_back(std::move(entry));
    auto referrers = store.referrers(record.manifest.digest);
    if (!referrers) return fail(referrers.error());
    for (const auto& referrer : *referrers) {
      if (!listed.insert(referrer.digest).second) continue;
      const std::string referrer_of = "referrer " + referrer.digest.str() + " of " + of;
      auto referrer_manifest = store.read_manifest(referrer);
      if (!referrer_manifest) return fail(std::move(referrer_manifest.error()).context(referrer_of));
      if (auto s = add_blob(referrer, referrer_of); !s) return fail(s.error());
      if (auto s = add_blob(referrer_manifest->config, referrer_of); !s) return fail(s.error());
      for (const auto& layer : referrer_manifest->layers) {
        if (auto s = add_blob(layer, referrer_of); !s) return fail(s.error());
      }
      index.manifests.push_back(referrer);
      ++summary.referrers;
    }
  }

  std::vector<BundleEntry> entries;
  std::set<std::string> directories{"blobs"};
  for (const auto& [digest, d] : blobs) {
    directories.insert("blobs/" + std::string(digest.algorithm_name()));
    entries.push_back({blob_entry_path(digest), BundleEntry::Kind::blob, d, {}});
    ++summary.blobs;
    summary.bytes += d.size;
  }
  for (auto& entry : index_blobs) {
    summary.bytes += static_cast<std::int64_t>(entry.text.size());
    ++summary.blobs;
    entries.push_back(std::move(entry));
  }
  for (const auto& dir : directories) entries.push_back({dir + "/", BundleEntry::Kind::directory, {}, {}});
  if (format == BundleFormat::oci) {
    auto text = canonical_json(to_json(index));
    if (!text) return fail(text.error());
    entries.push_back({"index.json", BundleEntry::Kind::text, {}, *text});
    entries.push_back({"oci-layout", BundleEntry::Kind::text, {}, std::string(k_oci_layout_document)});
  } else {
    auto text = canonical_json(docker);
    if (!text) return fail(text.error());
    entries.push_back({"manifest.json", BundleEntry::Kind::text, {}, *text});
  }
  if (auto s = write_bundle_tar(store, std::move(entries), output, mtime); !s) return fail(s.error());
  return summary;
}

}  // namespace arec
