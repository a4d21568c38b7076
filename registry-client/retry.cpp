#include "registry-client/retry.hpp"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <random>

namespace arec {

std::optional<std::chrono::milliseconds> RetryPolicy::next_delay(const RegistryError& error, int attempt,
                                                                 std::chrono::milliseconds elapsed,
                                                                 double jitter) const {
  if (!error.is_temporary() || attempt >= max_attempts) return std::nullopt;
  auto backoff = initial;
  for (int i = 1; i < attempt && backoff < cap; ++i) backoff *= 2;
  backoff = std::min(backoff, cap);
  auto delay = backoff / 2 +
               std::chrono::milliseconds(static_cast<std::int64_t>(static_cast<double>(backoff.count()) / 2 * jitter));
  if (error.retry_after && *error.retry_after > delay) delay = *error.retry_after;
  if (elapsed + delay > budget) return std::nullopt;
  return delay;
}

std::string RetryPolicy::give_up_reason(const RegistryError& error, int attempt,
                                        std::chrono::milliseconds elapsed) const {
  if (!error.is_temporary() || attempt >= max_attempts) return {};
  const std::string limit = "the retry budget of " + seconds_text(budget) + " (AREC_RETRY_BUDGET)";
  if (error.retry_after && elapsed + *error.retry_after > budget) {
    return "the registry asked to wait " + seconds_text(*error.retry_after) + " (Retry-After), past " + limit;
  }
  return "another try would pass " + limit;
}

namespace detail {

double random_jitter() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
}

void log_retry(std::string_view step, const RegistryError& error, int attempt, std::chrono::milliseconds delay) {
  spdlog::warn("{}: {}; trying again in {} ms (attempt {} failed)", step, error.str(), delay.count(), attempt);
}

bool wait_for(std::chrono::milliseconds delay, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  cv.wait_for(lock, stop, delay, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace detail

}  // namespace arec
