#include "recorder/image.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "recorder/layering.hpp"
#include "recorder/sbom.hpp"
#include "util/process.hpp"

namespace arec {

namespace {

// Counts what a pass writes and keeps none of it: the DiffID pre-pass needs only the tar's hash and size.
class CountingSink final : public ByteSink {
 public:
  Status write(std::span<const std::byte> data) override {
    m_size += static_cast<std::int64_t>(data.size());
    return {};
  }
  Status finish() override { return {}; }
  std::int64_t size() const { return m_size; }

 private:
  std::int64_t m_size = 0;
};

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
    if (m_request.sbom == SbomFormat::none) return;
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
    if (m_request.sbom == SbomFormat::none) return options;
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

// Packs the layer. When the module/name was recorded before, a relink often produced identical bytes:
// a hash-only pass finds the DiffID first, and a layer already compressed for it is reused instead of
// being compressed again. New content pays one extra read of its inputs for that chance.
Result<Layer> pack_layer(const RecordRequest& request, const std::vector<LayerEntry>& entries, Store& store,
                         RecordedBefore recorded, SbomHashes& sbom) {
  TarOptions tar;
  tar.mtime = request.mtime;
  const Compression compression = request.compression;
  std::optional<Digest> expected;
  if (recorded == RecordedBefore::yes) {
    CountingSink counter;
    HashingSink hashing(counter);
    if (auto s = write_tar(entries, tar, hashing); !s) return fail(s.error());
    const Digest diff_id = hashing.digest();
    const Descriptor tar_blob{std::string(layer_media_type(compression)), diff_id, counter.size(), {}, {}, {}, {}};
    if (compression == Compression::none && store.has_blob(tar_blob)) return Layer{tar_blob, diff_id};
    if (auto cached = store.cached_layer(diff_id, compression)) return Layer{*cached, diff_id};
    expected = diff_id;
  }
  sbom.start();
  const TarOptions packing = sbom.tar_options(request.mtime);
  // Uncompressed, the blob is the tar and its digest the DiffID: hashed once, not twice.
  auto writer = store.begin_blob(compression == Compression::none ? Hashing::no : Hashing::yes);
  if (!writer) return fail(writer.error());
  // The blob file is written on a thread of its own, so hashing and compressing never wait for the disk.
  auto to_disk = make_background_sink(*writer);
  auto compressor = make_compressor(compression, CompressOptions{request.threads, -1}, *to_disk);
  HashingSink hashing(*compressor);
  // gzip's workers keep both cores busy, and the DiffID is hashed as the tar is made. Uncompressed,
  // hashing is the slowest stage, and beside zstd's workers it is one the calling thread can hand off:
  // it gets a thread of its own, so reading the inputs does not wait for it (zstd 5% quicker).
  auto hash_thread = compression != Compression::gzip ? make_background_sink(hashing) : nullptr;
  if (auto s = write_tar(entries, packing, hash_thread ? *hash_thread : static_cast<ByteSink&>(hashing)); !s) {
    return fail(s.error());
  }
  const Digest diff_id = hashing.digest();
  if (expected && *expected != diff_id) return fail_input("the inputs changed while being recorded; record again");
  auto descriptor = writer->commit(layer_media_type(compression),
                                   compression == Compression::none ? std::optional(diff_id) : std::nullopt);
  if (!descriptor) return fail(descriptor.error());
  if (compression != Compression::none) store.remember_layer(diff_id, compression, *descriptor);
  return Layer{*descriptor, diff_id};
}

// What a package's layer is made of, as it is on disk now: every entry, and for each file where it is
// read from with its size, inode, modification and change times (the change time no tool can set back).
// A layer of the same files is the same layer: found by this key, it is reused without its files being
// read again, where the DiffID would need all of them read and hashed (23 MB for a program on OpenSSL).
// Nothing for a file that cannot be seen, or uncompressed layers (their blob is the tar itself).
std::optional<fs::Path> files_identity(const RecordRequest& request, const std::vector<LayerEntry>& entries,
                                       const Store& store) {
  if (request.compression == Compression::none) return std::nullopt;
  std::string text = std::string(compression_name(request.compression)) + " " + std::to_string(request.mtime) + "\n";
  for (const auto& e : entries) {
    text += std::to_string(static_cast<int>(e.type)) + " " + std::to_string(e.mode) + " " + e.path + "\0" +
            e.link_target + "\0";
    if (e.type == LayerEntry::Type::file && e.source.empty()) {
      text += "generated " + digest_of(e.content).hex();
    } else if (e.type == LayerEntry::Type::file) {
      struct stat st {};
      if (::lstat(e.source.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != e.size) return std::nullopt;
      text += e.source.string() + "\0" + std::to_string(st.st_size) + " " + std::to_string(st.st_dev) + " " +
              std::to_string(st.st_ino) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ctim.tv_sec) + "." +
              std::to_string(st.st_ctim.tv_nsec);
    }
    text += "\n";
  }
  return store.files_shortcut_path(digest_of(text));
}

// The layer compressed before from files of that identity, when the store still has it.
std::optional<Layer> layer_of_identity(const RecordRequest& request, const fs::Path& identity, const Store& store) {
  if (::access(identity.c_str(), F_OK) != 0) return std::nullopt;
  auto text = fs::read_file(identity);
  if (!text) return std::nullopt;
  auto diff_id = Digest::parse(*text);
  if (!diff_id) return std::nullopt;
  auto cached = store.cached_layer(*diff_id, request.compression);
  if (!cached) return std::nullopt;
  return Layer{*cached, *diff_id};
}

// What a record takes from its base image: the manifest (its layers) and the config it extends.
struct BaseParts {
  Manifest manifest;
  ImageConfig config;
};

// The base's manifest and config, checked against each other; nothing without a base.
Result<std::optional<BaseParts>> read_base(const RecordRequest& request) {
  if (!request.base) return std::nullopt;
  const BaseImage& base = *request.base;
  const std::string what = "base image " + base.manifest.digest.str();
  auto manifest = base.layout.read_manifest(base.manifest);
  if (!manifest) return fail(std::move(manifest.error()).context(what));
  auto config = base.layout.read_config(*manifest);
  if (!config) return fail(std::move(config.error()).context(what));
  if (config->diff_ids.size() != manifest->layers.size()) {
    return fail_input(what + ": config lists " + std::to_string(config->diff_ids.size()) + " layers, manifest " +
                      std::to_string(manifest->layers.size()));
  }
  return BaseParts{std::move(*manifest), std::move(*config)};
}

std::string oci_layer_type(const std::string& media_type) {
  // Docker's layer types name the same bytes; the manifest arec writes is pure OCI.
  if (media_type == media_type::k_docker_layer_gzip) return std::string(media_type::k_layer_gzip);
  if (media_type == media_type::k_docker_layer_tar) return std::string(media_type::k_layer_tar);
  return media_type;
}

void merge_env(nlohmann::json& config, const std::vector<std::string>& env) {
  if (env.empty()) return;
  nlohmann::json list = config.contains("Env") && config["Env"].is_array() ? config["Env"] : nlohmann::json::array();
  for (const auto& kv : env) {
    const std::string key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (auto& existing : list) {
      if (existing.is_string() && existing.get<std::string>().substr(0, existing.get<std::string>().find('=')) == key) {
        existing = kv;
        replaced = true;
      }
    }
    if (!replaced) list.push_back(kv);
  }
  config["Env"] = std::move(list);
}

// The source revision of the git work tree around the working directory, or empty. "<sha>-dirty" when
// tracked files differ from HEAD, as `git describe --dirty` says: untracked files do not count.
std::string git_revision() {
  auto run = run_process({"git", "rev-parse", "--verify", "-q", "HEAD"}, {}, std::chrono::seconds(30), 256);
  if (!run || run->exit_code != 0) return {};
  std::string out = std::move(run->out);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.size() != 40 && out.size() != 64) return {};
  // git status refreshes the index first, so a file only touched is not a change.
  auto status = run_process({"git", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none"}, {},
                            std::chrono::seconds(60), 1);
  if (status && status->exit_code == 0 && !status->out.empty()) out += "-dirty";
  return out;
}

// The SBOM of the layer as a referrer of `image`, unless the store has one for that image already (an
// unchanged relink costs no second read of its files) or none is wanted.
Result<std::vector<Descriptor>> sbom_referrers(const RecordRequest& request, SbomHashes& hashes, Store& store,
                                               const Descriptor& image,
                                               const std::function<const std::string&()>& revision) {
  if (request.sbom == SbomFormat::none) return std::vector<Descriptor>{};
  auto listed = store.referrers(image.digest);
  if (!listed) return fail(listed.error());
  for (const auto& d : *listed) {
    // One cut short by a power loss does not count: it is made again like any other blob.
    if (d.artifact_type == media_type::k_spdx_json && store.holds_image(d)) return std::vector<Descriptor>{};
  }
  SbomFacts facts;
  auto files = hashes.take();
  if (!files) return fail(files.error());
  facts.files = std::move(*files);
  facts.module = request.module;
  facts.name = request.name;
  facts.revision = revision();
  facts.image = image.digest;
  facts.created = request.mtime;
  auto text = canonical_json(spdx_document(facts));
  if (!text) return fail(std::move(text.error()).context("writing the SBOM"));
  auto referrer = put_referrer(store, image, media_type::k_spdx_json, *text,
                               {{std::string(annotation::k_created), rfc3339(request.mtime)}});
  if (!referrer) return fail(referrer.error());
  return std::vector<Descriptor>{*referrer};
}

}  // namespace

Result<Descriptor> select_platform_manifest(const Layout& layout, const Descriptor& descriptor, std::string_view what,
                                            const std::optional<Platform>& platform) {
  if (!media_type::is_index(descriptor.media_type)) {
    return descriptor;
  }
  auto index = layout.read_image_index(descriptor);
  if (!index) return fail(std::move(index.error()).context(what));
  const Platform wanted = platform.value_or(host_platform());
  for (const auto& m : index->manifests) {
    if (m.platform && serves(*m.platform, wanted)) return m;
  }
  return fail_input(std::string(what) + ": no image for " + platform_text(wanted));
}

Result<BaseImage> open_layout_base(const std::string& dir, const std::string& ref, const std::string& what,
                                   const std::optional<Platform>& platform) {
  auto layout = Layout::open(dir);
  if (!layout) return fail(std::move(layout.error()).context(what));
  auto index = layout->read_index();
  if (!index) return fail(std::move(index.error()).context(what));
  std::optional<Descriptor> found;
  if (ref.empty()) {
    if (index->manifests.size() != 1) {
      return fail_input(what + ": the layout holds " + std::to_string(index->manifests.size()) +
                        " images; name one as oci:" + dir + ":REF");
    }
    found = index->manifests.front();
  } else {
    for (const auto& d : index->manifests) {
      if (d.annotation(annotation::k_ref_name) == ref) found = d;
    }
    if (!found) return fail_input(what + ": no image named \"" + ref + "\" in " + dir);
  }
  auto manifest = select_platform_manifest(*layout, *found, what, platform);
  if (!manifest) return fail(manifest.error());
  return BaseImage{std::move(*layout), *manifest};
}

Result<BaseImage> open_record_base(const Store& store, std::string_view module, std::string_view name,
                                   const std::optional<Platform>& platform) {
  const std::string what = "base \"" + std::string(module) + "/" + std::string(name) + "\"";
  auto latest = store.latest_image(module, name);
  if (!latest) return fail(std::move(latest.error()).context(what));
  if (!*latest) {
    return fail_input(what + ": no record of " + std::string(module) + "/" + std::string(name) + " in the store " +
                      store.dir().string() + " (an image of a registry is written with its domain: HOST[:PORT]/PATH)");
  }
  if (!(*latest)->is_index()) return BaseImage{store, (*latest)->platforms.front().manifest};
  const Platform wanted = platform.value_or(host_platform());
  std::string recorded;
  for (const auto& r : (*latest)->platforms) {
    if (serves(*r.manifest.platform, wanted)) return BaseImage{store, r.manifest};
    recorded += (recorded.empty() ? "" : ", ") + platform_text(*r.manifest.platform);
  }
  return fail_input(what + ": no record for " + platform_text(wanted) + " (recorded for " + recorded + ")");
}

namespace {

// The runtime closure of the recorded entries (nothing with --runtime none), and the base's files when
// they had to be read for it; `base_manifest` is the base's, when there is one.
struct Closure {
  RuntimeClosure closure;
  std::optional<ImageFiles> base_files;
};

Result<std::unique_ptr<Closure>> closure_of(const RecordRequest& request, const std::vector<LayerEntry>& entries,
                                            const Manifest* base_manifest) {
  auto out = std::make_unique<Closure>();
  if (request.runtime == Runtime::none) return out;
  ClosureOptions options;
  options.sysroot = request.sysroot;
  if (request.base) {
    options.base = [&request, base_manifest, &out]() -> Result<const ImageFiles*> {
      auto files = ImageFiles::read(request.base->layout, base_manifest->layers,
                                    "base image " + request.base->manifest.digest.str());
      if (!files) return fail(files.error());
      out->base_files = std::move(*files);
      return &*out->base_files;
    };
  }
  auto closure = resolve_runtime_closure(entries, options);
  if (!closure) return fail(closure.error());
  out->closure = std::move(*closure);
  return out;
}

// What a record adds that was not named as a file: the service files of an image without a base (its
// users, /tmp), the packages asked for and the CA certificates, and the config's User.
struct Additions {
  std::vector<LayerEntry> recorded;    // the inputs and the service files, which go with them
  std::vector<PackageFiles> packages;  // --package, then ca-certificates: a layer each
  std::vector<std::string> notes;
  std::string user;  // the config's User; empty: the base's, or root
};

// The packages of --package, for an image of `platform` (their files are resolved before the closure,
// which takes their ELF files too).
Result<std::vector<PackageFiles>> requested_packages(const RecordRequest& request, const Platform& platform) {
  std::vector<PackageFiles> out;
  if (request.packages.empty()) return out;
  const std::string arch = debian_architecture(platform);
  if (arch.empty())
    return fail_input("--package: arec knows no Debian architecture for the platform " + platform_text(platform));
  const DpkgDatabase dpkg(request.dpkg_admin_dir);
  for (const auto& spec : request.packages) {
    auto files = package_files(dpkg, spec, arch);
    if (!files) return fail(files.error());
    out.push_back(std::move(*files));
  }
  return out;
}

bool holds_path(const std::vector<LayerEntry>& entries, std::string_view path) {
  return std::any_of(entries.begin(), entries.end(), [&](const LayerEntry& e) { return e.path == path; });
}

// The bytes of /etc/passwd or /etc/group as the image will have them: recorded, else the base's, else
// arec's own (an image without a base and --runtime auto); nothing when it has none.
Result<std::optional<std::string>> account_file(const RecordRequest& request, const std::vector<LayerEntry>& recorded,
                                                const Closure& closure, const std::optional<BaseParts>& base,
                                                const std::string& path) {
  for (const auto& e : recorded) {
    if (e.path != path || e.type != LayerEntry::Type::file) continue;
    if (e.source.empty()) return std::optional(e.content);
    auto text = fs::read_file(e.source);
    if (!text) return fail(text.error());
    return std::optional(std::move(*text));
  }
  if (!base) return std::optional<std::string>();
  std::optional<ImageFiles> read;
  const ImageFiles* files = closure.base_files ? &*closure.base_files : nullptr;
  if (files == nullptr) {
    auto loaded = ImageFiles::read(request.base->layout, base->manifest.layers,
                                   "base image " + request.base->manifest.digest.str());
    if (!loaded) return fail(loaded.error());
    read = std::move(*loaded);
    files = &*read;
  }
  auto resolved = files->resolve(path);
  if (!resolved) return std::optional<std::string>();
  const auto* node = files->lstat(*resolved);
  if (node == nullptr || node->type != ImageFiles::Type::file) return std::optional<std::string>();
  auto text = files->read_file(*resolved);
  if (!text) return fail(text.error());
  return std::optional(std::move(*text));
}

// Whether the inputs hold a program (an ELF executable, static or not): an image to run, not only data.
Result<bool> holds_program(const std::vector<LayerEntry>& entries) {
  for (const auto& e : entries) {
    if (e.type != LayerEntry::Type::file || e.source.empty()) continue;
    auto elf = read_elf(e.source);
    if (!elf) return fail(elf.error());
    if (*elf && (*elf)->executable) return true;
  }
  return false;
}

Result<Additions> additions_of(const RecordRequest& request, std::vector<PackageFiles> packages, const Closure& closure,
                               const std::optional<BaseParts>& base) {
  Additions out;
  out.recorded = request.entries;
  out.packages = std::move(packages);
  auto program = holds_program(request.entries);
  if (!program) return fail(program.error());
  // An image of data alone (a tree, a document) stays exactly what was named.
  if (!base && request.runtime == Runtime::automatic && (*program || request.user || !request.packages.empty())) {
    // What a program run as a service expects of its root, as distroless images have it; what the inputs
    // name instead is theirs.
    std::vector<LayerEntry> service;
    if (!holds_path(request.entries, "etc/passwd")) service.push_back(generated_file("etc/passwd", default_passwd()));
    if (!holds_path(request.entries, "etc/group")) service.push_back(generated_file("etc/group", default_group()));
    if (!holds_path(request.entries, "tmp")) service.push_back(tmp_directory());
    auto merged = merge_entries(std::move(out.recorded), std::move(service), "the service files");
    if (!merged) return fail(merged.error());
    out.recorded = std::move(*merged);
  }
  if (request.runtime == Runtime::automatic && request.ca_certificates == CaCertificates::automatic &&
      !holds_path(request.entries, k_ca_bundle)) {
    // The TLS library the image holds, by what arec adds (a base's own is the base's business).
    std::string tls;
    for (const auto* list : {&request.entries, &closure.closure.entries}) {
      for (const auto& e : *list) {
        if (tls.empty() && e.type != LayerEntry::Type::directory && is_tls_library(e.path)) tls = "/" + e.path;
      }
    }
    for (const auto& p : out.packages) {
      for (const auto& e : p.entries) {
        if (tls.empty() && e.type != LayerEntry::Type::directory && is_tls_library(e.path)) tls = "/" + e.path;
      }
    }
    const bool base_has_bundle =
        closure.base_files && closure.base_files->resolve(std::string(k_ca_bundle)).has_value();
    if (!tls.empty() && !base_has_bundle) {
      auto ca = ca_certificate_files(DpkgDatabase(request.dpkg_admin_dir), out.recorded, tls);
      if (!ca) return fail(ca.error());
      out.notes.push_back("added the CA certificates of ca-certificates " + ca->package.version + " (/" +
                          std::string(k_ca_bundle) + "), since the image holds " + tls +
                          "; --no-ca-certificates leaves them out");
      // ca-certificates asked for by name too: one layer of the package.
      auto same = std::find_if(out.packages.begin(), out.packages.end(),
                               [&](const PackageFiles& p) { return p.package.name == ca->package.name; });
      if (same != out.packages.end()) {
        same->entries.insert(same->entries.end(), ca->entries.begin(), ca->entries.end());
      } else {
        out.packages.push_back(std::move(*ca));
      }
    }
  }
  if (request.user) {
    const std::string where = holds_path(request.entries, "etc/passwd") ? "the recorded /etc/passwd"
                              : base ? "the base image " + request.base->manifest.digest.str()
                                     : "the image";
    auto passwd = account_file(request, out.recorded, closure, base, "etc/passwd");
    if (!passwd) return fail(passwd.error());
    auto group = account_file(request, out.recorded, closure, base, "etc/group");
    if (!group) return fail(group.error());
    auto user = resolve_user(*request.user, *passwd, *group, where);
    if (!user) return fail(user.error());
    out.user = std::move(*user);
  }
  return out;
}

// Every file taken from a package as a whole, by image path, for the SBOM.
std::map<std::string, DebianPackage> package_of_files(const Additions& additions) {
  std::map<std::string, DebianPackage> out;
  for (const auto& p : additions.packages) {
    for (const auto& e : p.entries) {
      if (e.type == LayerEntry::Type::file) out.emplace(e.path, p.package);
    }
  }
  return out;
}

// dpkg keeps no reverse index: which package lists a file is read from every info/*.list (11 MB on a
// build machine, the larger part of an unchanged record's time). The answers are kept in the store
// (arec/dpkg-owners.json) for as long as the database is as it was: every install, upgrade or removal
// rewrites status and writes into info/, which changes their times, and then all is read again.
class RememberedOwners {
 public:
  RememberedOwners(Store& store, DpkgDatabase dpkg, const fs::Path& admin_dir)
      : m_store(store), m_dpkg(std::move(dpkg)), m_path(store.dir() / "arec" / "dpkg-owners.json") {
    struct stat status {};
    struct stat info {};
    if (::stat((admin_dir / "status").c_str(), &status) != 0 || ::stat((admin_dir / "info").c_str(), &info) != 0)
      return;
    auto ns = [](const struct timespec& t) { return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec); };
    m_stamp =
        admin_dir.string() + " " + ns(status.st_mtim) + " " + std::to_string(status.st_size) + " " + ns(info.st_mtim);
  }

