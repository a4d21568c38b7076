// Recording: inputs -> layer -> config -> manifest -> store -> record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oci/signature.hpp"
#include "recorder/dependencies.hpp"
#include "recorder/layer.hpp"
#include "recorder/layering.hpp"
#include "recorder/runtime_closure.hpp"
#include "recorder/service_files.hpp"
#include "store/store.hpp"

namespace arec {

// An image to build on: a manifest in some OCI layout (a local layout, or the store after a pull).
struct BaseImage {
  Layout layout;
  Descriptor manifest;
};

// Finds in the OCI layout `dir` the manifest tagged `ref`, or its only one when `ref` is empty (what
// `oci:DIR[:REF]` names: addressing/base_spec). An index is resolved to the manifest of `platform`
// (else this machine's). Messages name the base as `what`.
Result<BaseImage> open_layout_base(const std::string& dir, const std::string& ref, const std::string& what,
                                   const std::optional<Platform>& platform = std::nullopt);
// The latest record of module/name in the store, as a base: no network.
// A module/name recorded for several platforms gives the record of `platform` (else this machine's).
Result<BaseImage> open_record_base(const Store& store, std::string_view module, std::string_view name,
                                   const std::optional<Platform>& platform = std::nullopt);
// The manifest for the host platform behind `descriptor`, following an image index if it is one.
// With `platform`, that platform's (its variant too when it names one).
Result<Descriptor> select_platform_manifest(const Layout& layout, const Descriptor& descriptor, std::string_view what,
                                            const std::optional<Platform>& platform = std::nullopt);

// Whether an image holding a TLS library gets the CA certificates (--no-ca-certificates: never).
enum class CaCertificates { automatic, none };

// Where the recorded files' paths come from: the build tree's layout (a target's file and the libraries
// its build RUNPATH leads to), or the project's install rules (an install tree: recorder/install_tree).
enum class EntryPaths { build_tree, install_tree };

struct RecordRequest {
  std::string module;
  std::string name;
  std::vector<LayerEntry> entries;
  std::optional<BaseImage> base;
  Runtime runtime = Runtime::automatic;  // add what the loader needs to run the recorded ELF files
  std::optional<Platform> platform;      // --platform: for inputs without ELF files, checked against those with
  std::optional<fs::Path> sysroot;       // --sysroot: where the runtime closure comes from (ClosureOptions)
  std::vector<std::string> entrypoint;
  std::vector<std::string> env;  // K=V
  Compression compression = Compression::gzip;
  unsigned threads = 1;
  std::int64_t mtime = 0;  // SOURCE_DATE_EPOCH
  std::string target;
  std::string config;
  std::string revision;                             // empty: found from the git work tree around the working directory
  std::vector<SbomFormat> sboms{SbomFormat::spdx};  // --sbom: the documents kept beside the record; none: empty
  // --layers: at most this many layers of its own (recorder/layering); 1 is one layer of everything.
  unsigned layers = k_default_layer_budget;
  fs::Path dpkg_admin_dir = "/var/lib/dpkg";  // where the packages of the closure's files are looked up
  std::optional<UserSpec> user;               // --user: the config's User
  std::vector<PackageSpec> packages;          // --package: installed Debian packages, each a layer
  CaCertificates ca_certificates = CaCertificates::automatic;
  const Key* sign_key = nullptr;  // --sign-key: the record signed (recorder/signing), else unsigned
  std::string builder_id;         // the provenance's builder (ProvenanceFacts::builder_id)
  std::string base_taken;         // how the base was taken, as the provenance says (ProvenanceFacts::base_taken)
  // What the build tells of its files:
  std::vector<DeclaredPackage> dependencies;  // --packages-info: packages of no Debian package, and their files
  std::vector<fs::Path> build_trees;          // the build's source and build directories (ClosureOptions)
  EntryPaths paths = EntryPaths::build_tree;  // install_tree with --component or --staged
  // --project-module: the project's MODULE libraries no record is told to hold; a recorded program that
  // calls dlopen while the image holds one of them not is warned about.
  std::vector<fs::Path> project_modules;
};

// How many files a summarised warning names (the rest are counted).
inline constexpr std::size_t k_warning_named_files = 3;

// What a record warns of, one for each kind of warning: every file's own warning, and the one line said
// in their place when they are more than a few (a whole /usr/bin recorded with --runtime none is a line
// per kind, not one per file).
struct RecordWarning {
  std::string kind;                // "search-path" (an RPATH or RUNPATH of this machine), "unrunnable"
  std::vector<std::string> files;  // the image paths warned about, each once
  std::vector<std::string> each;   // every file's warning (a file may have several: RPATH and RUNPATH)
  std::string summary;             // the count and the first few files; empty when they are few
};

struct RecordOutcome {
  Record record;
  bool changed = false;  // false when the store already held this digest as the latest
  std::vector<RecordWarning> warnings;
  std::vector<std::string> notes;  // what was added without being named (the CA certificates), one line each
  std::vector<fs::Path> inputs;    // the host files packed, runtime closure included (for a build's depfile)
};

// Reads the base, resolves the runtime closure, packs the layers (by origin, within the budget), writes config and
// manifest, the SBOMs as their referrers, and commits the record (unless the store holds this digest as the latest
// already).
Result<RecordOutcome> record_image(const RecordRequest& request, Store& store);

}  // namespace arec
