#include "recorder/install_tree.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"
#include "util/process.hpp"

namespace arec {
namespace {

using test::TempDir;
using test::write_file;

// A project of install rules only (no compiler), configured with the cmake on PATH: what a build tree
// holds for stage_install.
struct ConfiguredProject {
  TempDir dir;
  fs::Path build;
  explicit ConfiguredProject(const std::string& rules) {
    write_file(dir / "src/CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.25)\nproject(rules LANGUAGES NONE)\n" + rules);
    write_file(dir / "src/app.sh", "#!/bin/sh\necho app\n");
    ::chmod((dir / "src/app.sh").c_str(), 0755);
    write_file(dir / "src/app.conf", "x = 1\n");
    write_file(dir / "src/share/data/a.txt", "a\n");
    write_file(dir / "src/share/data/deeper/b.txt", "b\n");
    build = dir / "build";
    auto run = run_process({"cmake", "-S", (dir / "src").string(), "-B", build.string()}, {}, std::chrono::seconds(120),
                           1 << 16, {{}, StandardError::with_output});
    EXPECT_TRUE(run && run->exit_code == 0) << (run ? run->out : run.error().message);
  }
};

TEST(InstallTree, StagesWhatTheComponentInstallsAndWhatTheInstallRead) {
  ConfiguredProject project(
      "install(PROGRAMS app.sh DESTINATION bin RENAME app COMPONENT runtime)\n"
      "install(FILES app.conf DESTINATION etc/app COMPONENT runtime)\n"
      "install(DIRECTORY share/data/ DESTINATION share/app COMPONENT runtime)\n"
      "install(FILES app.conf DESTINATION include COMPONENT dev)\n");
  auto build = read_cmake_build(project.build);
  ASSERT_TRUE(build) << build.error().message;
  EXPECT_EQ(build->source_dir, project.dir / "src");
  auto tree = stage_install({*build, "runtime", "", "/opt/app"});
  ASSERT_TRUE(tree) << tree.error().message;
  EXPECT_EQ(tree->prefix, "/opt/app");
  for (const auto* path : {"bin/app", "etc/app/app.conf", "share/app/a.txt", "share/app/deeper/b.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(tree->content / path)) << path;
  }
  EXPECT_FALSE(std::filesystem::exists(tree->content / "include")) << "the dev component is not installed";
  const auto& read = tree->read_files;
  for (const auto& source :
       {project.dir / "src/app.sh", project.dir / "src/app.conf", project.dir / "src/share/data/a.txt",
        project.dir / "src/share/data/deeper/b.txt", project.build / "cmake_install.cmake"}) {
    EXPECT_NE(std::find(read.begin(), read.end(), source), read.end()) << source;
  }
  const auto& dirs = tree->read_directories;
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), project.dir / "src/share/data/deeper"), dirs.end());
  EXPECT_TRUE(tree->staged(tree->content / "bin/app"));
  EXPECT_FALSE(tree->staged(project.dir / "src/app.sh"));

  auto program = installed_program(*tree, "app");
  ASSERT_TRUE(program) << program.error().message;
  EXPECT_EQ(*program, "/opt/app/bin/app");
  auto none = installed_program(*tree, "gateway");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("the component runtime installs no program called gateway"), std::string::npos)
      << none.error().message;
  EXPECT_TRUE(check_installed(*tree, {fs::Path("/build/app.conf")}));
  auto missing = check_installed(*tree, {fs::Path("/build/libplugin.so")});
  ASSERT_FALSE(missing);
  EXPECT_NE(
      missing.error().message.find("--plugin /build/libplugin.so: the component runtime installs no libplugin.so"),
      std::string::npos)
      << missing.error().message;

  // The staging directory goes with the last copy of the tree.
  const fs::Path staging = *tree->staging;
  EXPECT_TRUE(std::filesystem::exists(staging));
  tree = fail_input("dropped");
  EXPECT_FALSE(std::filesystem::exists(staging));
}

TEST(InstallTree, AComponentWithNoFileIsRefusedNamingTheComponentsThereAre) {
  ConfiguredProject project(
      "install(FILES app.conf DESTINATION etc COMPONENT runtime)\n"
      "install(FILES app.conf DESTINATION include COMPONENT dev)\n");
  auto build = read_cmake_build(project.build);
  ASSERT_TRUE(build);
  auto tree = stage_install({*build, "server", "Release", "/usr/local"});
  ASSERT_FALSE(tree);
  EXPECT_NE(tree.error().message.find("the component server of " + project.build.string() +
                                      " (configuration Release) installs no file; the install rules name the "
                                      "components dev, runtime"),
            std::string::npos)
      << tree.error().message;
  std::vector<fs::Path> left;
  for (const auto& e : std::filesystem::directory_iterator(project.build / "CMakeFiles")) {
    if (e.path().filename().string().starts_with("arec-stage.")) left.push_back(e.path());
  }
  EXPECT_TRUE(left.empty()) << "a refused staging leaves nothing: " << left.front();
  auto other_case = stage_install({*build, "Runtime", "Release", "/usr/local"});
  ASSERT_FALSE(other_case);
  EXPECT_NE(other_case.error().message.find("installs no file; did you mean the component runtime?"), std::string::npos)
      << other_case.error().message;
}