  Result<std::map<std::string, std::vector<DebianPackage>>> operator()(const std::vector<std::string>& paths) const {
    if (m_stamp.empty()) return m_dpkg.owners(paths);
    nlohmann::json known = nlohmann::json::object();
    if (::access(m_path.c_str(), F_OK) == 0) {
      auto text = fs::read_file(m_path);
      auto json = text ? read_json<nlohmann::json>(*text) : std::unexpected(JsonProblem{});
      // Unreadable, or of another state of the database: asked again and written anew.
      if (json && json->is_object() && json->contains("stamp") && (*json)["stamp"] == m_stamp &&
          json->contains("owners") && (*json)["owners"].is_object()) {
        known = std::move((*json)["owners"]);
      }
    }
    std::vector<std::string> unknown;
    for (const auto& path : paths) {
      if (!known.contains(path)) unknown.push_back(path);
    }
    if (!unknown.empty()) {
      auto found = m_dpkg.owners(unknown);
      if (!found) return fail(found.error());
      for (const auto& path : unknown) {
        nlohmann::json list = nlohmann::json::array();
        if (auto it = found->find(path); it != found->end()) {
          for (const auto& p : it->second) list.push_back({p.name, p.version, p.architecture, p.maintainer});
        }
        known[path] = std::move(list);
      }
      // Only a shortcut: failing to keep it costs reading the database next time, nothing else.
      (void)fs::write_file_atomic(m_store.temp_dir(), m_path,
                                  nlohmann::json{{"stamp", m_stamp}, {"owners", known}}.dump());
    }
    std::map<std::string, std::vector<DebianPackage>> out;
    for (const auto& path : paths) {
      const auto& list = known[path];
      if (!list.is_array() || list.empty()) continue;
      auto& packages = out[path];
      for (const auto& p : list) {
        if (!p.is_array() || p.size() != 4 || !p[0].is_string() || !p[1].is_string() || !p[2].is_string() ||
            !p[3].is_string())
          continue;
        packages.push_back(
            {p[0].get<std::string>(), p[1].get<std::string>(), p[2].get<std::string>(), p[3].get<std::string>()});
      }
    }
    return out;
  }

