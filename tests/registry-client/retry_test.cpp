#include "registry-client/retry.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

using std::chrono::milliseconds;

RegistryError temporary(int status = 503) {
  RegistryError e;
  e.status = status;
  return e;
}

TEST(Retry, BacksOffExponentiallyWithJitterUpToTheCap) {
  const RetryPolicy policy{10, milliseconds(200), milliseconds(5000), milliseconds(600000)};
  // jitter 0 gives half the backoff, jitter near 1 all of it.
  EXPECT_EQ(policy.next_delay(temporary(), 1, milliseconds(0), 0.0), milliseconds(100));
  EXPECT_EQ(policy.next_delay(temporary(), 1, milliseconds(0), 0.999), milliseconds(199));
  EXPECT_EQ(policy.next_delay(temporary(), 2, milliseconds(0), 0.0), milliseconds(200));
  EXPECT_EQ(policy.next_delay(temporary(), 3, milliseconds(0), 0.0), milliseconds(400));
  EXPECT_EQ(policy.next_delay(temporary(), 9, milliseconds(0), 0.0), milliseconds(2500));  // capped at 5 s
}

TEST(Retry, GivesUpOnLastingErrorsAfterTheAttemptsOrPastTheBudget) {
  const RetryPolicy policy{5, milliseconds(200), milliseconds(5000), milliseconds(3000)};
  EXPECT_EQ(policy.next_delay(temporary(404), 1, milliseconds(0), 0.5), std::nullopt);
  EXPECT_EQ(policy.next_delay(temporary(), 5, milliseconds(0), 0.5), std::nullopt);
  EXPECT_NE(policy.next_delay(temporary(), 4, milliseconds(0), 0.5), std::nullopt);
  EXPECT_EQ(policy.next_delay(temporary(), 2, milliseconds(2900), 0.5), std::nullopt);
}

TEST(Retry, HonoursRetryAfterWithinTheBudget) {
  const RetryPolicy policy{5, milliseconds(200), milliseconds(5000), milliseconds(60000)};
  auto e = temporary(429);
  e.retry_after = std::chrono::seconds(8);
  EXPECT_EQ(policy.next_delay(e, 1, milliseconds(0), 0.0), milliseconds(8000));
  e.retry_after = std::chrono::seconds(90);
  EXPECT_EQ(policy.next_delay(e, 1, milliseconds(0), 0.0), std::nullopt);
}

TEST(Retry, SaysWhyItGaveUpBeforeTheAttemptsRanOut) {
  const RetryPolicy policy{5, milliseconds(200), milliseconds(5000), milliseconds(10000)};
  auto e = temporary(429);
  e.retry_after = std::chrono::seconds(30);
  EXPECT_EQ(policy.give_up_reason(e, 1, milliseconds(0)),
            "the registry asked to wait 30 s (Retry-After), past the retry budget of 10 s (AREC_RETRY_BUDGET)");
  EXPECT_EQ(policy.give_up_reason(temporary(), 3, milliseconds(9900)),
            "another try would pass the retry budget of 10 s (AREC_RETRY_BUDGET)");
  EXPECT_EQ(policy.give_up_reason(temporary(), 5, milliseconds(0)), "");     // the attempts ran out: the count says it
  EXPECT_EQ(policy.give_up_reason(temporary(404), 1, milliseconds(0)), "");  // not worth another try at all

  e.attempts = 1;
  e.elapsed = milliseconds(12);
  e.gave_up = policy.give_up_reason(e, 1, milliseconds(12));
  EXPECT_EQ(e.str(),
            "429 Too Many Requests (gave up: the registry asked to wait 30 s (Retry-After), past the retry "
            "budget of 10 s (AREC_RETRY_BUDGET))");
  e.attempts = 3;
  e.elapsed = milliseconds(9900);
  e.gave_up = policy.give_up_reason(temporary(), 3, e.elapsed);
  EXPECT_EQ(e.str(),
            "429 Too Many Requests (gave up after 3 attempts in 9.9 s: another try would pass the retry "
            "budget of 10 s (AREC_RETRY_BUDGET))");
}

TEST(Retry, TriesUntilSuccessAndCountsAttemptsWhenGivingUp) {
  const RetryPolicy policy{4, milliseconds(1), milliseconds(2), milliseconds(1000)};
  int calls = 0;
  auto ok = with_retry(policy, "testing", {}, [&]() -> RegistryResult<int> {
    if (++calls < 3) return std::unexpected(temporary());
    return 42;
  });
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 42);
  EXPECT_EQ(calls, 3);

  calls = 0;
  auto failed = with_retry(policy, "testing", {}, [&]() -> RegistryResult<int> {
    ++calls;
    return std::unexpected(temporary());
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(failed.error().attempts, 4);

  calls = 0;
  auto lasting = with_retry(policy, "testing", {}, [&]() -> RegistryResult<int> {
    ++calls;
    return std::unexpected(temporary(404));
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(lasting.error().attempts, 1);
}

TEST(Retry, StopsWaitingWhenAskedTo) {
  const RetryPolicy policy{5, milliseconds(10000), milliseconds(10000), milliseconds(60000)};
  std::stop_source stop;
  stop.request_stop();
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  auto failed = with_retry(policy, "testing", stop.get_token(), [&]() -> RegistryResult<int> {
    ++calls;
    return std::unexpected(temporary());
  });
  EXPECT_FALSE(failed);
  EXPECT_EQ(calls, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace arec
