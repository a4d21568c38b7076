#include "registry-client/progress.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.hpp"

namespace arec {
namespace {

// Standard error sent to a file while a test draws, then put back.
class CapturedStderr {
 public:
  explicit CapturedStderr(const std::filesystem::path& file) {
    std::fflush(stderr);
    m_saved = ::dup(STDERR_FILENO);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~CapturedStderr() {
    std::fflush(stderr);
    ::dup2(m_saved, STDERR_FILENO);
    ::close(m_saved);
  }

 private:
  int m_saved = -1;
};

TEST(Progress, NothingIsDrawnWhenStandardErrorIsNoTerminal) {
  test::TempDir dir;
  {
    CapturedStderr capture(dir / "err");
    EXPECT_EQ(progress_display_for_stderr(ProgressDisplay::terminal), ProgressDisplay::none);
    ProgressBoard board(progress_display_for_stderr(ProgressDisplay::terminal), "pushing");
    const auto slot = board.add("sha256:aaaa", 1000);
    board.set_bytes(slot, 500);
    board.finish(slot, "uploaded");
  }
  EXPECT_EQ(test::read_file(dir / "err"), "");
}

TEST(Progress, ATerminalSeesEachBlobInFlightAndTheTotalThenACleanScreen) {
  test::TempDir dir;
  {
    CapturedStderr capture(dir / "err");
    ProgressBoard board(ProgressDisplay::terminal, "pushing");
    const auto a = board.add("sha256:aaaa", 2000);
    const auto b = board.add("sha256:bbbb", 1000);
    board.set_state(a, "uploading");
    board.set_bytes(a, 1500);
    board.finish(b, "mounted");
    std::this_thread::sleep_for(std::chrono::milliseconds(450));  // two redraws at 200 ms
  }
  const std::string drawn = test::read_file(dir / "err");
  EXPECT_NE(drawn.find("sha256:aaaa  uploading  1.5 KB / 2.0 KB"), std::string::npos) << drawn;
  EXPECT_EQ(drawn.find("sha256:bbbb  "), std::string::npos) << "a finished blob leaves the display";
  EXPECT_NE(drawn.find("pushing: 1/2 blobs, 2.5 KB / 3.0 KB"), std::string::npos) << drawn;
  // The display clears itself when the transfer ends: back to its first line, then erase below.
  EXPECT_TRUE(drawn.ends_with("F\x1b[J")) << drawn;
}

}  // namespace
}  // namespace arec
