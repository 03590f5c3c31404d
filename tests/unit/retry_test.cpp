#include "engine/retry.hpp"

#include <gtest/gtest.h>

#include <set>

namespace punctual::engine {
namespace {

using std::chrono::milliseconds;

retry_policy policy_50ms_2s() {
  retry_policy p;
  p.retries = 8;
  p.seed = 7;
  return p;
}

TEST(backoff, full_jitter_stays_under_the_doubling_ceiling_and_the_cap) {
  const retry_policy p = policy_50ms_2s();
  for (std::uint32_t retry = 1; retry <= 8; ++retry) {
    const auto ceiling = std::min(milliseconds(50) * (1 << (retry - 1)), milliseconds(2000));
    nanoseconds largest{};
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const nanoseconds d = backoff_delay(p, i, retry);
      ASSERT_GE(d.count(), 0);
      ASSERT_LE(d, ceiling) << "retry " << retry;
      largest = std::max(largest, d);
    }
    // Full jitter uses the whole range: over 20000 draws the largest is within 0.1% of the top.
    EXPECT_GT(largest, ceiling * 0.999) << "retry " << retry;
  }
}

TEST(backoff, draws_are_uniform_over_the_range) {
  const retry_policy p = policy_50ms_2s();
  constexpr int bins = 10, draws = 100000;
  int count[bins] = {};
  double sum = 0;
  for (std::uint64_t i = 0; i < draws; ++i) {
    const double u = static_cast<double>(backoff_delay(p, i, 1).count()) / 50e6;
    sum += u;
    ++count[std::min(bins - 1, static_cast<int>(u * bins))];
  }
  EXPECT_NEAR(sum / draws, 0.5, 0.005);
  for (const int c : count) EXPECT_NEAR(c, draws / bins, 5 * 95);  // 5 sigma of a binomial
}

TEST(backoff, is_a_pure_function_of_seed_index_and_retry) {
  retry_policy p = policy_50ms_2s();
  const nanoseconds a = backoff_delay(p, 12345, 2);
  EXPECT_EQ(backoff_delay(p, 12345, 2), a);  // no hidden state: the same on any worker
  std::set<std::int64_t> distinct{a.count(), backoff_delay(p, 12346, 2).count(),
                                  backoff_delay(p, 12345, 3).count()};
  p.seed = 8;
  distinct.insert(backoff_delay(p, 12345, 2).count());
  EXPECT_EQ(distinct.size(), 4u);  // index, retry number and seed each change the draw
  EXPECT_EQ(backoff_delay(p, 1, 0).count(), 0);
}

TEST(backoff, huge_retry_numbers_do_not_overflow) {
  retry_policy p = policy_50ms_2s();
  p.backoff_cap = std::chrono::hours(1);
  for (std::uint64_t i = 0; i < 100; ++i) {
    const nanoseconds d = backoff_delay(p, i, 100);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d, std::chrono::hours(1));
  }
}

TEST(retry_budget, allows_retries_up_to_its_share_of_first_attempts) {
  retry_budget b(0.1);
  ASSERT_TRUE(b.limited());
  EXPECT_FALSE(b.try_take());  // starts empty
  int allowed = 0;
  for (int i = 0; i < 1000; ++i) {
    b.on_first_attempt();
    if (b.try_take()) ++allowed;
  }
  EXPECT_EQ(allowed, 100);
}

TEST(retry_budget, saves_up_at_most_a_burst) {
  retry_budget b(0.5);
  for (int i = 0; i < 1000; ++i) b.on_first_attempt();
  int allowed = 0;
  while (b.try_take()) ++allowed;
  EXPECT_EQ(allowed, static_cast<int>(retry_budget::burst));
}

TEST(retry_budget, unlimited_without_a_budget) {
  retry_budget b(-1);
  EXPECT_FALSE(b.limited());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(b.try_take());
}

}  // namespace
}  // namespace punctual::engine
