#include "recorder/image.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "recorder/image_internal.hpp"
#include "recorder/signing.hpp"
#include "util/process.hpp"

namespace arec {

namespace {

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

}  // namespace

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
  options.build_trees = request.build_trees;
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
  std::string user;  // the config's User; empty: the base's, or none (an image of data alone)
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
  const bool service_image =
      !base && request.runtime == Runtime::automatic && (*program || request.user || !request.packages.empty());
  if (service_image) {
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
    if (out.user.substr(0, out.user.find(':')) == "0") {
      out.notes.push_back("the image runs as root, as --user " + request.user->user + " asks");
    }
  } else if (service_image) {
    // Not root unless asked (--user root): distroless's nonroot, as ko's default base runs.
    out.user = k_nonroot_user;
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

// The layers of the record, in order, and what the SBOM needs to know of them before merging hides it.
struct RecordLayers {
  std::vector<LayerGroup> groups;
  std::map<std::string, DebianPackage> package_of;  // each file of a package's layer, by image path
  std::set<std::string> os_paths;                   // the OS identity's: the OS describes them, not a package
  std::optional<Distribution> os;                   // when the record holds the OS identity
  std::vector<fs::Path> os_made_from;               // the host files that identity was read from
  // The declared dependency of each file that is one's (recorder/dependencies), by image path.
  std::map<std::string, std::size_t> dependency_of;
};

// Every entry of `groups` once, where two name one path the later group's, as one layer without an origin.
LayerGroup one_group(const std::vector<LayerGroup>& groups) {
  std::map<std::string, const LayerEntry*> by_path;
  for (const auto& g : groups) {
    for (const auto& e : g.entries) by_path.insert_or_assign(e.path, &e);
  }
  LayerGroup out;
  out.kind = LayerOrigin::mixed;
  for (const auto& [path, e] : by_path) {
    out.entries.push_back(*e);
    if (e->type == LayerEntry::Type::file) out.size += e->size;
  }
  return out;
}

// The layers of the record, in order: by origin within the budget (recorder/layering), or one layer of
// every entry, without an origin, when the budget is one or everything is of one kind: the bytes a
// record of one layer always had. An image of Debian packages holds what scanners read of them (their
// stanzas and copyright files, the OS identity) whatever the layers: --layers 1 takes the closure's
// files of each package and those alone, as it always did, and that besides.
Result<RecordLayers> record_groups(const RecordRequest& request, const Closure& closure, const Additions& additions,
                                   const OwnersOf& owners, std::map<std::string, DebianPackage> package_of) {
  RecordLayers out;
  out.package_of = std::move(package_of);
  // The closure's entries must fit beside the recorded ones whatever the layers (a path given twice is refused).
  auto all = merge_entries(additions.recorded, closure.closure.entries, "the runtime closure");
  if (!all) return fail(all.error());
  for (const auto& p : additions.packages) {
    all = merge_entries(std::move(*all), p.entries, "the package " + p.package.name);
    if (!all) return fail(all.error());
  }
  // The build's dependencies, by what the packages-info files say of them: the SBOM names them, whatever
  // the layers.
  auto dependencies = dependency_of_files(*all, request.dependencies);
  if (!dependencies) return fail(dependencies.error());
  out.dependency_of = std::move(*dependencies);
  auto one_layer = [&]() -> RecordLayers {
    LayerGroup group;
    group.entries = std::move(*all);
    out.groups = {std::move(group)};
    return std::move(out);
  };
  BaseHolds base_holds;
  if (closure.base_files) {
    base_holds = [&closure](const std::string& path) { return closure.base_files->lstat(path) != nullptr; };
  }
  // The build host's distribution: an image of its packages is of it.
  auto identity = os_identity();
  if (!identity) return fail(identity.error());
  const DpkgDatabase dpkg(request.dpkg_admin_dir);
  const auto taken = request.layers <= 1 ? PackageFilesTaken::needed : PackageFilesTaken::library_directories;
  auto groups = group_entries(additions.recorded, closure.closure, dpkg, base_holds, owners, additions.packages,
                              *identity ? &**identity : nullptr, taken);
  if (!groups) return fail(groups.error());
  // A Debian package's file stays its package's, whatever a packages-info file names.
  for (const auto& g : *groups) {
    if (g.kind != LayerOrigin::package) continue;
    for (const auto& e : g.entries) out.dependency_of.erase(e.path);
  }
  groups = separate_dependencies(std::move(*groups), out.dependency_of, request.dependencies);
  if (!groups) return fail(groups.error());
  const bool packages =
      std::ranges::any_of(*groups, [](const LayerGroup& g) { return g.kind == LayerOrigin::package; });
  if (!packages && (groups->size() <= 1 || request.layers <= 1)) return one_layer();
  // Which package each file of a package's layer is of, before merging hides it: the SBOM names them.
  for (const auto& g : *groups) {
    for (const auto& e : g.entries) {
      if (e.type == LayerEntry::Type::symlink) continue;
      if (g.kind == LayerOrigin::package && e.type == LayerEntry::Type::file) out.package_of.emplace(e.path, g.package);
      if (g.kind == LayerOrigin::os) out.os_paths.insert(e.path);
    }
    if (g.kind == LayerOrigin::os) {
      out.os = (*identity)->distribution;
      out.os_made_from = (*identity)->made_from;
    }
  }
  out.groups = request.layers <= 1 ? std::vector<LayerGroup>{one_group(*groups)}
                                   : fit_budget(std::move(*groups), request.layers);
  return out;
}

// Every file of the record once, for the SBOM: the later layer's where two name one path. The OS
// identity's files are the OS's, which the SBOM names as such.
std::vector<LayerEntry> sbom_entries(const RecordLayers& layers) {
  std::map<std::string, const LayerEntry*> by_path;
  for (const auto& g : layers.groups) {
    for (const auto& e : g.entries) {
      if (!layers.os_paths.contains(e.path)) by_path.insert_or_assign(e.path, &e);
    }
  }
  std::vector<LayerEntry> out;
  out.reserve(by_path.size());
  for (const auto& [path, e] : by_path) out.push_back(*e);
  return out;
}

}  // namespace

std::optional<RecordWarning> warning_of(std::string kind, const std::vector<FileWarning>& each,
                                        std::string (*summary)(std::size_t files, std::string_view named)) {
  if (each.empty()) return std::nullopt;
  RecordWarning warning{std::move(kind), {}, {}, {}};
  for (const auto& w : each) {
    if (std::ranges::find(warning.files, w.file) == warning.files.end()) warning.files.push_back(w.file);
    warning.each.push_back(w.text);
  }
  if (warning.files.size() > k_warning_named_files) {
    std::string named;
    for (std::size_t i = 0; i < k_warning_named_files; ++i) named += warning.files[i] + ", ";
    named += "and " + std::to_string(warning.files.size() - k_warning_named_files) + " more";
    warning.summary = summary(warning.files.size(), named);
  }
  return warning;
}

namespace {

std::string unrunnable_summary(std::size_t files, std::string_view named) {
  return std::to_string(files) + " programs (" + std::string(named) +
         ") are dynamically linked and recorded with --runtime none and no --base: the image holds neither their "
         "loader nor their libraries, so it cannot run them";
}

// Dynamically linked files recorded with neither their runtime closure nor a base to provide it.
Result<std::optional<RecordWarning>> unrunnable_warning(const RecordRequest& request) {
  if (request.runtime != Runtime::none || request.base) return std::nullopt;
  auto dynamic = dynamic_executables(request.entries);
  if (!dynamic) return fail(dynamic.error());
  std::vector<FileWarning> each;
  for (const auto& path : *dynamic) {
    each.push_back({path, path + " is dynamically linked and recorded with --runtime none and no --base: the image "
                                 "holds neither its loader nor its libraries, so it cannot run it"});
  }
  return warning_of("unrunnable", each, unrunnable_summary);
}

// RPATH and RUNPATH entries of the image's ELF files that name a directory of this machine (a build
// tree): the same project built elsewhere would give another digest.
Result<std::optional<RecordWarning>> search_path_warning(const RecordRequest& request,
                                                         const std::vector<LayerGroup>& groups, Closure& closure,
                                                         const std::optional<BaseParts>& base) {
  // A Debian package's files are the distribution's: their search paths are not the build's to change,
  // and reading the headers of every one (libc6's 250 gconv modules) would cost each record ~35 ms.
  std::vector<LayerEntry> entries, checked;
  for (const auto& g : groups) {
    entries.insert(entries.end(), g.entries.begin(), g.entries.end());
    if (g.kind == LayerOrigin::package || g.kind == LayerOrigin::merged_packages || g.kind == LayerOrigin::os) continue;
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
  auto each = foreign_search_path_warnings(entries, checked, base_files);
  if (!each) return fail(each.error());
  return warning_of("search-path", *each, foreign_search_path_summary);
}

}  // namespace

Result<RecordOutcome> record_image(const RecordRequest& request, Store& store) {
  const std::string started = now_rfc3339();
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
  auto layered = record_groups(request, **closure, *additions, owners_of, package_of_files(*additions));
  if (!layered) return fail(layered.error());
  const std::vector<LayerGroup>& groups = layered->groups;
  const std::size_t base_layers = *base ? (*base)->manifest.layers.size() : 0;
  if (auto s = check_layer_count(base_layers, groups.size()); !s) return fail(s.error());
  auto unrunnable = unrunnable_warning(request);
  if (!unrunnable) return fail(unrunnable.error());
  auto foreign = search_path_warning(request, groups, **closure, *base);
  if (!foreign) return fail(foreign.error());
  auto built = build_warnings(request, (*closure)->closure, groups, layered->dependency_of);
  if (!built) return fail(built.error());
  std::vector<RecordWarning> warnings;
  for (auto* w : {&*unrunnable, &*foreign}) {
    if (*w) warnings.push_back(std::move(**w));
  }
  warnings.insert(warnings.end(), std::make_move_iterator(built->begin()), std::make_move_iterator(built->end()));
  std::vector<fs::Path> inputs;
  for (const auto& group : groups) {
    for (const auto& e : group.entries) {
      if (e.type == LayerEntry::Type::file && !e.source.empty()) inputs.push_back(e.source);
    }
  }
  // A file arec wrote changes when what it was made of does (a ca-certificates upgrade, a point release).
  for (const auto& p : additions->packages) inputs.insert(inputs.end(), p.made_from.begin(), p.made_from.end());
  inputs.insert(inputs.end(), layered->os_made_from.begin(), layered->os_made_from.end());
  // What this configuration last recorded: another configuration's latest says nothing of it.
  auto previous = store.latest_of_config(request.module, request.name, request.config);
  if (!previous) return fail(previous.error());

  auto layers = copy_base_layers(request, *base, store);
  if (!layers) return fail(layers.error());
  ProvenanceFacts provenance{request.builder_id, started, {}, {}, {}, request.base_taken};
  auto distribution = read_distribution();  // what purls name: the build host's distribution
  if (!distribution) return fail(distribution.error());
  if (request.sign_key) {
    std::set<std::string> purls;
    for (const auto& [path, package] : layered->package_of) purls.insert(debian_purl(package, *distribution));
    provenance.packages.assign(purls.begin(), purls.end());
  }
  SbomHashes sbom(request, sbom_entries(*layered), layered->package_of, owners_of);
  // The layers are independent: those not in the store yet are packed side by side, up to --threads at
  // once (each still compressing on its own workers), since most are too small to keep the cores busy
  // alone. Their bytes do not depend on the order or the count.
  std::vector<std::optional<Layer>> made(groups.size());
  std::vector<std::optional<fs::Path>> identities(groups.size());
  std::vector<std::size_t> to_pack;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& group = groups[i];
    // A package's layer is shared by every record on that package, and its files rarely change: it is
    // looked for by what its files are before anything is read.
    const bool shared = group.kind == LayerOrigin::package || group.kind == LayerOrigin::merged_packages ||
                        group.kind == LayerOrigin::os;
    identities[i] = shared ? files_identity(request, group.entries, store) : std::nullopt;
    made[i] = identities[i] ? layer_of_identity(request, *identities[i], store) : std::nullopt;
    if (!made[i]) to_pack.push_back(i);
  }
  std::vector<std::optional<Status>> outcomes(groups.size());
  {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      for (std::size_t n = next++; n < to_pack.size(); n = next++) {
        const std::size_t i = to_pack[n];
        auto layer =
            pack_layer(request, groups[i].entries, store, *previous ? RecordedBefore::yes : RecordedBefore::no, sbom);
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
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (outcomes[i] && !*outcomes[i]) return fail(outcomes[i]->error());
    Layer& layer = *made[i];
    // Only a shortcut: failing to keep it costs reading the files next time, nothing else.
    if (outcomes[i] && identities[i])
      (void)fs::write_file_atomic(store.temp_dir(), *identities[i], layer.diff_id.str());
    if (groups.size() > 1) layer.descriptor.annotations.emplace(annotation::k_layer_origin, groups[i].origin);
    layers->push_back(layer.descriptor);
    packed.push_back(std::move(layer));
  }
  auto manifest = write_image(request, image_config(request, *base, *platform, packed, groups, additions->user),
                              std::move(*layers), store);
  if (!manifest) return fail(manifest.error());

  // git runs once per record: the SBOM, a new record and an unchanged relink (is it a newer revision?) need it.
  std::optional<std::string> revision;
  auto revision_of_sources = [&]() -> const std::string& {
    if (!revision) revision = request.revision.empty() ? git_revision() : request.revision;
    return *revision;
  };
  SbomScope scope{layered->os, *distribution, (*closure)->closure.needs, layered->dependency_of};
  auto sboms = sbom_referrers(request, sbom, store, *manifest, scope, revision_of_sources);
  if (!sboms) return fail(sboms.error());
  auto* referrers = &sboms->referrers;
  // The same bytes built from a newer revision (a commit after a dirty build) are a new history entry,
  // so that `records` names the newest build that produced them; same bytes, same revision: nothing.
  if (*previous && (*previous)->manifest.digest == manifest->digest && referrers->empty() &&
      (*previous)->revision == revision_of_sources()) {
    store.note_built((*previous)->manifest.digest);
    if (request.sign_key) {
      provenance.finished = now_rfc3339();
      if (auto signed_now = sign_recorded(store, **previous, *request.sign_key, provenance); !signed_now)
        return fail(signed_now.error());
    }
    return RecordOutcome{**previous, false, std::move(warnings), std::move(additions->notes),
                         std::move(inputs)};  // nothing new
  }
  const Record record = new_record(request, *manifest, revision_of_sources());
  // This store built it: its key may sign it later (recorder/signing), as it may not sign a pulled one.
  store.note_built(manifest->digest);
  if (request.sign_key) {
    provenance.finished = now_rfc3339();
    auto bundles = sign_record(store, record, *request.sign_key, provenance, sboms->subjects);
    if (!bundles) return fail(bundles.error());
    referrers->insert(referrers->end(), bundles->begin(), bundles->end());
  }
  // The lock only around the commit: everything above ran without it, beside other recorders.
  auto writer = store.writer();
  if (!writer) return fail(writer.error());
  auto commit = writer->commit(record, *referrers);
  if (!commit) return fail(commit.error());
  return RecordOutcome{commit->record, commit->changed, std::move(warnings), std::move(additions->notes),
                       std::move(inputs)};
}

}  // namespace arec
