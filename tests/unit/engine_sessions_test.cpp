#include <gtest/gtest.h>

#include <chrono>

#include "engine/sessions.hpp"

namespace punctual::engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr nanoseconds start{seconds(100)};
constexpr nanoseconds window_end = start + seconds(10);

// Names: 0 a.one, 1 a.two, 2 a.session.
run::hybrid_model one_scenario(std::uint32_t max_users = 0, bool drop = false, bool go_on = false) {
  run::hybrid_model h;
  h.scenarios.push_back({"a", 1, {{0, {}, nullptr, {}, false}, {1, {}, nullptr, {}, false}}, 2});
  h.scenarios[0].steps[0].think.a = milliseconds(5);
  h.max_users = max_users;
  h.drop_on_overload = drop;
  h.continue_on_error = go_on;
  return h;
}

struct fixture {
  explicit fixture(const run::hybrid_model& h, std::uint32_t max_users = 0)
      : config(h), driver(config, 1, max_users), recorder(start, window_end, seconds(1), {}, 3) {
    driver.attach(recorder, window_end + seconds(1));
    recorder.set_listener(&driver);
  }
  const record::name_counts& name(std::size_t i) const { return recorder.by_name()[i]; }
  run::hybrid_model config;
  session_driver driver;
  record::recorder recorder;
};

std::uint64_t outcome_sum(const record::name_counts& n) {
  std::uint64_t s = 0;
  for (const auto o : n.outcomes) s += o;
  return s;
}

TEST(session_driver, a_session_runs_its_steps_after_each_completion_plus_think) {
  fixture f(one_scenario());
  record::request_times first;
  ASSERT_EQ(f.driver.arrive(7, start + milliseconds(10), first),
            session_driver::arrival_fate::admit);
  EXPECT_EQ(first.intended, start + milliseconds(10));
  EXPECT_EQ(first.arrival, first.intended);
  EXPECT_EQ(first.name, 0);
  EXPECT_EQ(first.step, 0);
  EXPECT_EQ(f.name(0).planned, 1u);
  EXPECT_EQ(f.name(1).planned, 1u);  // every step is planned at arrival
  EXPECT_EQ(f.name(2).planned, 1u);
  first.sent = first.intended;
  f.recorder.on_response(first, start + milliseconds(13), 200, true);
  record::request_times next;
  EXPECT_FALSE(f.driver.next_due(start + milliseconds(17), next));  // due at 13 + 5 ms
  ASSERT_TRUE(f.driver.next_due(start + milliseconds(18), next));
  EXPECT_EQ(next.intended, start + milliseconds(18));
  EXPECT_EQ(next.arrival, start + milliseconds(10));
  EXPECT_EQ(next.name, 1);
  EXPECT_EQ(next.step, 1);
  EXPECT_FALSE(f.driver.idle());
  next.sent = next.intended;
  f.recorder.on_response(next, start + milliseconds(30), 200, true);
  EXPECT_TRUE(f.driver.idle());
  EXPECT_EQ(f.name(2).outcomes[record::index(record::outcome::ok)], 1u);
  EXPECT_EQ(f.recorder.measured_counts().planned, 2u);  // the steps, not the session
}

