// A thread of its own that takes queued items one at a time, in order: the stage of a pipeline that
// runs beside the caller (writing a blob file, hashing). What is queued is bounded by weight (bytes):
// put() waits while the queue weighs more than its bound with the new item, unless it is empty, so a
// slow stage holds the caller back instead of letting memory grow.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

namespace arec {

template <typename Item>
class WorkQueue {
 public:
  // `take` runs on the queue's thread for each item. The item is destroyed before the queue says there
  // is room again, so whatever it holds (a pool's block) is back first.
  explicit WorkQueue(std::function<void(Item&)> take, std::size_t max_weight = std::numeric_limits<std::size_t>::max())
      : m_take(std::move(take)), m_max_weight(max_weight), m_thread([this] { run(); }) {}
  ~WorkQueue() { close(); }
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void put(Item item, std::size_t weight = 0) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_weight + weight <= m_max_weight || m_queue.empty(); });
    m_weight += weight;
    m_queue.emplace_back(std::move(item), weight);
    m_changed.notify_all();
  }

  // Drops what is queued and not taken yet (work nobody will want).
  void discard() {
    std::lock_guard lock(m_mutex);
    m_queue.clear();
    m_weight = 0;
    m_changed.notify_all();
  }

  // Takes what is queued, then ends the thread. Once closed, nothing may be put.
  void close() {
    {
      std::lock_guard lock(m_mutex);
      if (m_closing) return;
      m_closing = true;
      m_changed.notify_all();
    }
    m_thread.join();
  }

 private:
  void run() {
    for (;;) {
      std::pair<Item, std::size_t> next;
      {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return !m_queue.empty() || m_closing; });
        if (m_queue.empty()) return;
        next = std::move(m_queue.front());
        m_queue.pop_front();
      }
      m_take(next.first);
      next.first = Item{};
      std::lock_guard lock(m_mutex);
      m_weight -= next.second;
      m_changed.notify_all();
    }
  }

  std::function<void(Item&)> m_take;
  std::size_t m_max_weight;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<std::pair<Item, std::size_t>> m_queue;
  std::size_t m_weight = 0;
  bool m_closing = false;
  std::thread m_thread;  // last: started once everything it uses exists
};

}  // namespace arec
