#include "cli/record_build.hpp"

namespace arec::cli {

namespace {

constexpr std::string_view k_default_prefix = "/usr/local";

// A plugin without DEST goes where libraries go; with one, as --file puts a file.
Result<LayerInput> plugin_input(const std::string& spec) {
  auto input = parse_layer_input(LayerInput::Kind::file, spec.find('=') == std::string::npos
                                                             ? spec + "=" + std::string(k_default_prefix) + "/lib/"
                                                             : spec);
  if (!input) return fail(std::move(input.error()).context("--plugin"));
  return input;
}

}  // namespace

void add_build_options(CLI::App& cmd, BuildOptions& o) {
  cmd.add_option("--cmake-build", o.cmake_build,
                 "The CMake build tree the outputs come from: its install rules (--component), and its source and "
                 "build directories (an absolute RUNPATH outside them names a directory of this machine, kept at its "
                 "path)")
      ->type_name("DIR");
  cmd.add_option("--component", o.component,
                 "Record what the install component NAME of --cmake-build installs (cmake --install DIR --component "
                 "NAME, in the configuration of --config), at its install paths under --prefix, with its runtime "
                 "closure")
      ->type_name("NAME");
  cmd.add_option("--prefix", o.prefix,
                 "The install prefix of --component or --staged in the image (default /usr/local)")
      ->type_name("DIR");
  cmd.add_option("--staged", o.staged,
                 "A component installed already (CPack's staging): DIR holds what was installed under --prefix; "
                 "recorded as --component records its own staging")
      ->type_name("DIR");
  cmd.add_option("--entrypoint-name", o.entrypoint_name,
                 "With --component or --staged and no --entrypoint: the entrypoint is the program of this file name "
                 "the component installs")
      ->type_name("NAME");
  cmd.add_option("--plugin", o.plugins,
                 "A library the program loads with dlopen: with --component or --staged the component must install a "
                 "file of its name; else packed as --file does, DEST defaulting to /usr/local/lib/ (repeatable)")
      ->type_name("SRC[=DEST]");
  cmd.add_option("--packages-info", o.packages_info,
                 "A JSON file naming packages of no Debian package (a FetchContent or ExternalProject dependency, a "
                 "vendor's library): their files are a layer of their own each (dep:NAME=VERSION) and the SBOM names "
                 "them (repeatable; see docs/cmake.md)")
      ->type_name("FILE");
  cmd.add_option("--project-module", o.project_modules,
                 "A MODULE library of the project that no record is told to hold: warned about when a recorded program "
                 "calls dlopen and the image holds it not (repeatable; the CMake module passes them)")
      ->type_name("FILE");
}

Result<BuildFacts> prepare_build(const BuildOptions& o, const std::string& config) {
  BuildFacts facts;
  const bool tree = !o.component.empty() || !o.staged.empty();
  if (!tree) {
    for (const auto& [set, name] :
         {std::pair{!o.prefix.empty(), "--prefix"}, {!o.entrypoint_name.empty(), "--entrypoint-name"}}) {
      if (set) return fail_input(std::string(name) + " goes with --component or --staged (an install tree)");
    }
  }
  if (!o.component.empty() && o.cmake_build.empty() && o.staged.empty()) {
    return fail_input("--component " + o.component + ": give the build tree to install it from (--cmake-build DIR)");
  }
  std::string prefix(k_default_prefix);
  if (!o.prefix.empty()) {
    auto normal = normalise_image_path(o.prefix, "--prefix");
    if (!normal) return fail(normal.error());
    prefix = "/" + *normal;
  }
  std::optional<CMakeBuild> build;
  if (!o.cmake_build.empty()) {
    auto read = read_cmake_build(o.cmake_build);
    if (!read) return fail(read.error());
    build = std::move(*read);
    facts.build_trees = {build->source_dir, build->binary_dir};
  }
  if (!o.staged.empty()) {
    auto staged = staged_install(o.staged, prefix, o.component);
    if (!staged) return fail(staged.error());
    facts.tree = std::move(*staged);
  } else if (!o.component.empty()) {
    auto staged = stage_install({*build, o.component, config, prefix});
    if (!staged) return fail(staged.error());
    facts.tree = std::move(*staged);
  }
  if (facts.tree) facts.inputs.push_back(install_tree_input(*facts.tree));
  std::vector<fs::Path> plugins;
  for (const auto& spec : o.plugins) {
    if (facts.tree) {
      plugins.push_back(fs::Path(spec.substr(0, spec.find('='))));
      continue;
    }
    auto input = plugin_input(spec);
    if (!input) return fail(input.error());
    facts.inputs.push_back(std::move(*input));
  }
  if (facts.tree) {
    if (auto s = check_installed(*facts.tree, plugins); !s) return fail(s.error());
  }
  for (const auto& file : o.packages_info) {
    auto declared = read_packages_info(file);
    if (!declared) return fail(declared.error());
    facts.dependencies = merge_declared(std::move(facts.dependencies), std::move(*declared));
    facts.packages_info.emplace_back(file);
  }
  for (const auto& module : o.project_modules) facts.project_modules.emplace_back(module);
  return facts;
}

Status apply_build(const BuildFacts& facts, const BuildOptions& o, RecordRequest& request) {
  request.dependencies = facts.dependencies;
  request.build_trees = facts.build_trees;
  request.project_modules = facts.project_modules;
  if (!facts.tree) return {};
  request.paths = EntryPaths::install_tree;
  if (request.entrypoint.empty() && !o.entrypoint_name.empty()) {
    auto program = installed_program(*facts.tree, o.entrypoint_name);
    if (!program) return fail(program.error());
    request.entrypoint = {*program};
  }
  return {};
}

void add_build_inputs(const BuildFacts& facts, RecordInputs& inputs) {
  if (facts.tree) {
    std::erase_if(inputs.files, [&](const fs::Path& path) { return facts.tree->staged(path); });
    std::erase_if(inputs.directories, [&](const fs::Path& path) { return facts.tree->staged(path); });
    inputs.files.insert(inputs.files.end(), facts.tree->read_files.begin(), facts.tree->read_files.end());
    inputs.directories.insert(inputs.directories.end(), facts.tree->read_directories.begin(),
                              facts.tree->read_directories.end());
  }
  inputs.files.insert(inputs.files.end(), facts.packages_info.begin(), facts.packages_info.end());
}

}  // namespace arec::cli