TEST(session_driver, a_failed_step_skips_the_rest_under_abort) {
  fixture f(one_scenario());
  record::request_times first;
  f.driver.arrive(1, start + milliseconds(10), first);
  f.recorder.on_socket_error(first, start + milliseconds(12), record::socket_reason::reset);
  EXPECT_TRUE(f.driver.idle());
  EXPECT_EQ(f.name(1).outcomes[record::index(record::outcome::skipped)], 1u);
  EXPECT_EQ(f.name(2).outcomes[record::index(record::outcome::socket_error)], 1u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(outcome_sum(f.name(i)), f.name(i).planned) << i;
  const auto& c = f.recorder.measured_counts();
  EXPECT_EQ(c.planned, c.outcome_total());
}

TEST(session_driver, continue_goes_on_and_the_session_keeps_its_first_failure) {
  fixture f(one_scenario(0, false, true));
  record::request_times first;
  f.driver.arrive(1, start + milliseconds(10), first);
  f.recorder.on_response(first, start + milliseconds(12), 500, false);
  record::request_times next;
  ASSERT_TRUE(f.driver.next_due(start + milliseconds(17), next));
  f.recorder.on_response(next, start + milliseconds(20), 200, true);
  EXPECT_EQ(f.name(2).outcomes[record::index(record::outcome::http_error)], 1u);
}

TEST(session_driver, over_max_users_an_arrival_waits_or_is_dropped) {
  fixture queue(one_scenario(1), 1);
  record::request_times a, b;
  EXPECT_EQ(queue.driver.arrive(1, start + milliseconds(1), a),
            session_driver::arrival_fate::admit);
  EXPECT_EQ(queue.driver.arrive(2, start + milliseconds(2), b), session_driver::arrival_fate::wait);
  b.dispatched = start + milliseconds(2);
  queue.driver.wait_for_slot(b);
  record::request_times got;
  EXPECT_FALSE(queue.driver.next_due(start + milliseconds(3), got));
  queue.recorder.on_socket_error(a, start + milliseconds(4), record::socket_reason::reset);
  ASSERT_TRUE(queue.driver.next_due(start + milliseconds(4), got));
  EXPECT_EQ(got.intended, start + milliseconds(2));  // the wait counts in its first step
  EXPECT_EQ(got.dispatched, start + milliseconds(2));
  EXPECT_NE(got.user, 0u);

  fixture drop(one_scenario(1, true), 1);
  drop.driver.arrive(1, start + milliseconds(1), a);
  EXPECT_EQ(drop.driver.arrive(2, start + milliseconds(2), b),
            session_driver::arrival_fate::dropped);
  EXPECT_EQ(drop.name(0).outcomes[record::index(record::outcome::dropped)], 1u);
  EXPECT_EQ(drop.name(1).outcomes[record::index(record::outcome::dropped)], 1u);
  EXPECT_EQ(drop.name(2).outcomes[record::index(record::outcome::dropped)], 1u);
}

// A response may wait unread only when no think time after it could be shorter than the wait,
// and no arrival waits for the slot a session's end frees: a zero think gives no send lag.
TEST(session_driver, responses_wait_unread_only_when_no_user_could_be_held_back) {
  const nanoseconds horizon = milliseconds(1);
  auto with_think = [&](schedule::think_time t) {
    run::hybrid_model h = one_scenario();
    h.scenarios[0].steps[0].think = t;
    h.scenarios[0].steps[1].think = {};  // the last step's think follows no response of note
    fixture f(h);
    f.driver.set_read_horizon(horizon);
    return f.driver.reads_may_wait();
  };
  using kind = schedule::think_time::kind;
  EXPECT_TRUE(with_think({kind::fixed, milliseconds(1), {}}));
  EXPECT_FALSE(with_think({kind::fixed, microseconds(999), {}}));
  EXPECT_FALSE(with_think({kind::fixed, {}, {}}));
  EXPECT_TRUE(with_think({kind::uniform, milliseconds(2), milliseconds(5)}));
  EXPECT_FALSE(with_think({kind::uniform, {}, milliseconds(5)}));
  EXPECT_FALSE(with_think({kind::exponential, seconds(2), {}}));  // it can draw zero

  fixture queue(one_scenario(1), 1);
  queue.driver.set_read_horizon(horizon);
  EXPECT_TRUE(queue.driver.reads_may_wait());
  record::request_times a, b;
  queue.driver.arrive(1, start + milliseconds(1), a);
  ASSERT_EQ(queue.driver.arrive(2, start + milliseconds(2), b), session_driver::arrival_fate::wait);
  queue.driver.wait_for_slot(b);
  EXPECT_FALSE(queue.driver.reads_may_wait());  // a's last response frees b's slot
}

TEST(session_driver, steps_not_started_by_the_end_are_skipped) {
  fixture f(one_scenario());
  record::request_times first;
  f.driver.arrive(1, start + milliseconds(10), first);
  f.recorder.on_response(first, start + milliseconds(12), 200, true);
  f.driver.skip_waiting();
  EXPECT_TRUE(f.driver.idle());
  EXPECT_EQ(f.name(1).outcomes[record::index(record::outcome::skipped)], 1u);
  EXPECT_EQ(outcome_sum(f.name(2)), 1u);
}

TEST(session_driver, a_step_due_after_the_graceful_stop_never_starts) {
  fixture f(one_scenario());
  record::request_times first;
  f.driver.arrive(1, window_end - milliseconds(1), first);
  // Completes 1 s after the window, + 5 ms think: past the cutoff (window end + 1 s).
  f.recorder.on_response(first, window_end + seconds(1), 200, true);
  EXPECT_TRUE(f.driver.idle());
  EXPECT_EQ(f.name(1).outcomes[record::index(record::outcome::skipped)], 1u);
}

TEST(session_driver, the_scenario_draw_follows_the_weights) {
  run::hybrid_model h;
  h.scenarios.push_back({"a", 3, {{0, {}, nullptr, {}, false}}, 2});
  h.scenarios.push_back({"b", 1, {{1, {}, nullptr, {}, false}}, 3});
  session_driver d(h, 5, 0);
  record::recorder r(start, window_end, seconds(1), {}, 4);
  d.attach(r, window_end);
  int first_steps_of_a = 0;
  for (std::uint64_t user = 0; user < 4000; ++user) {
    record::request_times t;
    d.arrive(user, start + milliseconds(1), t);
    first_steps_of_a += t.name == 0;
  }
  EXPECT_NEAR(first_steps_of_a / 4000.0, 0.75, 0.02);
}

TEST(think_time, draws_are_keyed_and_follow_their_shape) {
  schedule::think_time u{schedule::think_time::kind::uniform, milliseconds(10), milliseconds(20)};
  schedule::think_time e{schedule::think_time::kind::exponential, milliseconds(100), {}};
  double sum = 0;
  for (std::uint64_t user = 0; user < 20000; ++user) {
    const auto a = schedule::draw_think(u, 1, user, 2);
    ASSERT_GE(a, milliseconds(10));
    ASSERT_LE(a, milliseconds(20));
    EXPECT_EQ(a, schedule::draw_think(u, 1, user, 2));
    sum += static_cast<double>(schedule::draw_think(e, 1, user, 0).count());
  }
  EXPECT_NEAR(sum / 20000 / 1e6, 100, 3);  // the mean of exp:100ms
}

// A user claimed away: its owner plans its steps and counts each claimed out; the claimer plans
// nothing, counts each claimed in, and runs the session. Each worker's planned + claimed_in -
// claimed_out then equals the outcomes it records.
TEST(session_driver, a_claimed_user_is_planned_by_its_owner_and_run_by_the_claimer) {
  fixture owner(one_scenario());
  fixture claimer(one_scenario());
  owner.driver.pass(7, start + milliseconds(10));
  EXPECT_EQ(owner.recorder.measured_counts().planned, 2u);
  EXPECT_EQ(owner.recorder.measured_counts().claimed_out, 2u);
  EXPECT_EQ(owner.name(2).planned, 1u);  // the session, once
  EXPECT_TRUE(owner.driver.idle());
  record::request_times first;
  ASSERT_EQ(claimer.driver.arrive_claimed(7, start + milliseconds(10), first),
            session_driver::arrival_fate::admit);
  EXPECT_EQ(first.index, 7u);
  EXPECT_EQ(first.step, 0);
  const record::counters& c = claimer.recorder.measured_counts();
  EXPECT_EQ(c.planned, 0u);
  EXPECT_EQ(c.claimed_in, 2u);
  EXPECT_EQ(claimer.name(0).planned, 0u);
  EXPECT_FALSE(claimer.driver.idle());
}

}  // namespace
}  // namespace punctual::engine