 private:
  Store& m_store;  // not const: the answers are written into it
  DpkgDatabase m_dpkg;
  fs::Path m_path;
  std::string m_stamp;
};

// The layers of the record, in order: by origin within the budget (recorder/layering), or one layer of
// every entry, without an origin, when the budget is one or everything is of one kind: the bytes a
// record of one layer always had.
Result<std::vector<LayerGroup>> record_groups(const RecordRequest& request, const Closure& closure,
                                              const Additions& additions, const OwnersOf& owners,
                                              std::map<std::string, DebianPackage>& package_of) {
  // The closure's entries must fit beside the recorded ones whatever the layers (a path given twice is refused).
  auto all = merge_entries(additions.recorded, closure.closure.entries, "the runtime closure");
  if (!all) return fail(all.error());
  for (const auto& p : additions.packages) {
    all = merge_entries(std::move(*all), p.entries, "the package " + p.package.name);
    if (!all) return fail(all.error());
  }
  auto one_layer = [&]() -> std::vector<LayerGroup> {
    LayerGroup group;
    group.entries = std::move(*all);
    return {std::move(group)};
  };
  if (request.layers <= 1) return one_layer();
  BaseHolds base_holds;
  if (closure.base_files) {
    base_holds = [&closure](const std::string& path) { return closure.base_files->lstat(path) != nullptr; };
  }
  const DpkgDatabase dpkg(request.dpkg_admin_dir);
  auto groups = group_entries(additions.recorded, closure.closure, dpkg, base_holds, owners, additions.packages);
  if (!groups) return fail(groups.error());
  if (groups->size() <= 1) return one_layer();
  // Which package each file of a package's layer is of, before merging hides it: the SBOM names them.
  for (const auto& g : *groups) {
    if (g.kind != LayerOrigin::package) continue;
    for (const auto& e : g.entries) {
      if (e.type == LayerEntry::Type::file) package_of.emplace(e.path, g.package);
    }
  }
  return fit_budget(std::move(*groups), request.layers);
}

// Every file of the record once, for the SBOM: the later layer's where two name one path.
std::vector<LayerEntry> sbom_entries(const std::vector<LayerGroup>& groups) {
  if (groups.size() == 1) return groups.front().entries;
  std::map<std::string, const LayerEntry*> by_path;
  for (const auto& g : groups) {
    for (const auto& e : g.entries) by_path.insert_or_assign(e.path, &e);
  }
  std::vector<LayerEntry> out;
  out.reserve(by_path.size());
  for (const auto& [path, e] : by_path) out.push_back(*e);
  return out;
}

// Dynamically linked files recorded with neither their runtime closure nor a base to provide it.
Result<std::vector<std::string>> unrunnable_warnings(const RecordRequest& request) {
  std::vector<std::string> warnings;
  if (request.runtime != Runtime::none || request.base) return warnings;
  auto dynamic = dynamic_executables(request.entries);
  if (!dynamic) return fail(dynamic.error());
  // A few are named one by one; a whole tree of them (say /usr/bin) is one warning, not a screenful.
  constexpr std::size_t k_named = 3;
  if (dynamic->size() <= k_named) {
    for (const auto& path : *dynamic) {
      warnings.push_back(path +
                         " is dynamically linked and recorded with --runtime none and no --base: the image "
                         "holds neither its loader nor its libraries, so it cannot run it");
    }
    return warnings;
  }
  std::string named;
  for (std::size_t i = 0; i < k_named; ++i) named += (*dynamic)[i] + ", ";
  warnings.push_back(std::to_string(dynamic->size()) + " programs (" + named + "and " +
                     std::to_string(dynamic->size() - k_named) +
                     " more) are dynamically linked and recorded with --runtime none and no --base: the image holds "
                     "neither their loader nor their libraries, so it cannot run them");
  return warnings;
}

// RPATH and RUNPATH entries of the image's ELF files that name a directory of this machine (a build
// tree): the same project built elsewhere would give another digest.
Result<std::vector<std::string>> search_path_warnings(const RecordRequest& request,
                                                      const std::vector<LayerGroup>& groups, Closure& closure,
                                                      const std::optional<BaseParts>& base) {
  // A Debian package's files are the distribution's: their search paths are not the build's to change,
  // and reading the headers of every one (libc6's 250 gconv modules) would cost each record ~35 ms.
  std::vector<LayerEntry> entries, checked;
  for (const auto& g : groups) {
    entries.insert(entries.end(), g.entries.begin(), g.entries.end());
    if (g.kind == LayerOrigin::package || g.kind == LayerOrigin::merged_packages) continue;
    checked.insert(checked.end(), g.entries.begin(), g.entries.end());
  }
  std::function<Result<const ImageFiles*>()> base_files;
  if (base) {
    base_files = [&request, &base, &closure]() -> Result<const ImageFiles*> {
      if (!closure.base_files) {
        auto files = ImageFiles::read(request.base->layout, base->manifest.layers,
                                      "base image " + request.base->manifest.digest.str());
        if (!files) return fail(files.error());
        closure.base_files = std::move(*files);
      }
      return &*closure.base_files;
    };
  }
  return foreign_search_path_warnings(entries, checked, base_files);
}

// The base's layers, copied into the store as they are (reused by digest, never re-packed).
Result<std::vector<Descriptor>> copy_base_layers(const RecordRequest& request, const std::optional<BaseParts>& base,
                                                 Store& store) {
  std::vector<Descriptor> layers;
  if (!base) return layers;
  for (const auto& layer : base->manifest.layers) {
    auto copied = store.copy_blob(request.base->layout, layer);
    if (!copied) return fail(std::move(copied.error()).context("base image " + request.base->manifest.digest.str()));
    Descriptor d = layer;
    d.media_type = oci_layer_type(layer.media_type);
    layers.push_back(std::move(d));
  }
  return layers;
}

// A base is for the platform of the inputs, when they have one.
Status check_base_platform(const RecordRequest& request, const std::optional<BaseParts>& base,
                           const std::optional<Platform>& platform) {
  if (!base || !platform) return {};
  const ImageConfig& config = base->config;
  if (config.os == platform->os && config.architecture == platform->architecture) return {};
  return fail_input("base image " + request.base->manifest.digest.str() + " is for " +
                    platform_text({config.architecture, config.os, config.variant}) + ", the inputs for " +
                    platform_text(*platform));
}

// The base's config (or the inputs' platform, else this machine's) with the new layer, environment and
// entrypoint.
ImageConfig image_config(const RecordRequest& request, const std::optional<BaseParts>& base,
                         const std::optional<Platform>& platform, const std::vector<Layer>& layers,
                         const std::vector<LayerGroup>& groups, const std::string& user) {
  ImageConfig config;
  if (base) {
    config = base->config;
  } else {
    const Platform chosen = platform.value_or(host_platform());
    config.architecture = chosen.architecture;
    config.os = chosen.os;
    config.variant = chosen.variant;
  }
  const std::string created = rfc3339(request.mtime);
  config.created = created;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    config.diff_ids.push_back(layers[i].diff_id);
    // One layer is the record as it always was; of several, each says where its files come from.
    config.history.push_back(
        {created, "arec record", "", layers.size() == 1 ? std::string() : groups[i].origin, false});
  }
  merge_env(config.config, request.env);
  if (!user.empty()) config.config["User"] = user;
  if (!request.entrypoint.empty()) {
    config.config["Entrypoint"] = request.entrypoint;
    config.config.erase("Cmd");  // as Dockerfile ENTRYPOINT does: an inherited command no longer applies
  }
  return config;
}

