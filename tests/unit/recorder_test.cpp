#include "record/recorder.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace punctual::record {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr nanoseconds start{seconds(100)};
constexpr nanoseconds warmup{seconds(1)};
constexpr nanoseconds measure_start = start + warmup;
constexpr nanoseconds window_end = measure_start + seconds(10);

// The run's measured views: the sum of the intervals, as the collector adds them up.
view_set measured_views(recorder& r) {
  view_set all;
  r.intervals().take(all);
  all.add(r.intervals().last());
  return all;
}

request_times times_at(nanoseconds intended) {
  request_times t;
  t.intended = intended;
  t.dispatched = intended + nanoseconds(1000);
  t.assigned = t.dispatched;
  t.sent = t.assigned;
  return t;
}

// Send gaps are kept only when asked (a fixed-rate Poisson run): between consecutive first sends
// in the window, so three sends give two gaps.
TEST(recorder, send_gaps_are_kept_only_when_asked) {
  for (const bool keep : {false, true}) {
    recorder r(measure_start, window_end, seconds(1));
    if (keep) r.keep_send_gaps();
    for (int i = 0; i < 3; ++i) r.on_sent(times_at(measure_start + milliseconds(10 * i)), 100);
    EXPECT_EQ(r.send_gaps().total_count(), keep ? 2 : 0) << keep;
    if (keep) {
      EXPECT_NEAR(r.send_gaps().value_at_percentile(50), 10'000'000, 10'000);
    }
  }
}

TEST(recorder, every_outcome_is_counted_once_by_intended_time) {
  recorder r(measure_start, window_end, seconds(1));
  const auto t = times_at(measure_start + milliseconds(10));
  for (int i = 0; i < 6; ++i) r.on_planned(t.intended);
  r.on_response(t, t.sent + milliseconds(2), 200, true);
  r.on_response(t, t.sent + milliseconds(3), 503, false);
  r.on_socket_error(t, t.sent + milliseconds(1), socket_reason::reset);
  r.on_timeout(t, seconds(2));
  r.on_dropped(t);
  r.on_unfinished(t, t.intended + milliseconds(700));
  const counters& c = r.measured_counts();
  EXPECT_EQ(c.planned, 6u);
  EXPECT_EQ(c.outcome_total(), c.planned);
  EXPECT_EQ(c.outcomes[index(outcome::ok)], 1u);
  EXPECT_EQ(c.outcomes[index(outcome::http_error)], 1u);
  EXPECT_EQ(c.socket_errors[index(socket_reason::reset)], 1u);
  EXPECT_EQ(c.censored, 2u);  // the timeout and the unfinished request
  EXPECT_EQ(c.status[200], 1u);
  EXPECT_EQ(c.status[503], 1u);
  const view_set views = measured_views(r);
  const auto& rt = views[view::response_time];
  // Dropped requests are not recorded: count = planned - dropped.
  EXPECT_EQ(rt.total_count(), 5);
  // The timeout is recorded at exactly the timeout.
  EXPECT_EQ(rt.max(), rt.highest_equivalent_value(nanoseconds(seconds(2)).count()));
  EXPECT_EQ(views[view::response_time_ok].total_count(), 1);
  EXPECT_EQ(views[view::service_time].total_count(), 2);
  EXPECT_EQ(r.warmup().counts.planned, 0u);
}

TEST(recorder, attempts_are_counted_apart_from_the_one_outcome) {
  recorder r(measure_start, window_end, seconds(1), window_end + seconds(3));
  request_times first = times_at(measure_start + milliseconds(500));
  r.on_planned(first.intended);
  r.on_sent(first, 10);
  r.on_attempt_failed(first, first.sent + milliseconds(1), true);
  request_times second = first;
  second.attempt = 1;
  second.why = retry_cause::status_5xx;
  second.due = first.intended + milliseconds(800);  // in the next second
  second.dispatched = second.due + nanoseconds(500);
  second.sent = second.dispatched;
  r.on_dispatched(second);
  r.on_sent(second, 10);
  r.on_response(second, second.sent + milliseconds(2), 200, true);

  const auto& c = r.measured_counts();
  EXPECT_EQ(c.planned, 1u);
  EXPECT_EQ(c.outcome_total(), 1u);
  EXPECT_EQ(c.outcomes[index(outcome::ok)], 1u);
  EXPECT_EQ(c.attempts.total, 2u);
  EXPECT_EQ(c.attempts.retries, 1u);
  EXPECT_EQ(c.attempts.by_cause[index(retry_cause::status_5xx)], 1u);
  const view_set v = measured_views(r);
  EXPECT_EQ(v[view::service_time].total_count(), 2);  // one per answered attempt
  EXPECT_EQ(v[view::response_time].total_count(), 1);
  // Response time from the first attempt's intended time; send lag from the retry's due time.
  EXPECT_NEAR(static_cast<double>(v[view::response_time].max()), 802.5e6, 802.5e6 * 0.001);
  EXPECT_EQ(v[view::send_lag].max(), 500);
  EXPECT_EQ(r.load().planned.size(), 13u);  // 10 s window + 3 s drain
  EXPECT_EQ(r.load().planned[0], 1u);
  EXPECT_EQ(r.load().attempts[0], 1u);
  EXPECT_EQ(r.load().attempts[1], 1u);

  r.on_retry_refused_by_budget(first);
  r.on_retry_past_deadline(first);
  EXPECT_EQ(r.measured_counts().attempts.refused_by_budget, 1u);
  EXPECT_EQ(r.measured_counts().attempts.past_deadline, 1u);
}

TEST(recorder, warmup_requests_are_reported_apart) {
  recorder r(measure_start, window_end, seconds(1));
  const auto t = times_at(start + milliseconds(500));
  r.on_planned(t.intended);
  r.on_response(t, t.sent + milliseconds(1), 200, true);
  EXPECT_EQ(r.warmup().counts.planned, 1u);
  EXPECT_EQ(r.warmup().counts.outcomes[index(outcome::ok)], 1u);
  EXPECT_EQ(r.measured_counts().planned, 0u);
  EXPECT_EQ(measured_views(r)[view::response_time].total_count(), 0);
  EXPECT_TRUE(r.intervals().current().empty());  // warm-up never reaches the interval log
}

TEST(recorder, intervals_are_cut_by_completion_time) {
  recorder r(measure_start, window_end, seconds(1));
  view_set collected;
  const auto t = times_at(measure_start + milliseconds(900));
  r.on_response(t, measure_start + milliseconds(950), 200, true);   // interval 0
  r.on_response(t, measure_start + milliseconds(1200), 200, true);  // interval 1
  EXPECT_EQ(r.intervals().take(collected), 0);
  EXPECT_EQ(collected[view::response_time].total_count(), 1);
  EXPECT_EQ(r.intervals().current()[view::response_time].total_count(), 1);
  EXPECT_EQ(r.current_interval(), 1);
}

// A worker records across many interval boundaries while a collector takes the sets: nothing is
// lost or counted twice. Run under TSan, this also checks the hand-over for data races.
TEST(recorder, concurrent_hand_over_loses_nothing) {
  constexpr int per_interval = 2000;
  constexpr int intervals = 200;
  recorder r(measure_start, measure_start + seconds(intervals), seconds(1));
  std::atomic<bool> done{false};
  std::int64_t collected_count = 0;
  std::thread collector([&] {
    view_set sink;
    while (!done.load(std::memory_order_acquire)) {
      if (r.intervals().take(sink) >= 0) {
        collected_count += sink[view::response_time].total_count();
        sink.reset();
      }
    }
  });
  for (int k = 0; k < intervals; ++k) {
    for (int i = 0; i < per_interval; ++i) {
      const nanoseconds done_at = measure_start + seconds(k) + nanoseconds(i * 1000 + 1000);
      const auto t = times_at(done_at - nanoseconds(500));
      r.on_response(t, done_at, 200, true);
    }
  }
  done.store(true, std::memory_order_release);
  collector.join();
  view_set rest;
  r.intervals().take(rest);
  collected_count += rest[view::response_time].total_count();
  collected_count += r.intervals().last()[view::response_time].total_count();
  EXPECT_EQ(collected_count, std::int64_t{per_interval} * intervals);
}

// Each request name keeps its own outcomes (planned == their sum, name by name) and its own
// response and service time, in the measured window only; the run's totals are unchanged.
TEST(recorder, names_keep_their_own_outcomes_and_views) {
  recorder r(measure_start, window_end, seconds(1), {}, 3);
  const auto at = [](std::uint16_t name, nanoseconds intended) {
    auto t = times_at(intended);
    t.name = name;
    return t;
  };
  const auto a = at(0, measure_start + milliseconds(10));
  const auto b = at(2, measure_start + milliseconds(20));
  const auto early = at(1, start + milliseconds(5));  // warm-up: no name counts
  r.on_planned(a.intended, a.name);
  r.on_planned(b.intended, b.name);
  r.on_planned(b.intended, b.name);
  r.on_planned(early.intended, early.name);
  r.on_response(a, a.intended + milliseconds(3), 200, true);
  r.on_response(b, b.intended + milliseconds(7), 500, false);
  r.on_timeout(b, seconds(2));
  r.on_response(early, early.intended + milliseconds(1), 200, true);

  const auto& names = r.by_name();
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0].planned, 1u);
  EXPECT_EQ(names[0].outcomes[index(outcome::ok)], 1u);
  EXPECT_EQ(names[1].planned, 0u);
  EXPECT_EQ(names[2].planned, 2u);
  EXPECT_EQ(names[2].outcomes[index(outcome::http_error)], 1u);
  EXPECT_EQ(names[2].outcomes[index(outcome::timeout)], 1u);
  for (const auto& n : names) {
    std::uint64_t sum = 0;
    for (const auto o : n.outcomes) sum += o;
    EXPECT_EQ(sum, n.planned);
  }
  view_set all(3);
  r.intervals().take(all);
  all.add(r.intervals().last());
  const auto& rt0 = all.named(0, named_view::response_time);
  const auto& rt2 = all.named(2, named_view::response_time);
  EXPECT_EQ(rt0.total_count(), 1);
  EXPECT_EQ(rt0.lowest_equivalent_value(rt0.max()), rt0.lowest_equivalent_value(3'000'000));
  EXPECT_EQ(rt2.total_count(), 2);  // the 500 and the timeout, as in the run's response time
  EXPECT_EQ(rt2.lowest_equivalent_value(rt2.max()), rt2.lowest_equivalent_value(2'000'000'000));
  EXPECT_EQ(all.named(2, named_view::service_time).total_count(), 1);
  EXPECT_EQ(all.named(1, named_view::response_time).total_count(), 0);
  EXPECT_EQ(all[view::response_time].total_count(), 3);
}

// Without names nothing is kept per name, and a set with names adds one without.
TEST(recorder, runs_without_names_keep_none) {
  recorder r(measure_start, window_end, seconds(1));
  const auto t = times_at(measure_start + milliseconds(10));
  r.on_planned(t.intended);
  r.on_response(t, t.intended + milliseconds(1), 200, true);
  EXPECT_TRUE(r.by_name().empty());
  view_set all(2);
  r.intervals().take(all);
  all.add(r.intervals().last());
  EXPECT_EQ(all[view::response_time].total_count(), 1);
  EXPECT_EQ(all.named(0, named_view::response_time).total_count(), 0);
  EXPECT_EQ(all.name_count(), 2u);
}

}  // namespace
}  // namespace punctual::record
