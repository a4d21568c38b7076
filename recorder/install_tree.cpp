#include "recorder/install_tree.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "oci/oci.hpp"
#include "util/ascii.hpp"
#include "util/process.hpp"

namespace arec {

namespace {

// An install of a large project is many files; a hung one is still bounded.
constexpr auto k_install_timeout = std::chrono::hours(1);
constexpr std::size_t k_install_output = std::size_t{1} << 16;

// The keywords of file(INSTALL) that end its FILES list (cmake_install.cmake writes no others).
constexpr std::array<std::string_view, 19> k_install_keywords{"DESTINATION",
                                                              "TYPE",
                                                              "FILES",
                                                              "RENAME",
                                                              "PERMISSIONS",
                                                              "FILE_PERMISSIONS",
                                                              "DIRECTORY_PERMISSIONS",
                                                              "USE_SOURCE_PERMISSIONS",
                                                              "NO_SOURCE_PERMISSIONS",
                                                              "OPTIONAL",
                                                              "MESSAGE_ALWAYS",
                                                              "MESSAGE_LAZY",
                                                              "MESSAGE_NEVER",
                                                              "FILES_MATCHING",
                                                              "PATTERN",
                                                              "REGEX",
                                                              "EXCLUDE",
                                                              "FOLLOW_SYMLINK_CHAIN",
                                                              "COMPONENTS"};

bool is_install_keyword(std::string_view arg) {
  return std::find(k_install_keywords.begin(), k_install_keywords.end(), arg) != k_install_keywords.end();
}

TracedInstall traced_install(const std::vector<std::string>& args) {
  TracedInstall out;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool has_value = i + 1 < args.size();
    if (arg == "DESTINATION" && has_value) {
      out.destination = args[++i];
    } else if (arg == "TYPE" && has_value) {
      out.type = args[++i];
    } else if (arg == "RENAME" && has_value) {
      out.rename = args[++i];
    } else if (arg == "FILES") {
      while (i + 1 < args.size() && !is_install_keyword(args[i + 1])) out.files.push_back(args[++i]);
    }
  }
  return out;
}

// Reads CMake's json-v1 trace one line at a time: the first names its version, each other one command.
class TraceReader {
 public:
  explicit TraceReader(std::string what) : m_what(std::move(what)) {}

  Status add(std::string_view line) {
    ++m_line;
    if (line.empty()) return {};
    auto json = read_json<nlohmann::json>(line);
    if (!json || !json->is_object()) return bad("not a JSON object");
    if (m_line == 1) {
      const auto* major =
          json->contains("version") && (*json)["version"].is_object() && (*json)["version"].contains("major")
              ? &(*json)["version"]["major"]
              : nullptr;
      if (major == nullptr || !major->is_number_integer() || major->get<int>() != 1)
        return bad("not CMake's json-v1 trace (version 1)");
      return {};
    }
    const auto cmd = json->find("cmd");
    const auto file = json->find("file");
    const auto args = json->find("args");
    if (cmd == json->end() || !cmd->is_string() || args == json->end() || !args->is_array()) return {};
    if (file != json->end() && file->is_string() && m_seen.insert(file->get<std::string>()).second)
      m_trace.scripts.push_back(file->get<std::string>());
    std::vector<std::string> list;
    for (const auto& a : *args) {
      if (!a.is_string()) return bad("an argument is not a string");
      list.push_back(a.get<std::string>());
    }
    const std::string command = ascii::lower(cmd->get<std::string>());
    if (command == "file" && !list.empty() && list[0] == "INSTALL") {
      m_trace.installs.push_back(traced_install(list));
    } else if (command == "if") {
      // if(CMAKE_INSTALL_COMPONENT STREQUAL "runtime" OR NOT CMAKE_INSTALL_COMPONENT), as cmake_install.cmake
      // tests for a component; older CMake wrote "x${CMAKE_INSTALL_COMPONENT}x" STREQUAL "xruntimex".
      for (std::size_t i = 0; i + 2 < list.size(); ++i) {
        if (list[i] == "CMAKE_INSTALL_COMPONENT" && list[i + 1] == "STREQUAL") m_components.insert(list[i + 2]);
        if (list[i + 1] == "STREQUAL" && list[i].size() >= 2 && list[i].front() == 'x' && list[i].back() == 'x' &&
            list[i + 2].size() >= 2 && list[i + 2].front() == 'x' && list[i + 2].back() == 'x' &&
            list[i + 2] != list[i]) {
          m_components.insert(list[i + 2].substr(1, list[i + 2].size() - 2));
        }
      }
    }
    return {};
  }

