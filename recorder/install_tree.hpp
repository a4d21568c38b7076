// A CMake install component as an image's content: what `cmake --install BUILD --component NAME`
// puts under a prefix, at its install paths and with the install RPATH. The install rules are the
// project's one account of what ships; the component is staged by running the build tree's own install
// scripts (cmake_install.cmake) exactly as `cmake --install` runs them, with DESTDIR pointing into a
// directory of arec's, and CMake's trace (--trace-format=json-v1, documented and versioned) tells which
// files each file(INSTALL) read: the build's recording step depends on those, on the install scripts
// and on nothing else, so a new install() rule, a changed data file or a rebuilt plugin records again
// and a build that changes none of them records nothing. CPack's staging of a component is taken as
// it is (staged_install).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/layer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace arec {

// What a CMake build tree's cache (CMakeCache.txt) says of it.
struct CMakeBuild {
  fs::Path binary_dir;
  fs::Path source_dir;  // CMAKE_HOME_DIRECTORY
  std::string cmake;    // CMAKE_COMMAND: the cmake that generated the tree, and runs its install scripts
};

// Reads the build tree `dir`; an error names it when it is not one.
Result<CMakeBuild> read_cmake_build(const fs::Path& dir);

// A component staged for a record: the tree under the prefix, and what the install read to make it.
struct InstallTree {
  fs::Path content;       // the files installed under the prefix, recorded at `prefix`
  std::string prefix;     // "/usr/local"
  std::string component;  // "runtime"; empty when not known (a tree staged elsewhere)
  // The host files and directories the install scripts read: every file(INSTALL) source, the files and
  // directories of installed directories, and the scripts themselves. Empty for a tree staged elsewhere.
  std::vector<fs::Path> read_files;
  std::vector<fs::Path> read_directories;
  std::shared_ptr<const fs::Path> staging;  // arec's staging directory, removed when the last copy goes

  // Whether a host path lies in arec's staging directory (a copy, not an input of the build).
  bool staged(const fs::Path& path) const;
};

struct StageRequest {
  CMakeBuild build;
  std::string component;
  std::string config;  // CMAKE_INSTALL_CONFIG_NAME; empty: the build tree's default
  std::string prefix;  // absolute, normalised
};

// Stages the component into a new directory under the build tree (CMakeFiles/arec-stage.*) by running its
// install scripts with DESTDIR there, traced. Refused, with the stage removed: a component that installs
// no file (naming the components the rules name), and a file installed outside the prefix (naming it and
// where it came from).
Result<InstallTree> stage_install(const StageRequest& request);

// A component another tool staged (CPack's CPACK_TEMPORARY_DIRECTORY/<component>/<prefix>): `content` is
// what lies under `prefix`. Refused when it holds no file.
Result<InstallTree> staged_install(const fs::Path& content, std::string prefix, std::string component);

// The image path of the program called `name` the tree installs (the target's file name), for the
// entrypoint: the one executable file of that name. None or several is an error saying which.
Result<std::string> installed_program(const InstallTree& tree, std::string_view name);

// Each of `files` (plugins: a MODULE library's file in the build tree) must be installed by the component
// under its own file name; an error names the first that is not, and how to install it.
Status check_installed(const InstallTree& tree, const std::vector<fs::Path>& files);

// The input that records the tree: its content at the prefix.
LayerInput install_tree_input(const InstallTree& tree);

// The components the traced install scripts of `trace` (CMake's json-v1 trace) tested for, and the
// file(INSTALL) calls it made: read by stage_install, exposed for its tests.
struct TracedInstall {
  std::string destination;  // as the script gave it, without DESTDIR
  std::string type;         // FILE, PROGRAM, DIRECTORY, EXECUTABLE, SHARED_LIBRARY, MODULE, ...
  std::vector<std::string> files;
  std::string rename;
};
struct InstallTrace {
  std::vector<std::string> scripts;     // every script that ran, in order of first appearance
  std::vector<std::string> components;  // tested for, sorted, each once
  std::vector<TracedInstall> installs;
};
Result<InstallTrace> parse_install_trace(std::string_view text, std::string_view what);

}  // namespace arec
