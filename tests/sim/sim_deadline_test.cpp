// The deadline rule from the command line: requests a server stall holds past their deadline time
// out at exactly --timeout (whatever its value) and the report says so (censored, the maximum and
// every lower-bound percentile at the timeout); the drain ends at the last deadline; a service
// time against the timeout in each precision mode; and a refused target. Each outcome is held to
// what the server's log and the network's byte logs say happened, with no tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"

namespace punctual::sim::deadline_cases {
namespace {

using record::outcome;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string target = "http://127.0.0.1:8080/";

// The value the report shows for a sample of `v` (the top of its histogram bucket).
std::int64_t reported(nanoseconds v) {
  static const hdr::histogram h(record::latency_params());
  return h.highest_equivalent_value(v.count());
}

// A command line (the target added), held to every rule.
cli_result run_at_target(std::vector<std::string> args, const surroundings& around) {
  args.push_back(target);
  return run_judged(args, around);
}

// A stall, and the worker frozen for 7 ms inside it (a host descheduling its vCPU): the deadlines
// that fall in the freeze are checked late, and must still be recorded at exactly the timeout.
surroundings stalled(stall s) {
  surroundings a;
  a.server.stalls = {s};
  a.pauses = {{0, s.from + milliseconds(600), milliseconds(7)}};
  return a;
}

// When the last byte of the answer to `f`'s last attempt reached the client (zero: none did).
nanoseconds answer_arrival(const simulation& sim, const final_outcome& f) {
  const served_request* s = f.sim_id ? sim.server().find(f.sim_id) : nullptr;
  if (!s || !s->answered) return nanoseconds{0};
  return sim.net().connections()[s->connection - 1]->arrival_of(s->end_offset - 1);
}

// The rank of percentile `p` among `n` samples, as the histogram takes it (value_at_percentile).
std::int64_t rank_of(double p, std::int64_t n) {
  const double q = std::nextafter(p, -std::numeric_limits<double>::infinity());
  return std::max<std::int64_t>(
      static_cast<std::int64_t>(std::ceil(q * static_cast<double>(n) / 100.0)), 1);
}

// What the report says of a run with timeouts: each recorded at exactly the timeout, all of them
// censored, nothing above the timeout, and every percentile whose rank falls among the censored
// samples is the timeout (and marked a lower bound).
void expect_reported_at_the_timeout(const cli_result& r, nanoseconds timeout) {
  const auto& o = r.doc["outcomes"];
  const auto& rt = r.doc["latency"]["response_time"];
  const auto censored = o["timeout"].get<std::int64_t>();
  const auto count = rt["count"].get<std::int64_t>();
  ASSERT_GT(censored, 0);
  EXPECT_EQ(rt["censored"], censored);
  EXPECT_EQ(o["unfinished"], 0);
  EXPECT_EQ(o["dropped"], 0);
  EXPECT_EQ(rt["max_ns"].get<std::int64_t>(), reported(timeout));
  const auto& bounds = rt["lower_bound_percentiles"];
  int covered = 0;
  for (const auto& [key, value] : rt["percentiles_ns"].items()) {
    if (rank_of(std::stod(key), count) <= count - censored) continue;
    ++covered;
    EXPECT_EQ(value.get<std::int64_t>(), reported(timeout)) << "p" << key;
    EXPECT_NE(std::find(bounds.begin(), bounds.end(), key), bounds.end()) << "p" << key;
  }
  EXPECT_GT(covered, 0);
  for (const auto& f : r.sim->finals()) {
    if (f.outcome == outcome::timeout) {
      EXPECT_EQ(f.at - f.t.intended, timeout) << "request " << f.t.index;
    }
  }
}

// Who a stall times out: every request whose deadline falls inside it; and only requests the
// stall held: read by the server with their answers falling due in it and given at its very end
// (or not before the run ended), or never sent (their connections all held by it).
void expect_the_stall_timed_them_out(const simulation& sim, stall st, nanoseconds timeout) {
  const nanoseconds service = sim.settings().server.service.a;
  const nanoseconds start = sim.result().start.mono;
  std::uint64_t timeouts = 0;
  for (const auto& f : sim.finals()) {
    const nanoseconds due = f.t.intended - start;
    const served_request* s = f.sim_id ? sim.server().find(f.sim_id) : nullptr;
    if (due >= st.from && due + timeout < st.until) {
      EXPECT_EQ(f.outcome, outcome::timeout)
          << "request " << f.t.index << " due " << due.count() << " ns";
    }
    if (f.outcome == outcome::timeout) {
      ++timeouts;
      if (s) {
        EXPECT_GE(s->read_at + service, start + st.from)
            << "request " << f.t.index << ": answer due before the stall";
        EXPECT_TRUE(s->answer_at == start + st.until || (s->answer_at.count() == 0 && !s->answered))
            << "request " << f.t.index << ": a timeout the stall did not hold";
      } else {
        EXPECT_GE(due + timeout, st.from)
            << "request " << f.t.index << ": never sent, its deadline before the stall";
      }
    } else {
      EXPECT_EQ(f.outcome, outcome::ok) << "request " << f.t.index;
    }
  }
  EXPECT_GT(timeouts, 0u);
}

// The latest instant a request ended at, and the latest it was due, from the schedule's start.
nanoseconds last_end(const simulation& sim) {
  nanoseconds last{};
  for (const auto& f : sim.finals()) last = std::max(last, f.at - sim.result().start.mono);
  return last;
}

nanoseconds last_due(const simulation& sim) {
  nanoseconds last{};
  for (const auto& f : sim.finals()) last = std::max(last, f.t.intended - sim.result().start.mono);
  return last;
}

TEST(sim_deadline, a_stall_in_the_middle_times_out_at_exactly_the_timeout) {
  const stall st{seconds(1), seconds(2)};
  const cli_result r =
      run_at_target({"-t1", "-c4", "-d3s", "-R200", "--timeout", "500ms"}, stalled(st));
  expect_reported_at_the_timeout(r, milliseconds(500));
  expect_the_stall_timed_them_out(*r.sim, st, milliseconds(500));
  EXPECT_GT(r.doc["outcomes"]["ok"].get<std::uint64_t>(), 0u);
  // The last request was answered at once, and the run ended with it.
  EXPECT_EQ(r.sim->result().elapsed, last_end(*r.sim));
  EXPECT_LT(last_end(*r.sim), seconds(3));
}

// A worker held 300 ms by its host: the requests whose deadlines passed meanwhile time out
// without ever going out. Each planned request is either a first attempt the wire saw or
// never sent (attempts.never_sent), never both and never neither.
TEST(sim_deadline, requests_past_their_deadline_before_a_send_are_never_sent) {
  surroundings around;
  around.pauses = {{0, milliseconds(300), milliseconds(300)}};
  const cli_result r = run_at_target({"-t1", "-c4", "-d1s", "-R200", "--timeout", "100ms"}, around);
  std::set<std::pair<std::uint32_t, std::uint64_t>> went;
  for (const auto& a : r.sim->sent()) went.insert({a.worker, a.t.index});
  const auto& attempts = r.doc["attempts"];
  const auto planned = r.doc["schedule"]["planned"].get<std::uint64_t>();
  const auto first = attempts["first"].get<std::uint64_t>();
  const auto never_sent = attempts["never_sent"].get<std::uint64_t>();
  EXPECT_EQ(first, went.size());
  EXPECT_GT(never_sent, 0u);
  EXPECT_EQ(first + never_sent, planned);
  EXPECT_EQ(r.doc["outcomes"]["timeout"].get<std::uint64_t>(), never_sent);
}

// The stall outlasts the window: the drain ends at the last deadline, not at the stall's end.
TEST(sim_deadline, a_stall_past_the_end_ends_the_drain_at_the_last_deadline) {
  const stall st{seconds(1), seconds(6)};
  const cli_result r =
      run_at_target({"-t2", "-c4", "-d2s", "-R200", "--timeout", "500ms"}, stalled(st));
  expect_reported_at_the_timeout(r, milliseconds(500));
  expect_the_stall_timed_them_out(*r.sim, st, milliseconds(500));
  EXPECT_EQ(last_end(*r.sim), last_due(*r.sim) + milliseconds(500));
  EXPECT_EQ(r.sim->result().elapsed, last_due(*r.sim) + milliseconds(500));
}

// The recorded value follows --timeout, not a built-in constant; so does the drain.
TEST(sim_deadline, another_timeout_is_recorded_at_its_own_value) {
  const stall st{milliseconds(500), milliseconds(5500)};
  const cli_result r =
      run_at_target({"-t1", "-c2", "-d1500ms", "-R100", "--timeout", "300ms"}, stalled(st));
  expect_reported_at_the_timeout(r, milliseconds(300));
  expect_the_stall_timed_them_out(*r.sim, st, milliseconds(300));
  EXPECT_EQ(r.sim->result().elapsed, last_due(*r.sim) + milliseconds(300));
}

surroundings serving_in(nanoseconds service) {
  surroundings a;
  a.server.service.a = service;
  return a;
}

std::vector<std::string> service_args(const std::string& precision) {
  // Poisson arrivals put the deadlines between coarse mode's ticks, where its checks run late.
  return {"-t1",     "-c16",      "-d1s", "-R200",       "--arrival",
          "poisson", "--timeout", "20ms", "--precision", precision};
}

// Every answer takes 25 ms against a 20 ms timeout: all time out, however the worker waits.
TEST(sim_deadline, answers_slower_than_the_timeout_all_time_out_in_each_mode) {
  for (const std::string mode : {"fine", "coarse"}) {
    SCOPED_TRACE(mode);
    const cli_result r = run_at_target(service_args(mode), serving_in(milliseconds(25)));
    EXPECT_EQ(r.doc["outcomes"]["timeout"], r.doc["schedule"]["planned"]);
    EXPECT_EQ(r.doc["latency"]["response_time_ok"]["count"], 0);
    expect_reported_at_the_timeout(r, milliseconds(20));
    // The server read each and was to answer it 25 ms later, past its deadline: by then the
    // client had closed the connection (the answer was never written), or the run had ended.
    for (const auto& f : r.sim->finals()) {
      const served_request* s = r.sim->server().find(f.sim_id);
      ASSERT_NE(s, nullptr) << "request " << f.t.index;
      EXPECT_FALSE(s->answered) << "request " << f.t.index;
      if (s->answer_at.count() == 0) {
        EXPECT_LT(r.sim->sim().now(), s->read_at + milliseconds(25)) << "request " << f.t.index;
        continue;
      }
      EXPECT_EQ(s->answer_at - s->read_at, milliseconds(25)) << "request " << f.t.index;
      EXPECT_GT(s->answer_at, f.t.intended + milliseconds(20)) << "request " << f.t.index;
    }
  }
}

// Every answer takes 15 ms against a 20 ms timeout: none times out, and each is dated by its
// arrival: answered 15 ms after the server read it, completed when it arrived.
TEST(sim_deadline, answers_faster_than_the_timeout_are_all_ok_in_each_mode) {
  for (const std::string mode : {"fine", "coarse"}) {
    SCOPED_TRACE(mode);
    const cli_result r = run_at_target(service_args(mode), serving_in(milliseconds(15)));
    EXPECT_EQ(r.doc["outcomes"]["ok"], r.doc["schedule"]["planned"]);
    nanoseconds slowest{};
    for (const auto& f : r.sim->finals()) {
      const served_request* s = r.sim->server().find(f.sim_id);
      ASSERT_NE(s, nullptr) << "request " << f.t.index;
      // Fine mode sends on time; coarse mode at the next 1 ms tick.
      EXPECT_LT(f.t.sent - f.t.intended, mode == "fine" ? nanoseconds(1) : milliseconds(1))
          << "request " << f.t.index;
      EXPECT_EQ(s->answer_at - s->read_at, milliseconds(15)) << "request " << f.t.index;
      EXPECT_EQ(f.at, answer_arrival(*r.sim, f)) << "request " << f.t.index;
      slowest = std::max(slowest, f.at - f.t.intended);
    }
    EXPECT_LT(slowest, milliseconds(17));
    EXPECT_EQ(r.doc["latency"]["response_time_ok"]["max_ns"].get<std::int64_t>(),
              reported(slowest));
  }
}

// A target that refuses every connection: the run fails at once (exit 1), saying which target,
// after the refusals' round trip rather than the connect timeout.
TEST(sim_deadline, a_refused_target_fails_the_run_at_once) {
  surroundings a;
  a.server.refuse_share = 1;
  const nanoseconds began = seconds(1000);  // the world's origin (world.hpp)
  const cli_result r = run_cli({"-t1", "-c2", "-d1s", "-R100", target}, a);
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_TRUE(r.sim->failure().has_value());
  EXPECT_NE(r.sim->failure()->find("127.0.0.1:8080"), std::string::npos) << *r.sim->failure();
  EXPECT_NE(r.sim->failure()->find("refused"), std::string::npos) << *r.sim->failure();
  EXPECT_EQ(r.sim->sim().now() - began, a.up.delay + a.down.delay);
  EXPECT_TRUE(r.sim->sent().empty());
}

}  // namespace
}  // namespace punctual::sim::deadline_cases