  InstallTrace finish() {
    m_trace.components.assign(m_components.begin(), m_components.end());
    return std::move(m_trace);
  }

 private:
  Status bad(std::string_view why) const {
    return fail_input(m_what + ": line " + std::to_string(m_line) + ": " + std::string(why));
  }

  std::string m_what;
  std::size_t m_line = 0;
  std::set<std::string> m_seen;
  std::set<std::string> m_components;
  InstallTrace m_trace;
};

Result<InstallTrace> read_trace(const fs::Path& file) {
  std::ifstream in(file);
  if (!in) return fail_input("reading CMake's trace " + file.string() + ": cannot open it");
  TraceReader reader("CMake's trace " + file.string());
  for (std::string line; std::getline(in, line);) {
    if (auto s = reader.add(line); !s) return fail(s.error());
  }
  return reader.finish();
}

// The value of NAME:TYPE=VALUE in a CMakeCache.txt text; empty when it has none.
std::string cache_value(std::string_view cache, std::string_view name) {
  std::size_t pos = 0;
  while (pos < cache.size()) {
    const std::size_t end = std::min(cache.find('\n', pos), cache.size());
    std::string_view line = cache.substr(pos, end - pos);
    pos = end + 1;
    if (!line.starts_with(name) || line.size() <= name.size() || line[name.size()] != ':') continue;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos) continue;
    std::string_view value = line.substr(equals + 1);
    while (!value.empty() && value.back() == '\r') value.remove_suffix(1);
    return std::string(value);
  }
  return {};
}

// The files, links and directories under `root`, as image-like relative paths, never followed through a
// link. Directories come with `directories`.
void walk(const fs::Path& root, std::vector<std::string>& leaves, std::vector<fs::Path>* directories) {
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(root, std::filesystem::directory_options::none, ec), end;
       !ec && it != end; it.increment(ec)) {
    const auto status = it->symlink_status(ec);
    if (ec) break;
    if (std::filesystem::is_directory(status)) {
      if (directories != nullptr) directories->push_back(it->path());
      continue;
    }
    leaves.push_back(it->path().lexically_relative(root).string());
  }
}

// The directory arec stages into: made under the build tree (beside what cmake --install writes there), and
// removed with everything in it when no InstallTree holds it any more.
Result<std::shared_ptr<const fs::Path>> make_staging(const fs::Path& binary_dir) {
  const fs::Path parent = binary_dir / "CMakeFiles";
  if (auto s = fs::make_directories(parent); !s) return fail(s.error());
  std::string pattern = (parent / "arec-stage.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return fail_input("making a staging directory in " + parent.string() + ": " + fs::errno_text(errno));
  }
  return std::shared_ptr<const fs::Path>(new fs::Path(pattern), [](const fs::Path* path) {
    std::error_code ec;
    std::filesystem::remove_all(*path, ec);
    delete path;
  });
}

// CMake's messages as one line: its non-empty lines joined, the "-- Installing" progress left out.
std::string one_line(std::string_view output) {
  std::string out;
  std::size_t pos = 0;
  while (pos < output.size()) {
    const std::size_t end = std::min(output.find('\n', pos), output.size());
    std::string_view line = output.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty() || line.starts_with("-- ") || line.starts_with("Running with expanded trace") ||
        line.starts_with("Trace will be written"))
      continue;
    out += (out.empty() ? "" : " ") + std::string(line);
  }
  return printable(out);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Where an installed path (absolute, without DESTDIR) came from, by the traced file(INSTALL) calls.
std::string source_of(const InstallTrace& trace, const std::string& installed) {
  for (const auto& install : trace.installs) {
    const std::string dest = fs::Path(install.destination).lexically_normal().string();
    for (const auto& file : install.files) {
      std::string name = install.rename.empty() ? fs::Path(file).filename().string() : install.rename;
      if (install.type == "DIRECTORY") {
        if (installed.starts_with(dest + "/")) return file + " (install(DIRECTORY ... DESTINATION " + dest + "))";
      } else if (dest + "/" + name == installed) {
        return file + " (install(... DESTINATION " + dest + "))";
      }
    }
  }
  return {};
}

}  // namespace

