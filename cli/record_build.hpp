// `arec record`'s options for what a CMake build tells of its outputs (the CMake module passes them):
// an install component as the image's content (--cmake-build, --component, --prefix, --staged,
// --entrypoint-name), plugins, packages of no Debian package (--packages-info) and the project's MODULE
// libraries (--project-module). The work is the recorder's (recorder/install_tree,
// recorder/dependencies); this parses, checks and hands over.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/record_stamp.hpp"
#include "recorder/image.hpp"
#include "recorder/install_tree.hpp"

namespace arec::cli {

struct BuildOptions {
  std::string cmake_build;
  std::string component;
  std::string prefix;
  std::string staged;
  std::string entrypoint_name;
  std::vector<std::string> plugins;
  std::vector<std::string> packages_info;
  std::vector<std::string> project_modules;
};

void add_build_options(CLI::App& cmd, BuildOptions& o);

// What the options add to a record, made before the store is touched: the install tree (staged now,
// removed when this goes), the inputs it and the plugins add, and the build's facts for the recorder.
struct BuildFacts {
  std::optional<InstallTree> tree;
  std::vector<LayerInput> inputs;
  std::vector<DeclaredPackage> dependencies;
  std::vector<fs::Path> build_trees;
  std::vector<fs::Path> project_modules;
  std::vector<fs::Path> packages_info;  // read: the build records again when one changes
};

// Checks the options, stages the component (with `config`: the install scripts' configuration) and
// reads the packages-info files.
Result<BuildFacts> prepare_build(const BuildOptions& o, const std::string& config);

// Gives `request` the build's facts, and its entrypoint from --entrypoint-name when none was named.
Status apply_build(const BuildFacts& facts, const BuildOptions& o, RecordRequest& request);

// The inputs a build step's depfile names, made to name what the install read rather than arec's staged
// copies of it.
void add_build_inputs(const BuildFacts& facts, RecordInputs& inputs);

}  // namespace arec::cli
