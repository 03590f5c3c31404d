// Remote write's order rules on a made-up clock: what goes in each request, what a failure does,
// and that nothing is sent after something newer was accepted.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "metrics/push_queue.hpp"

namespace {

using namespace punctual::metrics;
using namespace std::chrono_literals;

snapshot stamped(int second) {
  snapshot s;
  s.taken = std::chrono::system_clock::time_point(std::chrono::seconds(second));
  s.samples = {{"punctual_requests_total", {}, static_cast<double>(second)}};
  return s;
}

std::vector<int> seconds_of(const std::vector<snapshot>& batch) {
  std::vector<int> out;
  for (const auto& s : batch)
    out.push_back(static_cast<int>(
        std::chrono::duration_cast<std::chrono::seconds>(s.taken.time_since_epoch()).count()));
  return out;
}

// A fake endpoint over a fake clock: it answers each request by the script, and the log keeps
// what it accepted, in order.
struct fake_endpoint {
  push_queue queue;
  nanoseconds now{0};
  std::vector<int> accepted;

  explicit fake_endpoint(push_policy p) : queue(p) {}

  // Sends what is due now with this answer; returns the seconds sent (empty: nothing due).
  std::vector<int> answer(int status) {
    const auto sent = seconds_of(queue.next(now));
    if (sent.empty()) return sent;
    if (verdict_of(status) == push_verdict::accepted)
      accepted.insert(accepted.end(), sent.begin(), sent.end());
    queue.settle(verdict_of(status), now, status ? "HTTP" : "refused");
    return sent;
  }
};

push_policy small() {
  return {.capacity = 4, .batch = 2, .attempts = 3, .backoff_first = 100ms, .backoff_cap = 400ms};
}

TEST(push_queue, statuses_map_to_verdicts) {
  EXPECT_EQ(verdict_of(204), push_verdict::accepted);
  EXPECT_EQ(verdict_of(0), push_verdict::retry);
  EXPECT_EQ(verdict_of(503), push_verdict::retry);
  EXPECT_EQ(verdict_of(429), push_verdict::retry);
  EXPECT_EQ(verdict_of(400), push_verdict::rejected);
  EXPECT_EQ(verdict_of(401), push_verdict::rejected);
}

TEST(push_queue, sends_oldest_first_in_batches) {
  fake_endpoint e(small());
  for (int s = 1; s <= 3; ++s) e.queue.add(stamped(s));
  EXPECT_EQ(e.answer(204), (std::vector<int>{1, 2}));
  EXPECT_EQ(e.answer(204), (std::vector<int>{3}));
  EXPECT_TRUE(e.answer(204).empty());
  EXPECT_TRUE(e.queue.idle());
  EXPECT_EQ(e.queue.stats().requests, 2U);
  EXPECT_EQ(e.queue.stats().samples, 3U);
}

TEST(push_queue, retries_the_same_request_after_a_backoff_and_nothing_newer_first) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  EXPECT_EQ(e.answer(503), (std::vector<int>{1}));
  e.queue.add(stamped(2));
  e.queue.add(stamped(3));
  EXPECT_TRUE(e.answer(204).empty()) << "sent before the backoff passed";
  e.now += 100ms;
  // The same request again (the newer ones wait behind it), then the newer ones.
  EXPECT_EQ(e.answer(204), (std::vector<int>{1}));
  EXPECT_EQ(e.answer(204), (std::vector<int>{2, 3}));
  EXPECT_EQ(e.accepted, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(e.queue.stats().failed_attempts, 1U);
  EXPECT_EQ(e.queue.stats().dropped, 0U);
}

TEST(push_queue, gives_up_after_its_attempts_and_never_sends_the_dropped_again) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  EXPECT_EQ(e.answer(0), (std::vector<int>{1}));
  e.now += 100ms;
  EXPECT_EQ(e.answer(0), (std::vector<int>{1}));
  e.now += 200ms;  // the backoff doubles
  EXPECT_EQ(e.answer(0), (std::vector<int>{1}));
  EXPECT_EQ(e.queue.stats().dropped, 1U);
  e.queue.add(stamped(2));
  e.now += 399ms;
  EXPECT_TRUE(e.answer(204).empty()) << "the backoff is capped at 400 ms, not yet over";
  e.now += 1ms;
  EXPECT_EQ(e.answer(204), (std::vector<int>{2}));
  EXPECT_EQ(e.accepted, (std::vector<int>{2}));
  EXPECT_EQ(e.queue.stats().failed_attempts, 3U);
  EXPECT_EQ(e.queue.stats().last_error, "refused");
}

TEST(push_queue, a_refused_request_is_dropped_at_once) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  e.queue.add(stamped(2));
  e.queue.add(stamped(3));
  EXPECT_EQ(e.answer(400), (std::vector<int>{1, 2}));
  EXPECT_EQ(e.answer(204), (std::vector<int>{3})) << "a refusal waits for no backoff";
  EXPECT_EQ(e.accepted, (std::vector<int>{3}));
  EXPECT_EQ(e.queue.stats().dropped, 2U);
}

TEST(push_queue, overflow_drops_the_oldest_waiting_never_the_request_in_flight) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  EXPECT_EQ(e.answer(503), (std::vector<int>{1}));       // in flight, backing off
  for (int s = 2; s <= 7; ++s) e.queue.add(stamped(s));  // 6 into room for 4: 2 and 3 go
  EXPECT_EQ(e.queue.stats().dropped, 2U);
  e.now += 100ms;
  EXPECT_EQ(e.answer(204), (std::vector<int>{1}));
  EXPECT_EQ(e.answer(204), (std::vector<int>{4, 5}));
  EXPECT_EQ(e.answer(204), (std::vector<int>{6, 7}));
  EXPECT_EQ(e.accepted, (std::vector<int>{1, 4, 5, 6, 7}));
}

TEST(push_queue, the_final_snapshot_is_known_stored_only_when_accepted) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  e.queue.add(stamped(2));
  e.queue.add(stamped(3), true);
  e.answer(204);
  EXPECT_FALSE(e.queue.stats().final_pushed);
  e.answer(204);
  EXPECT_TRUE(e.queue.stats().final_pushed);

  fake_endpoint down(small());
  down.queue.add(stamped(1), true);
  down.answer(0);
  down.queue.abandon();
  EXPECT_FALSE(down.queue.stats().final_pushed);
  EXPECT_EQ(down.queue.stats().dropped, 1U);
  EXPECT_TRUE(down.queue.idle());
}

TEST(push_queue, a_backoff_gathers_what_waited_into_one_request) {
  fake_endpoint e(small());
  e.queue.add(stamped(1));
  e.answer(0);
  e.answer(0);  // not due: nothing sent
  e.now += 100ms;
  e.answer(0);
  e.now += 200ms;
  e.answer(0);  // third attempt: dropped
  e.queue.add(stamped(2));
  e.queue.add(stamped(3));
  e.now += 400ms;
  EXPECT_EQ(e.answer(204), (std::vector<int>{2, 3}));
}

}  // namespace
