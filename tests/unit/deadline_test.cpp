// The deadline rule on raw values: which side of the deadline an ending falls on, and what is
// recorded for it (src/engine/deadline.hpp).
#include "engine/deadline.hpp"

#include <gtest/gtest.h>

namespace punctual::engine {
namespace {

using std::chrono::milliseconds;

record::request_times first_attempt(nanoseconds intended) {
  record::request_times t;
  t.intended = intended;
  return t;
}

TEST(deadline_rule, an_ending_before_the_deadline_stands_at_its_own_time) {
  const deadline_rule rule{milliseconds(20), {}};
  const auto t = first_attempt(milliseconds(1000));
  const auto e = settle(rule, t, milliseconds(1020) - nanoseconds(1));
  EXPECT_TRUE(e.in_time);
  EXPECT_EQ(e.at, milliseconds(1020) - nanoseconds(1));
  EXPECT_EQ(e.value, milliseconds(20) - nanoseconds(1));
}

TEST(deadline_rule, an_ending_at_or_after_the_deadline_is_recorded_at_exactly_the_timeout) {
  const deadline_rule rule{milliseconds(20), {}};
  const auto t = first_attempt(milliseconds(1000));
  for (const nanoseconds ended :
       {nanoseconds(milliseconds(1020)), nanoseconds(milliseconds(1020)) + nanoseconds(1),
        nanoseconds(milliseconds(1500))}) {
    const auto e = settle(rule, t, ended);
    EXPECT_FALSE(e.in_time) << ended.count();
    EXPECT_TRUE(e.chain_over);
    EXPECT_EQ(e.at, milliseconds(1020));
    EXPECT_EQ(e.value, milliseconds(20));
  }
}

TEST(deadline_rule, an_attempt_timeout_ends_the_attempt_not_the_chain) {
  const deadline_rule rule{milliseconds(100), milliseconds(30)};
  auto t = first_attempt(milliseconds(1000));
  EXPECT_EQ(rule.attempt(t), milliseconds(1030));
  const auto e = settle(rule, t, milliseconds(1031));
  EXPECT_FALSE(e.in_time);
  EXPECT_FALSE(e.chain_over);
  EXPECT_EQ(e.value, milliseconds(30));
  // A retry due at 1080 ms: its own 30 ms would end past the chain's deadline, which wins.
  t.due = milliseconds(1080);
  t.attempt = 1;
  EXPECT_EQ(rule.attempt(t), milliseconds(1100));
  const auto last = settle(rule, t, milliseconds(1100));
  EXPECT_FALSE(last.in_time);
  EXPECT_TRUE(last.chain_over);
  EXPECT_EQ(last.value, milliseconds(100));
  EXPECT_TRUE(settle(rule, t, milliseconds(1099)).in_time);
}

TEST(deadline_rule, a_recorded_value_never_exceeds_the_timeout) {
  const deadline_rule rule{milliseconds(20), milliseconds(7)};
  auto t = first_attempt(milliseconds(5));
  for (std::int64_t due_ms : {0, 9, 14, 19}) {
    t.due = due_ms ? milliseconds(5 + due_ms) : nanoseconds{};
    for (std::int64_t ended_us = 5000; ended_us < 40000; ended_us += 250) {
      const auto e = settle(rule, t, std::chrono::microseconds(ended_us));
      EXPECT_LE(e.value, rule.timeout);
      EXPECT_EQ(e.in_time, nanoseconds(std::chrono::microseconds(ended_us)) < rule.attempt(t));
    }
  }
}

}  // namespace
}  // namespace punctual::engine
