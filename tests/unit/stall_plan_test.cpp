#include "server/stall_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

namespace punctual::server {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

stall_window win(nanoseconds start, nanoseconds length) {
  return {start, length};
}

TEST(stall_plan, empty_plan_never_stalls) {
  const stall_plan plan;
  EXPECT_TRUE(plan.empty());
  EXPECT_FALSE(plan.next_stall_after(0ns).has_value());
  EXPECT_FALSE(plan.window_containing(5s).has_value());
  EXPECT_EQ(plan.release_time(1234ns), 1234ns);
}

TEST(stall_plan, periodic_windows_are_the_last_len_of_every_period) {
  const stall_plan plan(2s, 10s, {});
  EXPECT_EQ(plan.next_stall_after(0ns), win(8s, 2s));
  EXPECT_EQ(plan.next_stall_after(8500ms), win(8s, 2s));
  EXPECT_EQ(plan.next_stall_after(10s), win(18s, 2s));  // half-open: 10 s is answering time
  EXPECT_EQ(plan.next_stall_after(19s), win(18s, 2s));
  EXPECT_EQ(plan.next_stall_after(20s), win(28s, 2s));
  EXPECT_FALSE(plan.window_containing(8s - 1ns).has_value());
  EXPECT_EQ(plan.window_containing(8s), win(8s, 2s));
  EXPECT_EQ(plan.window_containing(10s - 1ns), win(8s, 2s));
  EXPECT_FALSE(plan.window_containing(10s).has_value());
}

TEST(stall_plan, release_time_moves_due_times_inside_a_stall_to_its_end) {
  const stall_plan plan(2s, 10s, {});
  EXPECT_EQ(plan.release_time(5s), 5s);
  EXPECT_EQ(plan.release_time(8s), 10s);
  EXPECT_EQ(plan.release_time(9999ms), 10s);
  EXPECT_EQ(plan.release_time(10s), 10s);
  EXPECT_EQ(plan.release_time(38500ms), 40s);
}

TEST(stall_plan, explicit_windows_in_any_order) {
  const stall_plan plan(0ns, 0ns, {win(7s, 500ms), win(3s, 1s)});
  EXPECT_EQ(plan.next_stall_after(0ns), win(3s, 1s));
  EXPECT_EQ(plan.next_stall_after(4s), win(7s, 500ms));
  EXPECT_FALSE(plan.next_stall_after(7500ms).has_value());
  EXPECT_EQ(plan.release_time(3500ms), 4s);
  EXPECT_EQ(plan.release_time(4s), 4s);
  EXPECT_EQ(plan.release_time(7200ms), 7500ms);
}

TEST(stall_plan, overlapping_and_touching_windows_merge) {
  const stall_plan overlap(0ns, 0ns, {win(1s, 2s), win(2s, 3s)});
  EXPECT_EQ(overlap.next_stall_after(0ns), win(1s, 4s));
  EXPECT_EQ(overlap.release_time(1500ms), 5s);
  const stall_plan touching(0ns, 0ns, {win(1s, 1s), win(2s, 1s)});
  EXPECT_EQ(touching.window_containing(2500ms), win(1s, 2s));
  EXPECT_EQ(touching.release_time(1500ms), 3s);
}

TEST(stall_plan, explicit_and_periodic_windows_merge) {
  const stall_plan plan(2s, 10s, {win(9s, 2s), win(17s, 1s)});
  EXPECT_EQ(plan.next_stall_after(0ns), win(8s, 3s));
  EXPECT_EQ(plan.window_containing(10500ms), win(8s, 3s));  // found from inside its tail
  EXPECT_EQ(plan.release_time(9500ms), 11s);
  EXPECT_EQ(plan.next_stall_after(11s), win(17s, 3s));  // [17,18) touches [18,20)
  EXPECT_EQ(plan.release_time(17500ms), 20s);
}

TEST(stall_plan, rejects_impossible_plans) {
  EXPECT_THROW(stall_plan(10s, 10s, {}), std::invalid_argument);
  EXPECT_THROW(stall_plan(11s, 10s, {}), std::invalid_argument);
  EXPECT_THROW(stall_plan(0ns, 10s, {}), std::invalid_argument);
  EXPECT_THROW(stall_plan(1s, 0ns, {}), std::invalid_argument);
  EXPECT_THROW(stall_plan(0ns, 0ns, {win(-1s, 1s)}), std::invalid_argument);
  EXPECT_THROW(stall_plan(0ns, 0ns, {win(1s, 0ns)}), std::invalid_argument);
}

TEST(stall_plan, from_config_combines_both_kinds) {
  server_config config;
  config.stall_length = 100ms;
  config.stall_period = 1s;
  config.stall_at = {win(250ms, 50ms)};
  const stall_plan plan = stall_plan::from_config(config);
  EXPECT_EQ(plan.next_stall_after(0ns), win(250ms, 50ms));
  EXPECT_EQ(plan.next_stall_after(300ms), win(900ms, 100ms));
}

// Brute force: hold a due time while any single window contains it.
nanoseconds brute_release(const std::vector<stall_window>& all, nanoseconds t) {
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& w : all) {
      if (w.start <= t && t < w.end()) {
        t = w.end();
        moved = true;
      }
    }
  }
  return t;
}

TEST(stall_plan, release_time_matches_brute_force_on_random_plans) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    const nanoseconds period = std::chrono::milliseconds(200 + rng() % 800);
    const nanoseconds length = std::chrono::milliseconds(1 + rng() % 150);
    std::vector<stall_window> explicit_windows;
    for (int i = 0; i < 4; ++i) {
      explicit_windows.push_back(
          win(std::chrono::milliseconds(rng() % 5000), std::chrono::milliseconds(1 + rng() % 400)));
    }
    const stall_plan plan(length, period, explicit_windows);
    std::vector<stall_window> all = explicit_windows;
    for (nanoseconds end = period; end < 20s; end += period) {
      all.push_back(win(end - length, length));
    }
    for (nanoseconds t = 0ns; t < 8s; t += 7ms) {
      ASSERT_EQ(plan.release_time(t), brute_release(all, t))
          << "round " << round << " t " << t.count();
      const auto w = plan.window_containing(t);
      ASSERT_EQ(w.has_value(), brute_release(all, t) != t);
      if (w) {
        ASSERT_TRUE(w->start <= t && t < w->end());
      }
    }
  }
}

}  // namespace
}  // namespace punctual::server