bool InstallTree::staged(const fs::Path& path) const {
  if (!staging) return false;
  const std::string dir = staging->string();
  const std::string p = path.lexically_normal().string();
  return p.starts_with(dir + "/");
}

Result<CMakeBuild> read_cmake_build(const fs::Path& dir) {
  const std::string what = "--cmake-build " + dir.string();
  std::error_code ec;
  const fs::Path binary = std::filesystem::absolute(dir, ec).lexically_normal();
  const fs::Path cache_file = binary / "CMakeCache.txt";
  if (ec || !std::filesystem::is_regular_file(cache_file, ec)) {
    return fail_input(what + ": not a CMake build tree (it has no CMakeCache.txt); configure it with cmake first");
  }
  auto cache = fs::read_file(cache_file);
  if (!cache) return fail(std::move(cache.error()).context(what));
  CMakeBuild build{binary, fs::Path(cache_value(*cache, "CMAKE_HOME_DIRECTORY")), cache_value(*cache, "CMAKE_COMMAND")};
  if (build.cmake.empty() || build.source_dir.empty()) {
    return fail_input(what + ": its CMakeCache.txt names no CMAKE_COMMAND or CMAKE_HOME_DIRECTORY");
  }
  return build;
}

Result<InstallTrace> parse_install_trace(std::string_view text, std::string_view what) {
  TraceReader reader{std::string(what)};
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    if (auto s = reader.add(text.substr(pos, end - pos)); !s) return fail(s.error());
    pos = end + 1;
  }
  return reader.finish();
}

Result<InstallTree> stage_install(const StageRequest& request) {
  const std::string& component = request.component;
  const fs::Path scripts = request.build.binary_dir / "cmake_install.cmake";
  const std::string what = "the component " + component + " of " + request.build.binary_dir.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(scripts, ec)) {
    return fail_input(what +
                      ": the build tree has no install rules (no cmake_install.cmake): add install() rules "
                      "with COMPONENT " +
                      component);
  }
  auto staging = make_staging(request.build.binary_dir);
  if (!staging) return fail(staging.error());
  const fs::Path root = **staging / "root";
  const fs::Path trace_file = **staging / "trace.json";
  // What `cmake --install DIR --component C --config CFG --prefix P` runs, with its trace.
  std::vector<std::string> argv{request.build.cmake,
                                "--trace-expand",
                                "--trace-format=json-v1",
                                "--trace-redirect=" + trace_file.string(),
                                "-DCMAKE_INSTALL_COMPONENT=" + component,
                                "-DCMAKE_INSTALL_PREFIX=" + request.prefix};
  if (!request.config.empty()) argv.push_back("-DCMAKE_INSTALL_CONFIG_NAME=" + request.config);
  argv.insert(argv.end(), {"-P", scripts.string()});
  auto run = run_process(argv, {}, k_install_timeout, k_install_output,
                         {{"DESTDIR=" + root.string() + "/"}, StandardError::with_output});
  if (!run) return fail(std::move(run.error()).context("installing " + what));
  if (run->exit_code != 0) {
    return fail_input("installing " + what + " (" + request.build.cmake + " -P cmake_install.cmake) failed" +
                      (run->exit_code < 0 ? " or took more than an hour" : "") + ": " + one_line(run->out));
  }
  auto trace = read_trace(trace_file);
  if (!trace) return fail(trace.error());

  std::vector<std::string> leaves;
  walk(root, leaves, nullptr);
  std::sort(leaves.begin(), leaves.end());
  if (leaves.empty()) {
    const auto meant = std::find_if(trace->components.begin(), trace->components.end(), [&](const std::string& c) {
      return c != component && ascii::lower(c) == ascii::lower(component);
    });
    if (meant != trace->components.end()) {
      return fail_input(what + " installs no file; did you mean the component " + *meant + "?");
    }
    return fail_input(
        what + (request.config.empty() ? "" : " (configuration " + request.config + ")") + " installs no file; " +
        (trace->components.empty() ? "the install rules name no component"
                                   : "the install rules name the components " + joined(trace->components)) +
        " (in install(TARGETS), COMPONENT applies to the kind of file it follows: RUNTIME ... COMPONENT " + component +
        " LIBRARY ... COMPONENT " + component + ")");
  }
  const std::string prefix_path = fs::Path(request.prefix).relative_path().string();
  for (const auto& leaf : leaves) {
    if (prefix_path.empty() || leaf.starts_with(prefix_path + "/")) continue;
    const std::string installed = "/" + leaf;
    const std::string from = source_of(*trace, installed);
    return fail_input("the install rules of " + what + " put " + installed + (from.empty() ? "" : " from " + from) +
                      " outside the prefix " + request.prefix +
                      ": give it a DESTINATION relative to the prefix, or record with a prefix that holds it "
                      "(CMake: PREFIX; arec record --prefix)");
  }

  InstallTree tree;
  tree.content = root / prefix_path;
  tree.prefix = request.prefix;
  tree.component = component;
  tree.staging = std::move(*staging);
  std::set<std::string> files;
  std::set<std::string> directories;
  for (const auto& script : trace->scripts) files.insert(script);
  for (const auto& install : trace->installs) {
    for (const auto& file : install.files) {
      std::string source = fs::Path(file).lexically_normal().string();
      while (source.size() > 1 && source.ends_with('/')) source.pop_back();
      if (!std::filesystem::exists(std::filesystem::symlink_status(source, ec))) continue;  // OPTIONAL, absent
      if (install.type != "DIRECTORY") {
        files.insert(source);
        continue;
      }
      // A directory's files, and its directories (whose time changes when an entry comes or goes).
      directories.insert(source);
      std::vector<std::string> below;
      std::vector<fs::Path> dirs;
      walk(source, below, &dirs);
      for (const auto& b : below) files.insert((fs::Path(source) / b).string());
      for (const auto& d : dirs) directories.insert(d.string());
    }
  }
  tree.read_files.assign(files.begin(), files.end());
  tree.read_directories.assign(directories.begin(), directories.end());
  return tree;
}

