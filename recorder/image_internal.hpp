// What record_image's parts share: the layers packed (image_layers.cpp) and the base and config
// (image_config.cpp). Private to recorder/: included by its .cpp files only.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "recorder/image.hpp"
#include "recorder/layering.hpp"
#include "recorder/sbom.hpp"

namespace arec {

struct Layer {
  Descriptor descriptor;
  Digest diff_id;
};

// The SBOM's files: each one's package, and the SHA-1 and SHA-256 of those of no package. The packages
// are looked up on a thread beside the packing of new content; the checksums are made by the packing
// itself, from the same read of each file that feeds the layer (TarOptions::checksums), so new content
// is read once. A file no packing read (a layer the store had already) is read for them afterwards; an
// unchanged relink, whose SBOM the store has, never asks for them.
class SbomHashes {
 public:
  SbomHashes(const RecordRequest& request, std::vector<LayerEntry> entries, std::map<std::string, DebianPackage> known,
             OwnersOf owners_of)
      : m_request(request),
        m_entries(std::move(entries)),
        m_known(std::move(known)),
        m_owners_of(std::move(owners_of)) {}
  // Called by each layer being packed, several at once: the first starts the thread.
  void start() {
    if (m_request.sboms.empty()) return;
    std::call_once(m_started, [this] {
      m_files = std::async(std::launch::async, [this] {
        return sbom_packages(m_entries, DpkgDatabase(m_request.dpkg_admin_dir), m_known, m_owners_of);
      });
    });
  }
  // What a layer's packing fills in, for the files the SBOM may list; nothing when there is no SBOM.
  TarOptions tar_options(std::int64_t mtime) {
    TarOptions options;
    options.mtime = mtime;
    if (m_request.sboms.empty()) return options;
    options.checksums = &m_checksums;
    // A package's file is named by its package, never hashed (packages found in dpkg are only known
    // later, and their files few beside the build's own).
    options.checksum_wanted = [this](const LayerEntry& e) { return !m_known.contains(e.path); };
    return options;
  }
  // Once every layer is packed.
  Result<std::vector<SbomFile>> take() {
    start();
    auto files = m_files.get();
    if (!files) return fail(files.error());
    if (auto s = add_checksums(*files, m_entries, &m_checksums); !s) return fail(s.error());
    return files;
  }
  // Every entry the SBOM describes (the OS identity's left out).
  const std::vector<LayerEntry>& entries() const { return m_entries; }

 private:
  const RecordRequest& m_request;
  const std::vector<LayerEntry> m_entries;
  const std::map<std::string, DebianPackage> m_known;  // files whose package is known: a package's layer's
  const OwnersOf m_owners_of;
  std::once_flag m_started;
  std::future<Result<std::vector<SbomFile>>> m_files;
  ChecksumTable m_checksums;
};

enum class RecordedBefore { yes, no };

// What the SBOM says besides the files: the OS when the record holds its identity, the distribution
// purls name (the build host's), what needs what at run time (the runtime closure's), and the declared
// dependency (an index in RecordRequest::dependencies) of each file that is one's.
struct SbomScope {
  const std::optional<Distribution>& os;
  const std::optional<Distribution>& purls;
  const std::vector<std::pair<std::string, std::string>>& needs;
  const std::map<std::string, std::size_t>& dependency_of;
};

// The SBOMs of a record, made for the formats asked for that the store has none of yet.
struct SbomsMade {
  std::vector<Descriptor> referrers;       // to list beside the record
  std::vector<StatementSubject> subjects;  // each document, as a signature statement names it
};

// image_sbom.cpp
Result<SbomsMade> sbom_referrers(const RecordRequest& request, SbomHashes& hashes, Store& store,
                                 const Descriptor& image, const SbomScope& scope,
                                 const std::function<const std::string&()>& revision);

// What a record takes from its base image: the manifest (its layers) and the config it extends.
struct BaseParts {
  Manifest manifest;
  ImageConfig config;
};

// image_layers.cpp
Result<Layer> pack_layer(const RecordRequest& request, const std::vector<LayerEntry>& entries, Store& store,
                         RecordedBefore recorded, SbomHashes& sbom);
std::optional<fs::Path> files_identity(const RecordRequest& request, const std::vector<LayerEntry>& entries,
                                       const Store& store);
std::optional<Layer> layer_of_identity(const RecordRequest& request, const fs::Path& identity, const Store& store);
Result<std::vector<Descriptor>> copy_base_layers(const RecordRequest& request, const std::optional<BaseParts>& base,
                                                 Store& store);

// image.cpp: the warning of `kind` about the files of `each`, summarised by `summary` (given the count of
// files and the first few, "/a, /b, /c, and 2 more") when they are more than k_warning_named_files;
// nothing when none.
std::optional<RecordWarning> warning_of(std::string kind, const std::vector<FileWarning>& each,
                                        std::string (*summary)(std::size_t files, std::string_view named));

// build_warnings.cpp: what the build should know of where its files landed: libraries at paths made
// from the build tree's layout, libraries of this machine that nothing names, plugins left out.
Result<std::vector<RecordWarning>> build_warnings(const RecordRequest& request, const RuntimeClosure& closure,
                                                  const std::vector<LayerGroup>& groups,
                                                  const std::map<std::string, std::size_t>& dependency_of);

// image_config.cpp
Result<std::optional<BaseParts>> read_base(const RecordRequest& request);
Status check_base_platform(const RecordRequest& request, const std::optional<BaseParts>& base,
                           const std::optional<Platform>& platform);
ImageConfig image_config(const RecordRequest& request, const std::optional<BaseParts>& base,
                         const std::optional<Platform>& platform, const std::vector<Layer>& layers,
                         const std::vector<LayerGroup>& groups, const std::string& user);
Result<Descriptor> write_image(const RecordRequest& request, const ImageConfig& config, std::vector<Descriptor> layers,
                               Store& store);
Record new_record(const RecordRequest& request, const Descriptor& manifest, std::string revision);

}  // namespace arec