TEST(InstallTree, AFileInstalledOutsideThePrefixIsRefusedNamingItsSource) {
  ConfiguredProject project(
      "install(FILES app.conf DESTINATION etc/app COMPONENT runtime)\n"
      "install(FILES app.conf DESTINATION /etc/app RENAME global.conf COMPONENT runtime)\n");
  auto build = read_cmake_build(project.build);
  ASSERT_TRUE(build);
  auto tree = stage_install({*build, "runtime", "", "/usr/local"});
  ASSERT_FALSE(tree);
  EXPECT_NE(tree.error().message.find("put /etc/app/global.conf from " + (project.dir / "src/app.conf").string() +
                                      " (install(... DESTINATION /etc/app)) outside the prefix /usr/local"),
            std::string::npos)
      << tree.error().message;
  EXPECT_FALSE(std::filesystem::exists("/etc/app/global.conf")) << "installed with DESTDIR, never on this machine";
}

TEST(InstallTree, AFailingInstallIsOneLineWithCMakesMessage) {
  ConfiguredProject project("install(FILES gone.conf DESTINATION etc COMPONENT runtime)\n");
  auto build = read_cmake_build(project.build);
  ASSERT_TRUE(build);
  auto tree = stage_install({*build, "runtime", "", "/usr/local"});
  ASSERT_FALSE(tree);
  const std::string& message = tree.error().message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find("installing the component runtime of " + project.build.string()), std::string::npos)
      << message;
  EXPECT_NE(message.find("gone.conf"), std::string::npos) << message;
}

TEST(InstallTree, ADirectoryThatIsNoBuildTreeIsRefused) {
  TempDir dir;
  auto build = read_cmake_build(dir.path());
  ASSERT_FALSE(build);
  EXPECT_NE(build.error().message.find("not a CMake build tree (it has no CMakeCache.txt)"), std::string::npos);
}

TEST(InstallTrace, ReadsInstallsScriptsAndComponents) {
  const std::string trace =
      "{\"version\":{\"major\":1,\"minor\":2}}\n"
      "{\"args\":[\"CMAKE_INSTALL_COMPONENT\",\"STREQUAL\",\"runtime\",\"OR\",\"NOT\",\"CMAKE_INSTALL_COMPONENT\"],"
      "\"cmd\":\"if\",\"file\":\"/b/cmake_install.cmake\",\"line\":40}\n"
      "{\"args\":[\"INSTALL\",\"DESTINATION\",\"/usr/local/lib\",\"TYPE\",\"SHARED_LIBRARY\",\"FILES\",\"/b/"
      "libx.so.1\","
      "\"/b/libx.so\",\"PERMISSIONS\",\"OWNER_READ\"],\"cmd\":\"file\",\"file\":\"/b/sub/cmake_install.cmake\"}\n"
      "{\"args\":[\"\\\"xdevx\\\"\"],\"cmd\":\"message\",\"file\":\"/b/cmake_install.cmake\"}\n"
      "{\"args\":[\"xdevx\",\"STREQUAL\",\"xdevx\"],\"cmd\":\"if\",\"file\":\"/b/cmake_install.cmake\"}\n"
      "{\"args\":[\"xruntimex\",\"STREQUAL\",\"xdevx\"],\"cmd\":\"if\",\"file\":\"/b/cmake_install.cmake\"}\n";
  auto read = parse_install_trace(trace, "trace");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->scripts, (std::vector<std::string>{"/b/cmake_install.cmake", "/b/sub/cmake_install.cmake"}));
  EXPECT_EQ(read->components, (std::vector<std::string>{"dev", "runtime"}));
  ASSERT_EQ(read->installs.size(), 1u);
  EXPECT_EQ(read->installs[0].destination, "/usr/local/lib");
  EXPECT_EQ(read->installs[0].type, "SHARED_LIBRARY");
  EXPECT_EQ(read->installs[0].files, (std::vector<std::string>{"/b/libx.so.1", "/b/libx.so"}));
  auto other = parse_install_trace("{\"version\":{\"major\":2}}\n", "trace");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("trace: line 1: not CMake's json-v1 trace"), std::string::npos);
  auto broken = parse_install_trace("{\"version\":{\"major\":1}}\n{\"cmd\":\n", "trace");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("trace: line 2: not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace arec
