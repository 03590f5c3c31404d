#include "record/intended_seconds.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "platform/sanitizers.hpp"
#include "record/recorder.hpp"

namespace punctual::record {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

second_views story(std::int64_t second, std::int64_t p99_value, std::int64_t count = 100) {
  second_views s;
  s.second = second;
  for (std::int64_t i = 0; i < count; ++i)
    s.response_time.record(i == count - 1 ? p99_value * 2 : p99_value);
  s.planned = static_cast<std::uint64_t>(count);
  return s;
}

// peek() finds only a second that is already recording, and claims nothing.
TEST(intended_seconds, peek_finds_a_recording_second_and_claims_none) {
  intended_seconds ring(4);
  EXPECT_EQ(ring.peek(2), nullptr);
  second_views* s = ring.at(2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ring.peek(2), s);
  EXPECT_EQ(ring.peek(6), nullptr);  // the same slot, another second
  EXPECT_EQ(ring.peek(3), nullptr);
  EXPECT_NE(ring.at(3), nullptr);  // peeking left slot 3 free
  ring.retire_through(2);
  EXPECT_EQ(ring.peek(2), nullptr);
  EXPECT_EQ(ring.lost(), 0u);
}

TEST(intended_seconds, ranks_by_p99_then_max_then_the_earlier_second) {
  EXPECT_TRUE(worse_than(story(3, 2000), story(1, 1000)));
  auto a = story(1, 1000);
  auto b = story(2, 1000);
  EXPECT_TRUE(worse_than(a, b));  // same figures: the earlier second
  EXPECT_FALSE(worse_than(b, a));
  b.response_time.record(1'000'000);  // a higher max at the same p99
  EXPECT_TRUE(worse_than(b, a));
}

TEST(intended_seconds, the_finder_adds_workers_and_keeps_the_worst_whole_second) {
  worst_second_finder finder(5);
  finder.add(story(0, 1000));
  finder.add(story(1, 5000, 50));
  finder.add(story(1, 5000, 50));  // another worker's part of the same second
  finder.add(story(7, 99'000));    // beyond the whole seconds: never a candidate
  finder.complete_through(0);
  ASSERT_TRUE(finder.worst());
  EXPECT_EQ(finder.worst()->second, 0);
  finder.complete_through(10);
  ASSERT_TRUE(finder.worst());
  EXPECT_EQ(finder.worst()->second, 1);
  EXPECT_EQ(finder.worst()->planned, 100u);
  EXPECT_EQ(finder.worst()->response_time.total_count(), 100);
}

TEST(intended_seconds, an_interrupted_window_limits_the_candidates) {
  worst_second_finder finder(10);
  finder.add(story(2, 1000));
  finder.add(story(4, 9000));
  finder.limit(4);  // the window ended inside second 4
  finder.complete_through(10);
  ASSERT_TRUE(finder.worst());
  EXPECT_EQ(finder.worst()->second, 2);
}

TEST(intended_seconds, a_slot_is_reused_only_after_the_collector_took_it) {
  intended_seconds ring(3);  // rounded up to 4 slots
  ASSERT_NE(ring.at(0), nullptr);
  ring.at(0)->planned = 7;
  EXPECT_EQ(ring.at(4), nullptr);  // second 0 still holds the slot
  EXPECT_EQ(ring.lost(), 1u);
  ring.retire_through(0);
  EXPECT_EQ(ring.at(0), nullptr);  // a retired second takes no more samples
  EXPECT_EQ(ring.at(4), nullptr);  // ... and its slot is not free until taken
  std::vector<std::int64_t> taken;
  ring.take_retired([&](const second_views& s) {
    taken.push_back(s.second);
    EXPECT_EQ(s.planned, 7u);
  });
  EXPECT_EQ(taken, std::vector<std::int64_t>{0});
  ASSERT_NE(ring.at(4), nullptr);
  EXPECT_EQ(ring.at(4)->planned, 0u);  // reset by the collector
  EXPECT_EQ(ring.retired_through(), 0);
}

// A worker records a second at a time and retires it; the collector takes concurrently. Every
// sample arrives exactly once (run under TSan by scripts/run-tests.sh).
TEST(intended_seconds, worker_and_collector_hand_over_without_losing_a_sample) {
  constexpr std::int64_t seconds_run = 2000;
  intended_seconds ring(8);
  std::atomic<bool> done{false};
  std::uint64_t collected = 0;
  std::thread collector([&] {
    while (!done.load()) {
      ring.take_retired([&](const second_views& s) { collected += s.planned; });
      std::this_thread::yield();  // a good neighbour to the unit tests beside it
    }
    ring.take_retired([&](const second_views& s) { collected += s.planned; });
  });
  std::uint64_t recorded = 0;
  for (std::int64_t s = 0; s < seconds_run; ++s) {
    second_views* v = nullptr;
    while ((v = ring.at(s)) == nullptr) std::this_thread::yield();  // the collector is behind
    v->planned += 3;
    v->response_time.record(s);
    recorded += 3;
    ring.retire_through(s - 2);
  }
  ring.retire_through(seconds_run);
  done.store(true);
  collector.join();
  EXPECT_EQ(collected, recorded);
}

// Through the recorder: each request's story lands in its intended second, whenever it ends.
TEST(intended_seconds, the_recorder_files_a_request_under_its_intended_second) {
  const nanoseconds measure_start{seconds(10)};
  recorder r(measure_start, measure_start + seconds(5), seconds(1), {}, 0, seconds(2));
  request_times t;
  t.intended = measure_start + milliseconds(1500);
  t.dispatched = t.intended + milliseconds(3);
  t.assigned = t.dispatched + milliseconds(40);
  t.sent = t.assigned;
  r.on_planned(t.intended);
  r.on_dispatched(t);
  r.on_assigned(t);
  r.on_sent(t, 10);
  const nanoseconds done = t.intended + milliseconds(2600);  // ends two seconds later
  r.on_response(t, done, 200, true);
  r.roll_intervals(measure_start + seconds(7));  // past second 1 + timeout + margin
  std::vector<std::int64_t> seconds_seen;
  r.seconds().take_retired([&](const second_views& s) {
    seconds_seen.push_back(s.second);
    EXPECT_EQ(s.planned, 1u);
    EXPECT_EQ(s.sent, 1u);
    EXPECT_EQ(s.completed, 1u);
    EXPECT_NEAR(static_cast<double>(s.response_time.max()), 2.6e9, 2.6e6);
    EXPECT_NEAR(static_cast<double>(s[component::queue_wait].max()), 40e6, 40e3);
    EXPECT_NEAR(static_cast<double>(s[component::send_lag].max()), 3e6, 3e3);
  });
  EXPECT_EQ(seconds_seen, std::vector<std::int64_t>{1});
}

TEST(intended_seconds, interval_counts_follow_the_events) {
  const nanoseconds measure_start{seconds(10)};
  recorder r(measure_start, measure_start + seconds(5), seconds(1));
  request_times ok;
  ok.intended = ok.dispatched = ok.assigned = ok.sent = measure_start + milliseconds(100);
  r.on_planned(ok.intended);
  r.on_sent(ok, 10);
  r.on_response(ok, ok.intended + milliseconds(1), 200, true);
  request_times late = ok;
  r.on_planned(late.intended);
  r.on_sent(late, 10);
  r.on_queue_depth(4, measure_start + milliseconds(200));
  r.on_timeout(late, seconds(2));  // the timeout belongs to the interval of its deadline
  view_set first;
  ASSERT_EQ(r.intervals().take(first), 0);
  EXPECT_EQ(first.counts().planned, 2u);
  EXPECT_EQ(first.counts().sent, 2u);
  EXPECT_EQ(first.counts().ok, 1u);
  EXPECT_EQ(first.counts().completed, 1u);
  EXPECT_EQ(first.counts().timeouts, 0u);
  EXPECT_EQ(first.counts().queue_depth_max, 4u);
  EXPECT_EQ(r.intervals().last().counts().timeouts, 1u);
}

// A slot of the ring holds one second after another. Once the collector has taken a second, its
// slot keeps none of its pages: the ring's memory follows the seconds still open, not every value
// any second of the run saw (here each second's values lie in a page no other second uses).
TEST(intended_seconds, a_taken_second_leaves_no_pages_behind) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take histogram counts from calloc, so that ASan sees them";
#endif
  intended_seconds ring(8);
  constexpr std::int64_t open_seconds = 3;
  for (std::int64_t s = 0; s < 400; ++s) {
    second_views* v = ring.at(s);
    ASSERT_NE(v, nullptr);
    const std::int64_t value = std::int64_t{4096} << (s % 28);  // a distinct octave each second
    v->response_time.record(value);
    for (auto& c : v->components) c.record(value);
    ring.retire_through(s - open_seconds);
    ring.take_retired([](const second_views&) {});
  }
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  // The open seconds hold one page per histogram each; every other slot holds none.
  EXPECT_LE(ring.resident_bytes(),
            static_cast<std::size_t>(open_seconds + 1) * second_views::histogram_count * page);
  EXPECT_EQ(ring.lost(), 0u);
}

}  // namespace
}  // namespace punctual::record
