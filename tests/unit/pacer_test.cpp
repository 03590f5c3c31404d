// The pacer's wait plans per precision mode, and fine mode's learnt lateness.
#include "engine/pacer.hpp"

#include <gtest/gtest.h>

namespace punctual::engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr nanoseconds t0{milliseconds(5000)};

TEST(pacer, fine_mode_sleeps_on_the_sockets_until_a_distant_deadline) {
  const pacer p(precision_mode::fine, false);
  const auto w = p.plan(t0, t0 + milliseconds(5), true);
  EXPECT_EQ(w.due, t0 + milliseconds(5));
  EXPECT_EQ(w.timer_sleep.count(), 0);
  EXPECT_FALSE(w.spin);
  EXPECT_EQ(w.socket_wait, milliseconds(5));  // nothing learnt yet: no early wake
}

TEST(pacer, a_near_deadline_is_slept_for_on_the_timer_alone_when_responses_may_wait) {
  const pacer p(precision_mode::fine, false);
  const auto w = p.plan(t0, t0 + microseconds(500), true);
  EXPECT_EQ(w.timer_sleep, microseconds(500));
  EXPECT_TRUE(w.spin);
  EXPECT_EQ(w.socket_wait.count(), 0);
  // When they may not wait, the same wait is on the sockets.
  const auto refused = p.plan(t0, t0 + microseconds(500), false);
  EXPECT_EQ(refused.timer_sleep.count(), 0);
  EXPECT_FALSE(refused.spin);
  EXPECT_EQ(refused.socket_wait, microseconds(500));
}

TEST(pacer, very_short_waits_are_polled_not_slept) {
  const pacer p(precision_mode::fine, false);
  const auto w = p.plan(t0, t0 + microseconds(20), true);
  EXPECT_EQ(w.timer_sleep.count(), 0);
  EXPECT_TRUE(w.spin);
  EXPECT_EQ(w.socket_wait.count(), 0);
  EXPECT_EQ(w.due, t0 + microseconds(20));
}

TEST(pacer, fine_mode_learns_its_lateness_by_steps_and_wakes_that_much_early) {
  pacer p(precision_mode::fine, false);
  // Wake-ups after 500 us sleeps land 60 us late: the estimate climbs 1 us per wake-up.
  for (int i = 0; i < 100; ++i) {
    p.learn(t0 + microseconds(500), microseconds(500), t0 + microseconds(560));
  }
  EXPECT_EQ(p.lateness(microseconds(500)), microseconds(60));
  EXPECT_EQ(p.lateness(microseconds(100)).count(), 0);  // another class of sleep length
  // One millisecond-long pause moves it by one step, not by its length.
  p.learn(t0 + microseconds(500), microseconds(500), t0 + milliseconds(3));
  EXPECT_EQ(p.lateness(microseconds(500)), microseconds(61));
  // A 600 us wait (>= 200 us) now sleeps 61 us less and is spun the rest.
  const auto w = p.plan(t0, t0 + microseconds(600), true);
  EXPECT_EQ(w.timer_sleep, microseconds(600 - 61));
  EXPECT_TRUE(w.spin);
  EXPECT_EQ(w.due, t0 + microseconds(600));
}

TEST(pacer, lateness_is_capped) {
  pacer p(precision_mode::fine, false);
  for (int i = 0; i < 1000; ++i) p.learn(t0, milliseconds(2), t0 + milliseconds(5));
  EXPECT_EQ(p.lateness(milliseconds(2)), microseconds(150));
}

TEST(pacer, with_even_gaps_short_waits_keep_their_late_wake_up) {
  pacer even(precision_mode::fine, false);
  pacer uneven(precision_mode::fine, true);
  for (int i = 0; i < 40; ++i) {
    even.learn(t0, microseconds(100), t0 + microseconds(40));
    uneven.learn(t0, microseconds(100), t0 + microseconds(40));
  }
  EXPECT_EQ(even.plan(t0, t0 + microseconds(100), true).timer_sleep, microseconds(100));
  EXPECT_EQ(uneven.plan(t0, t0 + microseconds(100), true).timer_sleep, microseconds(60));
}

TEST(pacer, spin_mode_sleeps_until_two_milliseconds_before_then_spins) {
  const pacer p(precision_mode::spin, false);
  const auto far = p.plan(t0, t0 + milliseconds(10), false);
  EXPECT_EQ(far.socket_wait, milliseconds(8));
  EXPECT_EQ(far.due, t0 + milliseconds(8));
  const auto near = p.plan(t0, t0 + milliseconds(1), false);
  EXPECT_EQ(near.socket_wait.count(), 0);
  EXPECT_EQ(near.due, t0);
}

TEST(pacer, coarse_mode_wakes_on_the_next_millisecond_tick_of_the_schedule) {
  pacer p(precision_mode::coarse, false);
  p.set_origin(t0);
  // A deadline 2.3 ms into the schedule is served at the 3 ms tick.
  const auto w = p.plan(t0 + microseconds(100), t0 + microseconds(2300), false);
  EXPECT_EQ(w.due, t0 + milliseconds(3));
  EXPECT_EQ(w.socket_wait, microseconds(2900));
  // A deadline on a tick is served on it; one already due is not rounded.
  EXPECT_EQ(p.plan(t0, t0 + milliseconds(4), false).due, t0 + milliseconds(4));
  EXPECT_EQ(p.plan(t0 + microseconds(1500), t0 + microseconds(1500), false).due,
            t0 + microseconds(1500));
}

// A long wait (the schedule's start, seconds away) wakes 2 ms early and is planned again from
// there: the first wake-up after a long sleep lands milliseconds late on these VMs.
TEST(pacer, a_long_wait_wakes_two_milliseconds_early_and_plans_again) {
  for (const auto mode : {precision_mode::fine, precision_mode::coarse}) {
    pacer p(mode, false);
    p.set_origin(t0);
    const auto far = p.plan(t0, t0 + milliseconds(2000), true);
    EXPECT_EQ(far.due, t0 + milliseconds(1998));
    EXPECT_EQ(far.socket_wait, milliseconds(1998));
    const auto near = p.plan(t0 + milliseconds(1998), t0 + milliseconds(2000), true);
    EXPECT_EQ(near.due, t0 + milliseconds(2000));
  }
  // Waits of 10 ms and less are not split.
  const pacer fine(precision_mode::fine, false);
  EXPECT_EQ(fine.plan(t0, t0 + milliseconds(10), true).due, t0 + milliseconds(10));
}

}  // namespace
}  // namespace punctual::engine