// Writes the config and the manifest (the base's layers, then the new one); returns the manifest's descriptor.
Result<Descriptor> write_image(const RecordRequest& request, const ImageConfig& config, std::vector<Descriptor> layers,
                               Store& store) {
  Manifest manifest;
  auto config_text = canonical_json(to_json(config));
  if (!config_text) return fail(std::move(config_text.error()).context("writing the image config"));
  auto config_descriptor = store.put_blob(*config_text, media_type::k_config);
  if (!config_descriptor) return fail(config_descriptor.error());
  manifest.config = *config_descriptor;
  manifest.layers = std::move(layers);
  if (request.base) manifest.annotations.emplace(annotation::k_base_digest, request.base->manifest.digest.str());
  auto manifest_text = canonical_json(to_json(manifest));
  if (!manifest_text) return fail(manifest_text.error());
  auto descriptor = store.put_blob(*manifest_text, media_type::k_manifest);
  if (!descriptor) return fail(descriptor.error());
  descriptor->platform = Platform{config.architecture, config.os, config.variant};
  return descriptor;
}

// The record of `manifest`, made now.
Record new_record(const RecordRequest& request, const Descriptor& manifest, std::string revision) {
  Record record;
  record.module = request.module;
  record.name = request.name;
  record.manifest = manifest;
  record.recorded = now_rfc3339();
  record.target = request.target;
  record.config = request.config;
  record.revision = std::move(revision);
  if (request.base) record.base_digest = request.base->manifest.digest.str();
  return record;
}

}  // namespace

