// The build's dependencies that come from no Debian package (a FetchContent or ExternalProject
// dependency, a vendor's library under /opt), as named packages: the SBOM says what each is (name,
// version, where it came from, its checksum, licence and purl) and each is a layer of its own,
// "dep:NAME=VERSION", so an upgrade changes that one layer, as a Debian package's does. What they are is
// read from packages-info files (JSON): the CMake module writes one from the project's FetchContent and
// ExternalProject declarations, and a project adds its own (PACKAGES_INFO) for what CMake cannot know.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/layer.hpp"
#include "recorder/sbom.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec {

// A dependency as a packages-info file declares it: the package, and how its files are told apart. The
// package is the SBOM's value as declared: name, version, download location (a URL, git+URL@REF),
// checksum of what was downloaded (CMake's URL_HASH: at most one, as SPDX names its algorithm: "SHA256",
// "SHA3-256", "MD5"), licence expression, supplier (SPDX's "Organization: ..." or "Person: ...") and
// purl, each empty when not given; dependency_sbom_packages gives it its key and purl.
struct DeclaredPackage {
  SbomPackage package;
  std::vector<fs::Path> paths;     // directories of this machine: a file found under one is the package's
  std::vector<std::string> names;  // file names: a file so named (or with that SONAME) is the package's
};

// Reads a packages-info file: {"packages": [{"name", "version", "download_location", "checksum"
// ("ALGORITHM=HEX", as CMake's URL_HASH), "license", "supplier", "purl", "paths", "files"}]}. Every
// field but "name" may be left out; an unknown one, or a value of the wrong kind, is an error naming
// the file and the field. `what` names the text in messages.
Result<std::vector<DeclaredPackage>> parse_packages_info(std::string_view text, std::string_view what);
Result<std::vector<DeclaredPackage>> read_packages_info(const fs::Path& file);

// `later` declared after `earlier`: a package named in both is one, the later file's fields taking the
// place of the earlier's and its paths and names added (a project's PACKAGES_INFO gives a FetchContent
// dependency its licence).
std::vector<DeclaredPackage> merge_declared(std::vector<DeclaredPackage> earlier, std::vector<DeclaredPackage> later);

// The purl of a package whose packages-info gave none: pkg:github/OWNER/REPO@REF for a git repository or
// archive of github.com, else pkg:generic/NAME@VERSION with its download location (download_url, or
// vcs_url for git) and checksum as qualifiers.
std::string dependency_purl(const SbomPackage& package);

// The layer origin of a package's files: "dep:NAME=VERSION" ("dep:NAME" when the version is unknown).
std::string dependency_origin(const SbomPackage& package);

// The declared package of each regular file of `entries` that is one's, by image path: a file whose host
// path (its real path) lies under a package's paths (the deepest one), else one whose name or ELF SONAME
// is among a package's names. The value indexes `declared`.
Result<std::map<std::string, std::size_t>> dependency_of_files(const std::vector<LayerEntry>& entries,
                                                               const std::vector<DeclaredPackage>& declared);

// The packages of `declared` that hold files of `files` (by `of_file`), as the SBOM names them, sorted
// by key: the key "dep:NAME", the purl dependency_purl gives. Each such file is marked as its package's
// (SbomFile::dependency), unless a Debian package installed it: then it stays that package's alone.
std::vector<SbomPackage> dependency_sbom_packages(const std::vector<DeclaredPackage>& declared,
                                                  const std::map<std::string, std::size_t>& of_file,
                                                  std::vector<SbomFile>& files);

}  // namespace arec
