// Responses read late are dated by their receive stamps, and the deadline rule follows the stamp,
// not the read: a worker frozen (a paused vCPU) while its answer arrives reads it only after the
// deadline, and it is ok if it arrived before, a timeout at exactly the deadline if after, in
// each precision mode, whether the freeze caught the worker in a socket wait (one request) or a
// timer sleep (2000 req/s); answers beyond one wait's events are read by the deadline check
// before it times anything out; a close-delimited answer follows the stamp of its body, or of its
// FIN when that came later but before the read (a timeout when the FIN missed the deadline); an
// answer past --attempt-timeout retries the attempt; responses a worker leaves for its next send
// (coarse ticks, fine mode's timer sleeps) keep their arrival; answers a few microseconds either
// side of a deadline between two coarse ticks. Probes at chosen virtual instants show when the tap
// had recorded each outcome, so "read after its deadline" is seen, not assumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim_setups.hpp"

namespace punctual::sim::late_read_cases {
namespace {

using record::outcome;
using run::precision_mode;
using std::chrono::microseconds;
using std::chrono::milliseconds;

const char* name_of(precision_mode m) {
  return m == precision_mode::fine ? "fine" : "coarse";
}

// How many outcomes the tap had recorded by each of `offsets`: finals() keeps the order they were
// recorded in, so finals()[i] came after offsets[k] exactly when i >= (*counts)[k].
std::shared_ptr<std::vector<std::size_t>> count_outcomes_at(
    simulation& sim, const std::vector<nanoseconds>& offsets) {
  auto counts = std::make_shared<std::vector<std::size_t>>(offsets.size(), ~std::size_t{0});
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    sim.at_offset(offsets[k], [&sim, counts, k] { (*counts)[k] = sim.finals().size(); });
  }
  return counts;
}

// When the last byte of the answer to attempt `sim_id` reached the client (zero: none did).
nanoseconds arrival_of_answer(const simulation& sim, std::uint64_t sim_id) {
  const served_request* s = sim.server().find(sim_id);
  if (!s || !s->answered) return nanoseconds{0};
  return sim.net().connections()[s->connection - 1]->arrival_of(s->end_offset - 1);
}

// `requests` due in the first 100 ms on one thread; the server answers each `answer_after` it
// read it. The worker is frozen from just after its first send until `thaw`.
setup frozen(int requests, nanoseconds answer_after, nanoseconds thaw, precision_mode mode) {
  setup s = open_setup(requests * 10.0, milliseconds(100));
  s.config.timeout = milliseconds(200);
  s.config.precision = mode;
  s.server.service.a = answer_after;
  const nanoseconds from = microseconds(60);  // the first request is on the link by then
  s.pauses = {{0, from, thaw - from}};
  return s;
}

const nanoseconds thaw = milliseconds(350);

// The first request: sent at the start, answered and arrived while the worker was frozen, and
// recorded only after the thaw. Every other request fell due in the freeze and, got to after its
// deadline, timed out unsent.
const final_outcome* first_request(const simulation& sim, const std::vector<std::size_t>& counts) {
  EXPECT_EQ(counts[0], 0u) << "an outcome recorded while the worker was frozen";
  EXPECT_EQ(sim.sent().size(), 1u);
  const final_outcome* first = nullptr;
  for (const auto& f : sim.finals()) {
    if (f.sim_id == 0) {
      EXPECT_EQ(f.outcome, outcome::timeout) << "request " << f.t.index;
    } else {
      first = &f;
    }
  }
  if (!first) {
    ADD_FAILURE() << "the first request was never sent";
    return nullptr;
  }
  const nanoseconds arrived = arrival_of_answer(sim, first->sim_id);
  EXPECT_GT(arrived.count(), 0);
  EXPECT_LT(arrived, sim.result().start.mono + thaw);
  return first;
}

// Answered 300 ms after it was read, against a 200 ms timeout, and read only at the thaw: a
// timeout recorded at exactly 200 ms, not an ok of 300 ms.
TEST(sim_late_read, an_answer_stamped_after_its_deadline_is_a_timeout) {
  for (const precision_mode mode : {precision_mode::fine, precision_mode::coarse}) {
    for (const int requests : {1, 200}) {
      SCOPED_TRACE(std::string(name_of(mode)) + ", " + std::to_string(requests) + " requests");
      simulation sim(frozen(requests, milliseconds(300), thaw, mode));
      const auto counts = count_outcomes_at(sim, {thaw - nanoseconds(1)});
      if (!ran_judged(sim)) continue;
      EXPECT_EQ(sim.result().measured.counts.planned, static_cast<std::uint64_t>(requests));
      EXPECT_EQ(count_of(sim, outcome::timeout), static_cast<std::uint64_t>(requests));
      EXPECT_EQ(sim.result().measured.counts.censored, static_cast<std::uint64_t>(requests));
      EXPECT_EQ(sim.result().measured.views[record::view::response_time_ok].total_count(), 0);
      const final_outcome* first = first_request(sim, *counts);
      if (!first) continue;
      EXPECT_GT(arrival_of_answer(sim, first->sim_id), first->t.intended + milliseconds(200));
      EXPECT_EQ(first->at, first->t.intended + milliseconds(200));
    }
  }
}

// Answered 50 ms after it was read, read only at the thaw, 150 ms after its deadline: ok, dated
// when it arrived.
TEST(sim_late_read, an_answer_stamped_before_its_deadline_but_read_after_it_is_ok) {
  for (const precision_mode mode : {precision_mode::fine, precision_mode::coarse}) {
    for (const int requests : {1, 200}) {
      SCOPED_TRACE(std::string(name_of(mode)) + ", " + std::to_string(requests) + " requests");
      simulation sim(frozen(requests, milliseconds(50), thaw, mode));
      const auto counts = count_outcomes_at(sim, {thaw - nanoseconds(1)});
      if (!ran_judged(sim)) continue;
      EXPECT_EQ(count_of(sim, outcome::ok), 1u);
      EXPECT_EQ(count_of(sim, outcome::timeout), static_cast<std::uint64_t>(requests - 1));
      const final_outcome* first = first_request(sim, *counts);
      if (!first) continue;
      EXPECT_EQ(first->outcome, outcome::ok);
      EXPECT_EQ(first->at, arrival_of_answer(sim, first->sim_id));
      EXPECT_LT(first->at, first->t.intended + milliseconds(50) + microseconds(200));
    }
  }
}

// 300 answers, all arrived 150 ms in, read only at the thaw (800 ms), after their deadlines: one
// wait returns 256 events, so the deadline check finds 44 still unread and must read them first.
// All ok, each dated when it arrived.
TEST(sim_late_read, answers_beyond_one_waits_events_are_read_before_the_deadline_check) {
  for (const precision_mode mode : {precision_mode::fine, precision_mode::coarse}) {
    SCOPED_TRACE(name_of(mode));
    setup s = open_setup(3000, milliseconds(100));
    s.config.connections = 300;
    s.config.timeout = milliseconds(500);
    s.config.precision = mode;
    s.server.stalls = {{nanoseconds{0}, milliseconds(150)}};
    s.max_events = 256;  // what one epoll_wait returns in the engine (net/event_loop.cpp)
    // From after the last send (coarse mode sends the last two at the 100 ms tick).
    s.pauses = {{0, microseconds(100'500), microseconds(699'500)}};
    simulation sim(s);
    const auto counts = count_outcomes_at(sim, {milliseconds(800) - nanoseconds(1)});
    if (!ran_judged(sim)) continue;
    EXPECT_EQ((*counts)[0], 0u);
    EXPECT_EQ(sim.result().measured.counts.planned, 300u);
    EXPECT_EQ(count_of(sim, outcome::ok), 300u);
    for (const auto& f : sim.finals()) {
      EXPECT_EQ(f.at, arrival_of_answer(sim, f.sim_id)) << "request " << f.t.index;
      EXPECT_LT(f.t.intended + s.config.timeout, sim.result().start.mono + milliseconds(800));
    }
  }
}

// One close-delimited answer, `answer_after` after the server read its request, with its FIN
// `fin_after` after the body, over links that carry bytes in no time; the worker frozen until
// the thaw. `first` is the request's final outcome (null when the run broke a rule).
struct close_delimited_run {
  std::unique_ptr<simulation> sim;
  const final_outcome* first = nullptr;
  nanoseconds deadline{};
};

close_delimited_run run_close_delimited(nanoseconds answer_after, nanoseconds fin_after) {
  setup s = frozen(1, answer_after, thaw, precision_mode::fine);
  s.server.shares[static_cast<std::size_t>(fate::close_delimited)] = 1;
  s.server.close_delimited_fin_after = fin_after;
  s.up.bytes_per_ns = s.down.bytes_per_ns = 1e9;
  close_delimited_run r{std::make_unique<simulation>(s)};
  const auto counts = count_outcomes_at(*r.sim, {thaw - nanoseconds(1)});
  if (!ran_judged(*r.sim)) return r;
  r.first = first_request(*r.sim, *counts);
  if (r.first) r.deadline = r.first->t.intended + milliseconds(200);
  return r;
}

// A close-delimited answer is dated by the stamp of the read that met the close: its body's, the
// FIN having come with it.
TEST(sim_late_read, a_close_delimited_answer_follows_the_stamp_of_its_body) {
  for (const nanoseconds answer_after : {milliseconds(300), milliseconds(50)}) {
    SCOPED_TRACE(std::to_string(answer_after.count()) + " ns");
    const close_delimited_run r = run_close_delimited(answer_after, nanoseconds{0});
    if (!r.first) continue;
    if (answer_after > milliseconds(200)) {
      EXPECT_EQ(r.first->outcome, outcome::timeout);
      EXPECT_EQ(r.first->at, r.deadline);
    } else {
      EXPECT_EQ(r.first->outcome, outcome::ok);
      EXPECT_EQ(r.first->at, arrival_of_answer(*r.sim, r.first->sim_id));
    }
  }
}

// A close-delimited body that arrived 20 ms before the deadline, its FIN 50 ms after it, both
// read at the thaw in one call: the answer ended with the FIN, after the deadline, and is a
// timeout. The kernel merges the FIN into the unread body and stamps the read with the FIN's
// arrival (network.hpp); the engine dates the answer by that stamp, as it would on Linux. With
// the FIN 10 ms after the body, before the deadline, it is ok at the FIN.
TEST(sim_late_read, a_close_delimited_answer_whose_fin_came_after_the_deadline_times_out) {
  for (const nanoseconds fin_after : {milliseconds(70), milliseconds(10)}) {
    SCOPED_TRACE("FIN " + std::to_string(fin_after.count()) + " ns after the body");
    // 180 ms less the two link delays: the body reaches the client 20 ms before the deadline.
    const close_delimited_run r =
        run_close_delimited(milliseconds(180) - microseconds(100), fin_after);
    if (!r.first) continue;
    const nanoseconds body = arrival_of_answer(*r.sim, r.first->sim_id);
    EXPECT_EQ(body, r.deadline - milliseconds(20));
    const served_request* served = r.sim->server().find(r.first->sim_id);
    const nanoseconds fin = body + fin_after;
    // Read once, after both came: the read that took the body is the FIN's.
    EXPECT_EQ(
        r.sim->net().connections()[served->connection - 1]->read_stamp_of(served->end_offset - 1),
        fin);
    if (fin >= r.deadline) {
      EXPECT_EQ(r.first->outcome, outcome::timeout);
      EXPECT_EQ(r.first->at, r.deadline);
    } else {
      EXPECT_EQ(r.first->outcome, outcome::ok);
      EXPECT_EQ(r.first->at, fin);
    }
  }
}

// --attempt-timeout 300ms: the answer, stamped 400 ms in and read at the thaw (450 ms), is that
// attempt timing out, so it is retried; the retry, answered at once, is ok.
TEST(sim_late_read, an_answer_after_the_attempt_deadline_retries_the_attempt) {
  const nanoseconds late_thaw = milliseconds(450);
  setup s = frozen(1, microseconds(100), late_thaw, precision_mode::fine);
  s.config.timeout = std::chrono::seconds(2);
  s.server.stalls = {{nanoseconds{0}, milliseconds(400)}};
  run::retry_policy& retry = std::get<run::open_model>(s.config.model).retry;
  retry.retries = 1;
  retry.on = 1U << record::index(record::retry_cause::timeout);
  retry.backoff_base = retry.backoff_cap = milliseconds(1);
  retry.attempt_timeout = milliseconds(300);
  simulation sim(s);
  std::size_t retried_before_thaw = ~std::size_t{0};
  sim.at_offset(late_thaw - nanoseconds(1), [&] { retried_before_thaw = sim.retried().size(); });
  if (!ran_judged(sim)) return;
  EXPECT_EQ(retried_before_thaw, 0u);
  const auto& c = sim.result().measured.counts;
  EXPECT_EQ(c.planned, 1u);
  EXPECT_EQ(count_of(sim, outcome::ok), 1u);
  EXPECT_EQ(c.attempts.retries, 1u);
  EXPECT_EQ(c.attempts.by_cause[record::index(record::retry_cause::timeout)], 1u);
  ASSERT_EQ(sim.sent().size(), 2u);
  ASSERT_EQ(sim.retried().size(), 1u);
  EXPECT_EQ(sim.retried()[0].why, record::retry_cause::timeout);
  const nanoseconds first_answer = arrival_of_answer(sim, sim.sent()[0].sim_id);
  const nanoseconds start = sim.result().start.mono;
  EXPECT_GT(first_answer, sim.sent()[0].t.intended + retry.attempt_timeout);
  EXPECT_LT(first_answer, start + late_thaw);
  ASSERT_EQ(sim.finals().size(), 1u);
  const final_outcome& f = sim.finals()[0];
  EXPECT_EQ(f.t.attempt, 1u);
  EXPECT_EQ(f.at, arrival_of_answer(sim, sim.sent()[1].sim_id));
}

// One connection at a send a millisecond (coarse) or every 0.8 ms (fine): a response arrives
// ~0.2 ms after its request and waits unread for the worker's next wake-up, the next send. Each
// is read then, just after the next request fell due, and still dated when it arrived; the worker
// wakes once per send, not once more per response.
TEST(sim_late_read, responses_read_at_the_next_send_are_dated_on_arrival) {
  for (const auto& [mode, rate] :
       {std::pair{precision_mode::coarse, 1000.0}, std::pair{precision_mode::fine, 1250.0}}) {
    SCOPED_TRACE(name_of(mode));
    setup s = open_setup(rate, milliseconds(1500));
    s.config.connections = 1;
    s.config.precision = mode;
    const nanoseconds gap{static_cast<std::int64_t>(1e9 / rate)};
    const std::size_t n = static_cast<std::size_t>(rate * 1.5);
    std::vector<nanoseconds> just_before_each_send;
    for (std::size_t k = 1; k < n; ++k) just_before_each_send.push_back(gap * k - nanoseconds(1));
    simulation sim(s);
    const auto counts = count_outcomes_at(sim, just_before_each_send);
    if (!ran_judged(sim)) continue;
    ASSERT_EQ(sim.finals().size(), n);
    EXPECT_EQ(count_of(sim, outcome::ok), n);
    const nanoseconds start = sim.result().start.mono;
    for (std::size_t k = 0; k + 1 < n; ++k) {
      const final_outcome& f = sim.finals()[k];
      ASSERT_EQ(f.t.intended, start + gap * k);
      // Request k arrived before request k + 1 fell due, and was not recorded by then.
      EXPECT_LT(f.at, start + just_before_each_send[k]) << "request " << k;
      EXPECT_EQ((*counts)[k], k) << "request " << k << " was read before the next send";
      EXPECT_EQ(f.at, arrival_of_answer(sim, f.sim_id)) << "request " << k;
      EXPECT_LT(f.at - f.t.sent, microseconds(400)) << "request " << k;
    }
    const auto wakeups = sim.result().workers.at(0).wakeups;
    // One per send and two more (n + 2): a wake-up per response too would double it.
    EXPECT_LE(wakeups, n + 2);
  }
}

// Where a request's outcome sits in the order the tap recorded them.
std::vector<std::size_t> places_of(const simulation& sim) {
  std::vector<std::size_t> place(sim.finals().size());
  for (std::size_t i = 0; i < sim.finals().size(); ++i) place.at(sim.finals()[i].t.index) = i;
  return place;
}

// Answers a few hundred microseconds either side of a 20.5 ms deadline, in coarse mode: the worker
// checks deadlines at its 1 ms ticks and, with a tick due within a millisecond, leaves responses
// unread until it. An answer that arrived before its deadline is read after it, and is ok (dated
// by its stamp); one that arrived after its deadline but before the check (the check closes the
// connection, so later ones never arrive) is read with it, and is a timeout at exactly the
// deadline, never an ok. At 200 and 2000 req/s.
TEST(sim_late_read, answers_either_side_of_a_deadline_between_ticks_follow_their_arrival) {
  for (const double rate : {200.0, 2000.0}) {
    SCOPED_TRACE(std::to_string(rate) + " req/s");
    setup s = open_setup(rate, milliseconds(500));
    s.config.connections = 64;
    s.config.timeout = microseconds(20'500);
    s.config.precision = precision_mode::coarse;
    s.server.service = {service_time::kind::uniform, microseconds(19'900), microseconds(20'800)};
    const nanoseconds gap{static_cast<std::int64_t>(1e9 / rate)};
    const std::size_t n = static_cast<std::size_t>(rate / 2);
    std::vector<nanoseconds> deadlines;
    for (std::size_t k = 0; k < n; ++k) deadlines.push_back(gap * k + s.config.timeout);
    simulation sim(s);
    const auto by_deadline = count_outcomes_at(sim, deadlines);
    if (!ran_judged(sim)) continue;
    ASSERT_EQ(sim.finals().size(), n);
    const auto place = places_of(sim);
    std::size_t ok = 0, read_late_ok = 0, arrived_late = 0;
    for (const auto& f : sim.finals()) {
      const std::size_t k = f.t.index;
      const nanoseconds deadline = f.t.intended + s.config.timeout;
      ASSERT_EQ(f.t.intended, sim.result().start.mono + gap * k);
      const nanoseconds arrived = arrival_of_answer(sim, f.sim_id);  // zero: never came
      const bool in_time = arrived.count() != 0 && arrived < deadline;
      EXPECT_EQ(f.outcome, in_time ? outcome::ok : outcome::timeout) << "request " << k;
      EXPECT_EQ(f.at, in_time ? arrived : deadline) << "request " << k;
      ok += in_time;
      read_late_ok += in_time && place[k] >= (*by_deadline)[k];
      arrived_late += arrived.count() != 0 && !in_time;
    }
    EXPECT_GT(ok, 0u);
    EXPECT_LT(ok, n);
    EXPECT_GT(read_late_ok, 0u) << "no answer in time was read after its deadline";
    EXPECT_GT(arrived_late, 0u) << "no answer arrived between a deadline and its check";
  }
}
}  // namespace
}  // namespace punctual::sim::late_read_cases
