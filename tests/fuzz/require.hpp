// What the fuzz targets assert. A broken invariant aborts, so libFuzzer keeps the input that broke it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

namespace arec::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void require(bool holds, std::string_view what) {
  if (holds) return;
  std::fprintf(stderr, "invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

// Linear time, checked on every 256th input (each check costs a scan of 256 KiB): `scan` over the input
// repeated to at least 256 KiB takes at most 20 microseconds of CPU a byte (5 s in all). The scanners
// take under 0.2 s of it in the fuzz build, but "[):[\x19" repeated took 1.1 s of the reference
// scanner once on a busy 2-core run (the GCC build scans 1 MiB of it in under 10 ms); a quadratic one
// takes minutes. The fuzzer's inputs stay small; repeating one is what shows a scanner that looks
// ahead or back at every position.
template <class Scan>
void require_linear(std::string_view input, const Scan& scan, std::string_view what) {
  static unsigned count = 0;
  if (input.empty() || count++ % 256 != 0) return;
  constexpr std::size_t k_size = std::size_t{256} << 10;
  std::string large;
  large.reserve(k_size + input.size());
  while (large.size() < k_size) large.append(input);
  const std::clock_t start = std::clock();
  scan(std::string_view(large));
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  require(seconds <= 2e-5 * static_cast<double>(large.size()), what);
}

}  // namespace arec::fuzz