Result<RecordOutcome> record_image(const RecordRequest& request, Store& store) {
  // The image's platform is its files': a mix or a contradicting --platform is refused before anything else.
  auto platform = inputs_platform(request.entries, request.platform);
  if (!platform) return fail(platform.error());
  auto base = read_base(request);
  if (!base) return fail(base.error());
  if (auto s = check_base_platform(request, *base, *platform); !s) return fail(s.error());
  // The closure is resolved first: a missing library or a base too old refuses before anything is written.
  const Platform image_platform = platform->value_or(host_platform());
  auto packages = requested_packages(request, image_platform);
  if (!packages) return fail(packages.error());
  std::vector<LayerEntry> closure_inputs = request.entries;
  for (const auto& p : *packages) closure_inputs.insert(closure_inputs.end(), p.entries.begin(), p.entries.end());
  auto closure = closure_of(request, closure_inputs, *base ? &(*base)->manifest : nullptr);
  if (!closure) return fail(closure.error());
  auto additions = additions_of(request, std::move(*packages), **closure, *base);
  if (!additions) return fail(additions.error());
  // Which package owns a file is asked of dpkg once, for the layers and the SBOM.
  const RememberedOwners owners(store, DpkgDatabase(request.dpkg_admin_dir), request.dpkg_admin_dir);
  const OwnersOf owners_of = std::cref(owners);
  auto package_of = package_of_files(*additions);
  auto groups = record_groups(request, **closure, *additions, owners_of, package_of);
  if (!groups) return fail(groups.error());
  const std::size_t base_layers = *base ? (*base)->manifest.layers.size() : 0;
  if (auto s = check_layer_count(base_layers, groups->size()); !s) return fail(s.error());
  auto warnings = unrunnable_warnings(request);
  if (!warnings) return fail(warnings.error());
  auto foreign = search_path_warnings(request, *groups, **closure, *base);
  if (!foreign) return fail(foreign.error());
  warnings->insert(warnings->end(), foreign->begin(), foreign->end());
  std::vector<fs::Path> inputs;
  for (const auto& group : *groups) {
    for (const auto& e : group.entries) {
      if (e.type == LayerEntry::Type::file && !e.source.empty()) inputs.push_back(e.source);
    }
  }
  // A file arec wrote changes when what it was made of does (a ca-certificates upgrade).
  for (const auto& p : additions->packages) inputs.insert(inputs.end(), p.made_from.begin(), p.made_from.end());
  // What this configuration last recorded: another configuration's latest says nothing of it.
  auto previous = store.latest_of_config(request.module, request.name, request.config);
  if (!previous) return fail(previous.error());

  auto layers = copy_base_layers(request, *base, store);
  if (!layers) return fail(layers.error());
  SbomHashes sbom(request, sbom_entries(*groups), std::move(package_of), owners_of);
  // The layers are independent: those not in the store yet are packed side by side, up to --threads at
  // once (each still compressing on its own workers), since most are too small to keep the cores busy
  // alone. Their bytes do not depend on the order or the count.
  std::vector<std::optional<Layer>> made(groups->size());
  std::vector<std::optional<fs::Path>> identities(groups->size());
  std::vector<std::size_t> to_pack;
  for (std::size_t i = 0; i < groups->size(); ++i) {
    const auto& group = (*groups)[i];
    // A package's layer is shared by every record on that package, and its files rarely change: it is
    // looked for by what its files are before anything is read.
    const bool shared = group.kind == LayerOrigin::package || group.kind == LayerOrigin::merged_packages;
    identities[i] = shared ? files_identity(request, group.entries, store) : std::nullopt;
    made[i] = identities[i] ? layer_of_identity(request, *identities[i], store) : std::nullopt;
    if (!made[i]) to_pack.push_back(i);
  }
  std::vector<std::optional<Status>> outcomes(groups->size());
  {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t n = next++; n < to_pack.size(); n = next++) {
        const std::size_t i = to_pack[n];
        auto layer = pack_layer(request, (*groups)[i].entries, store,
                                *previous ? RecordedBefore::yes : RecordedBefore::no, sbom);
        if (!layer) {
          outcomes[i] = fail(layer.error());
          continue;
        }
        made[i] = std::move(*layer);
        outcomes[i] = Status{};
      }
    };
    const std::size_t jobs = std::min<std::size_t>(std::max(1U, request.threads), to_pack.size());
    std::vector<std::jthread> workers;
    for (std::size_t j = 1; j < jobs; ++j) workers.emplace_back(work);
    work();
  }
  std::vector<Layer> packed;
  for (std::size_t i = 0; i < groups->size(); ++i) {
    if (outcomes[i] && !*outcomes[i]) return fail(outcomes[i]->error());
    Layer& layer = *made[i];
    // Only a shortcut: failing to keep it costs reading the files next time, nothing else.
    if (outcomes[i] && identities[i])
      (void)fs::write_file_atomic(store.temp_dir(), *identities[i], layer.diff_id.str());
    if (groups->size() > 1) layer.descriptor.annotations.emplace(annotation::k_layer_origin, (*groups)[i].origin);
    layers->push_back(layer.descriptor);
    packed.push_back(std::move(layer));
  }
  auto manifest = write_image(request, image_config(request, *base, *platform, packed, *groups, additions->user),
                              std::move(*layers), store);
  if (!manifest) return fail(manifest.error());

  // git runs once per record: the SBOM, a new record and an unchanged relink (is it a newer revision?) need it.
  std::optional<std::string> revision;
  auto revision_of_sources = [&]() -> const std::string& {
    if (!revision) revision = request.revision.empty() ? git_revision() : request.revision;
    return *revision;
  };
  auto referrers = sbom_referrers(request, sbom, store, *manifest, revision_of_sources);
  if (!referrers) return fail(referrers.error());
  // The same bytes built from a newer revision (a commit after a dirty build) are a new history entry,
  // so that `records` names the newest build that produced them; same bytes, same revision: nothing.
  if (*previous && (*previous)->manifest.digest == manifest->digest && referrers->empty() &&
      (*previous)->revision == revision_of_sources()) {
    return RecordOutcome{**previous, false, std::move(*warnings), std::move(additions->notes),
                         std::move(inputs)};  // nothing new
  }
  const Record record = new_record(request, *manifest, revision_of_sources());
  // The lock only around the commit: everything above ran without it, beside other recorders.
  auto writer = store.writer();
  if (!writer) return fail(writer.error());
  auto commit = writer->commit(record, *referrers);
  if (!commit) return fail(commit.error());
  return RecordOutcome{commit->record, commit->changed, std::move(*warnings), std::move(additions->notes),
                       std::move(inputs)};
}

}  // namespace arec
