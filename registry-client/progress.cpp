#include "registry-client/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace arec {

namespace {

constexpr auto k_interval = std::chrono::milliseconds(200);
constexpr std::size_t k_max_lines = 8;

std::string human_bytes(double bytes) {
  static constexpr const char* k_units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, k_units[unit]);
  return buffer;
}

}  // namespace

ProgressDisplay progress_display_for_stderr(ProgressDisplay wanted) {
  return wanted == ProgressDisplay::terminal && ::isatty(STDERR_FILENO) == 1 ? ProgressDisplay::terminal
                                                                             : ProgressDisplay::none;
}

ProgressBoard::ProgressBoard(ProgressDisplay display, std::string title)
    : m_display(display), m_title(std::move(title)) {
  if (m_display == ProgressDisplay::terminal) m_thread = std::thread([this] { run(); });
}

ProgressBoard::~ProgressBoard() {
  if (!m_thread.joinable()) return;
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

std::size_t ProgressBoard::add(std::string label, std::int64_t total) {
  std::lock_guard lock(m_mutex);
  auto line = std::make_unique<Line>();
  line->label = std::move(label);
  line->total = total;
  m_lines.push_back(std::move(line));
  return m_lines.size() - 1;
}

void ProgressBoard::set_state(std::size_t slot, std::string state) {
  std::lock_guard lock(m_mutex);
  m_lines.at(slot)->state = std::move(state);
}

void ProgressBoard::set_bytes(std::size_t slot, std::int64_t bytes) {
  m_lines[slot]->bytes.store(bytes, std::memory_order_relaxed);
}

void ProgressBoard::finish(std::size_t slot, std::string state) {
  std::lock_guard lock(m_mutex);
  m_lines.at(slot)->state = std::move(state);
  m_lines[slot]->done = true;
}

std::string ProgressBoard::render() {
  std::string out;
  // Back to the first line drawn last time, then every line rewritten and cleared to its end.
  if (m_drawn > 0) out += "\x1b[" + std::to_string(m_drawn) + "F";
  std::size_t drawn = 0, done = 0;
  std::int64_t moved = 0, total = 0;
  for (const auto& line : m_lines) {
    const auto bytes = line->bytes.load(std::memory_order_relaxed);
    moved += line->done ? line->total : bytes;
    total += line->total;
    if (line->done) {
      ++done;
      continue;
    }
    if (line->state == "waiting" || drawn >= k_max_lines) continue;
    out += "  " + line->label + "  " + line->state + "  " + human_bytes(static_cast<double>(bytes)) + " / " +
           human_bytes(static_cast<double>(line->total)) + "\x1b[K\n";
    ++drawn;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  out += m_title + ": " + std::to_string(done) + "/" + std::to_string(m_lines.size()) + " blobs, " +
         human_bytes(static_cast<double>(moved)) + " / " + human_bytes(static_cast<double>(total)) + ", " +
         human_bytes(seconds > 0 ? static_cast<double>(moved) / seconds : 0) + "/s\x1b[K\n";
  ++drawn;
  // Lines left over from a longer drawing are cleared.
  for (std::size_t i = drawn; i < m_drawn; ++i) out += "\x1b[K\n";
  if (m_drawn > drawn) out += "\x1b[" + std::to_string(m_drawn - drawn) + "F";
  m_drawn = drawn;
  return out;
}

void ProgressBoard::run() {
  std::unique_lock lock(m_mutex);
  do {
    const std::string frame = render();
    std::fwrite(frame.data(), 1, frame.size(), stderr);
    std::fflush(stderr);
  } while (!m_wake.wait_for(lock, k_interval, [this] { return m_stop; }));
  // The display goes away when the transfer ends: what is left to say is said by the caller.
  if (m_drawn > 0) {
    std::string clear = "\x1b[" + std::to_string(m_drawn) + "F\x1b[J";
    std::fwrite(clear.data(), 1, clear.size(), stderr);
    std::fflush(stderr);
  }
}

}  // namespace arec
