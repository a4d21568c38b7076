// A progress display for blob transfers on stderr: one line per blob in flight (state, bytes) and a
// total line (blobs done, bytes, rate), redrawn a few times a second. Only on a terminal; elsewhere
// nothing is drawn and the calls cost an atomic store.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace arec {

enum class ProgressDisplay { none, terminal };

// `wanted`, unless standard error is not a terminal: then ProgressDisplay::none.
ProgressDisplay progress_display_for_stderr(ProgressDisplay wanted);

class ProgressBoard {
 public:
  ProgressBoard(ProgressDisplay display, std::string title);
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  // Adds a line for a blob of `total` bytes and returns its slot.
  std::size_t add(std::string label, std::int64_t total);
  void set_state(std::size_t slot, std::string state);
  void set_bytes(std::size_t slot, std::int64_t bytes);
  // A final state ("uploaded", "mounted", "present"): the line leaves the display and counts as done.
  void finish(std::size_t slot, std::string state);

 private:
  struct Line {
    std::string label;
    std::string state = "waiting";
    std::int64_t total = 0;
    std::atomic<std::int64_t> bytes{0};
    bool done = false;
  };

  void run();
  std::string render();

  ProgressDisplay m_display;
  std::string m_title;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::vector<std::unique_ptr<Line>> m_lines;
  std::size_t m_drawn = 0;  // lines on screen from the last drawing
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::thread m_thread;
};

}  // namespace arec
