#include "util/process.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace arec {
namespace {

using namespace std::chrono_literals;

TEST(RunProcess, GivesTheInputAndReadsTheOutputAndExitCode) {
  auto run = run_process({"sh", "-c", "cat; echo done; exit 3"}, "from stdin\n", 10s, 1024);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_EQ(run->out, "from stdin\ndone\n");
}

TEST(RunProcess, StandardErrorIsNotMixedIntoTheOutput) {
  auto run = run_process({"sh", "-c", "echo secret >&2; echo out"}, "", 10s, 1024);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->out, "out\n");
}

TEST(RunProcess, OutputIsCutAtTheLimitAskedFor) {
  auto run = run_process({"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, "", 10s, 10);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->out, std::string(10, 'x'));
}

TEST(RunProcess, AProgramThatTakesTooLongIsKilled) {
  const auto started = std::chrono::steady_clock::now();
  auto run = run_process({"sleep", "30"}, "", 300ms, 16);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(RunProcess, AProgramThatCannotBeFoundIsAnErrorNamingIt) {
  auto run = run_process({"arec-no-such-helper-program"}, "", 10s, 16);
  if (run) {
    // posix_spawnp may report the failure as the child's exit (127) instead.
    EXPECT_NE(run->exit_code, 0);
  } else {
    EXPECT_NE(run.error().message.find("arec-no-such-helper-program"), std::string::npos) << run.error().message;
  }
}

TEST(RunProcess, AnInputLargerThanAPipeIsWrittenWhole) {
  const std::string input(1 << 20, 'y');  // 1 MiB, larger than a pipe's buffer
  auto run = run_process({"wc", "-c"}, input, 10s, 64);
  ASSERT_TRUE(run);
  EXPECT_EQ(std::stoul(run->out), input.size());
}

TEST(RunProcess, StandardErrorComesWithTheOutputWhenAsked) {
  auto run = run_process({"sh", "-c", "echo first; echo failed >&2"}, "", 10s, 1024, {{}, StandardError::with_output});
  ASSERT_TRUE(run);
  EXPECT_EQ(run->out, "first\nfailed\n");
}

TEST(RunProcess, TheEnvironmentGivenIsSetBesideArecsOwn) {
  ::setenv("AREC_PROCESS_TEST_KEPT", "kept", 1);
  ::setenv("AREC_PROCESS_TEST_REPLACED", "old", 1);
  auto run = run_process(
      {"sh", "-c", "echo \"$AREC_PROCESS_TEST_KEPT $AREC_PROCESS_TEST_REPLACED $AREC_PROCESS_TEST_NEW\""}, "", 10s,
      1024, {{"AREC_PROCESS_TEST_REPLACED=new", "AREC_PROCESS_TEST_NEW=added"}, StandardError::discarded});
  ::unsetenv("AREC_PROCESS_TEST_KEPT");
  ::unsetenv("AREC_PROCESS_TEST_REPLACED");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->out, "kept new added\n");
}

}  // namespace
}  // namespace arec
