// Retries of registry steps: bounded attempts, exponential backoff with jitter, Retry-After honoured,
// and a time budget after which the step gives up with the last error.
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string_view>

#include "registry-client/registry_error.hpp"

namespace arec {

struct RetryPolicy {
  int max_attempts = 5;
  std::chrono::milliseconds initial{200};   // the first wait; each next one doubles
  std::chrono::milliseconds cap{5000};      // no computed wait is longer (a Retry-After may be)
  std::chrono::milliseconds budget{60000};  // a step gives up when waiting would end past this (AREC_RETRY_BUDGET)

  // How long to wait before trying again after `error` ended attempt number `attempt` (from 1),
  // `elapsed` after the first attempt began; nothing when the step should give up. `jitter` in
  // [0, 1) picks the wait within [half, all] of the backoff, so parallel workers do not retry in step.
  std::optional<std::chrono::milliseconds> next_delay(const RegistryError& error, int attempt,
                                                      std::chrono::milliseconds elapsed, double jitter) const;
  // Why a temporary `error` ends the step when next_delay gives nothing: the budget, or a Retry-After
  // past it. Empty when the attempts ran out, which the count of attempts already says.
  std::string give_up_reason(const RegistryError& error, int attempt, std::chrono::milliseconds elapsed) const;
};

namespace detail {
double random_jitter();
void log_retry(std::string_view step, const RegistryError& error, int attempt, std::chrono::milliseconds delay);
// Sleeps for `delay` unless `stop` is requested first; false when stopped.
bool wait_for(std::chrono::milliseconds delay, std::stop_token stop);
}  // namespace detail

// Runs `attempt` (returning RegistryResult<T>) until it succeeds, fails for good, or the policy gives
// up; the error returned then says how many attempts were made. `step` names it in warnings.
template <typename F>
auto with_retry(const RetryPolicy& policy, std::string_view step, std::stop_token stop, F&& attempt)
    -> decltype(attempt()) {
  const auto start = std::chrono::steady_clock::now();
  for (int n = 1;; ++n) {
    auto result = attempt();
    if (result || !result.error().is_temporary()) return result;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    const auto delay = policy.next_delay(result.error(), n, elapsed, detail::random_jitter());
    if (!delay || stop.stop_requested()) {
      result.error().attempts = n;
      result.error().elapsed = elapsed;
      if (!stop.stop_requested()) result.error().gave_up = policy.give_up_reason(result.error(), n, elapsed);
      return result;
    }
    detail::log_retry(step, result.error(), n, *delay);
    if (!detail::wait_for(*delay, stop)) return result;
  }
}

}  // namespace arec
