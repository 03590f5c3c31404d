// The worker's queue of due requests: FIFO through growth and wrap-around, memory only for what
// waits (a --max-queue far past the machine's memory is a ceiling, not a reservation), and
// never past its limit.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/request_queue.hpp"

namespace {

using punctual::engine::request_queue;
using punctual::record::request_times;

request_times numbered(std::uint64_t i) {
  request_times t;
  t.index = i;
  return t;
}

// Pushes `n`, pops `n - keep`: the ring's head walks on, so later pushes wrap around its end.
void push_and_pop(request_queue& q, std::uint64_t& pushed, std::uint64_t& popped, std::uint64_t n,
                  std::uint64_t keep) {
  for (std::uint64_t i = 0; i < n; ++i) q.push(numbered(pushed++));
  for (std::uint64_t i = 0; i + keep < n; ++i) {
    ASSERT_FALSE(q.empty());
    ASSERT_EQ(q.front().index, popped++);
    q.pop();
  }
}

TEST(engine_request_queue, keeps_fifo_order_through_growth_and_wrap_around) {
  // The limit of --max-queue 1000000000: ~100 GB if it were taken up front.
  request_queue q(1'000'000'000);
  std::uint64_t pushed = 0;
  std::uint64_t popped = 0;
  // Wrap around the first ring, then grow it while it holds a wrapped run, three times over.
  for (int round = 0; round < 6; ++round) {
    push_and_pop(q, pushed, popped, 3000, 1000);
    push_and_pop(q, pushed, popped, 9000, 5000);
  }
  EXPECT_EQ(q.size(), pushed - popped);
  while (!q.empty()) {
    ASSERT_EQ(q.front().index, popped++);
    q.pop();
  }
  EXPECT_EQ(popped, pushed);
}

TEST(engine_request_queue, takes_room_as_it_fills_and_never_past_its_limit) {
  request_queue unbounded;
  EXPECT_EQ(unbounded.capacity(), request_queue::initial_room);
  request_queue huge(1'000'000'000);
  EXPECT_EQ(huge.capacity(), request_queue::initial_room);
  request_queue small(10);
  EXPECT_EQ(small.capacity(), 16u);
  // 5000 of 6000 allowed: one doubling, capped at the limit.
  request_queue bounded(6000);
  for (std::uint64_t i = 0; i < 5000; ++i) bounded.push(numbered(i));
  EXPECT_EQ(bounded.capacity(), 6000u);
  for (std::uint64_t i = 0; i < 5000; ++i) {
    ASSERT_EQ(bounded.front().index, i);
    bounded.pop();
  }
  // Room once taken stays: a queue as deep again allocates nothing.
  for (std::uint64_t i = 0; i < 6000; ++i) bounded.push(numbered(i));
  EXPECT_EQ(bounded.capacity(), 6000u);
}

}  // namespace
