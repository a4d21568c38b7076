// Text that ends right before a page the process may not touch: code that reads even one byte past
// the end crashes the test at once, in any build, with or without a sanitizer.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace arec::test {

class GuardedText {
 public:
  explicit GuardedText(std::string_view text) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    m_size = (text.size() / page + 2) * page;
    void* base = ::mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) std::abort();
    m_base = static_cast<char*>(base);
    char* guard = m_base + m_size - page;
    if (::mprotect(guard, page, PROT_NONE) != 0) std::abort();
    char* start = guard - text.size();
    if (!text.empty()) std::memcpy(start, text.data(), text.size());
    m_view = std::string_view(start, text.size());
  }
  ~GuardedText() { ::munmap(m_base, m_size); }
  GuardedText(const GuardedText&) = delete;
  GuardedText& operator=(const GuardedText&) = delete;

  std::string_view view() const { return m_view; }

 private:
  char* m_base = nullptr;
  std::size_t m_size = 0;
  std::string_view m_view;
};

}  // namespace arec::test