Result<InstallTree> staged_install(const fs::Path& content, std::string prefix, std::string component) {
  std::error_code ec;
  if (!std::filesystem::is_directory(content, ec))
    return fail_input("--staged " + content.string() + ": not a directory");
  std::vector<std::string> leaves;
  walk(content, leaves, nullptr);
  if (leaves.empty()) return fail_input("--staged " + content.string() + ": holds no file");
  InstallTree tree;
  tree.content = std::filesystem::absolute(content).lexically_normal();
  tree.prefix = std::move(prefix);
  tree.component = std::move(component);
  return tree;
}

Result<std::string> installed_program(const InstallTree& tree, std::string_view name) {
  std::vector<std::string> leaves;
  walk(tree.content, leaves, nullptr);
  std::vector<std::string> found;
  for (const auto& leaf : leaves) {
    if (fs::Path(leaf).filename() != name) continue;
    struct stat st {};
    if (::lstat((tree.content / leaf).c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) continue;
    found.push_back((fs::Path(tree.prefix) / leaf).lexically_normal().string());
  }
  const std::string component = tree.component.empty() ? "the staged tree" : "the component " + tree.component;
  if (found.size() == 1) return found.front();
  if (found.empty()) {
    return fail_input(component + " installs no program called " + std::string(name) +
                      " to be the entrypoint: install it in the component (install(TARGETS ... RUNTIME DESTINATION bin "
                      "COMPONENT " +
                      (tree.component.empty() ? std::string("<name>") : tree.component) +
                      ")), or name the entrypoint (CMake: ENTRYPOINT; arec record --entrypoint)");
  }
  std::sort(found.begin(), found.end());
  return fail_input(component + " installs several programs called " + std::string(name) + " (" + joined(found) +
                    "): name the entrypoint (CMake: ENTRYPOINT; arec record --entrypoint)");
}

Status check_installed(const InstallTree& tree, const std::vector<fs::Path>& files) {
  if (files.empty()) return {};
  std::vector<std::string> leaves;
  walk(tree.content, leaves, nullptr);
  std::set<std::string> names;
  for (const auto& leaf : leaves) names.insert(fs::Path(leaf).filename().string());
  for (const auto& file : files) {
    if (names.contains(file.filename().string())) continue;
    const std::string component = tree.component.empty() ? std::string("<name>") : tree.component;
    return fail_input("--plugin " + file.string() + ": " +
                      (tree.component.empty() ? "the staged tree" : "the component " + tree.component) +
                      " installs no " + file.filename().string() +
                      "; install the plugin in it (install(TARGETS <plugin> LIBRARY DESTINATION ... COMPONENT " +
                      component + "))");
  }
  return {};
}

LayerInput install_tree_input(const InstallTree& tree) {
  return {LayerInput::Kind::directory, tree.content, tree.prefix};
}

}  // namespace arec
