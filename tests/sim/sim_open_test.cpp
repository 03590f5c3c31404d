// The open model in the simulation: constant and Poisson arrivals, stages, a trace and a mix.
#include <gtest/gtest.h>

#include "cli/command.hpp"
#include "cli_run.hpp"
#include "sim_setups.hpp"
#include "simulation.hpp"

namespace punctual::sim::open_cases {
namespace {

using std::chrono::milliseconds;

TEST(sim_open, constant_rate_every_request_ok) {
  const auto sim = run_checked(open_setup(1000, milliseconds(500)));
  const auto& c = sim->result().measured.counts;
  EXPECT_EQ(c.planned, 500u);
  EXPECT_EQ(count_of(*sim, record::outcome::ok), 500u);
}

// A 200 ms stall from 300 ms: requests due in it wait for its end, and their response times
// say so (each to the nanosecond, checks.hpp); the ones after it do not.
TEST(sim_open, a_stall_delays_every_answer_due_in_it) {
  setup s = open_setup(1000, milliseconds(1000));
  s.server.stalls = {{milliseconds(300), milliseconds(500)}};
  const auto sim = run_checked(s);
  EXPECT_EQ(count_of(*sim, record::outcome::ok), 1000u);
  const auto& rt = sim->result().measured.views[record::view::response_time];
  EXPECT_GE(rt.max(), nanoseconds(milliseconds(199)).count());
  EXPECT_LE(rt.max(), nanoseconds(milliseconds(201)).count());
  // Every request due in the stall waited for its end; the 4 connections then cleared the
  // backlog within 100 ms, and nothing after that waited.
  const nanoseconds start = sim->result().start.mono;
  for (const auto& f : sim->finals()) {
    const nanoseconds due = f.t.intended - start;
    const nanoseconds took = f.at - f.t.intended;
    if (due >= milliseconds(300) && due < milliseconds(500)) {
      EXPECT_GE(took, milliseconds(500) - due);
    }
    if (due >= milliseconds(600)) {
      EXPECT_LT(took, milliseconds(1));
    }
  }
}

// A stall across the end of a 1 s window, on 2 threads: the answers due at 0.5-1 s arrive at
// 3.3 s, so the intervals 1 and 2 record nothing and interval 3 records them. The series holds
// every interval up to the last that recorded something, the silent ones too (the silence is
// what the stall looked like), whatever the host did to the threads: with a worker held back
// 2.2 s, or the collector, the silent intervals used to be dropped (0, 3). A collector frozen
// for the rest of the run made the workers, whose spare set it held, turn without sleeping at
// every boundary: the simulation stopped them as a livelock.
TEST(sim_open, a_silence_past_the_window_stays_in_the_series_whatever_held_the_threads) {
  struct variant {
    const char* what;
    std::vector<pause> pauses;
    std::vector<collector_pause> collector_pauses;
    std::vector<std::uint64_t> completed;  // by interval index
  };
  const std::vector<variant> variants = {
      {"on time", {}, {}, {50, 0, 0, 50}},
      {"worker 1 held at 0.9 s", {{1, milliseconds(900), milliseconds(2200)}}, {}, {50, 0, 0, 50}},
      {"worker 0 held at 0.9 s", {{0, milliseconds(900), milliseconds(2200)}}, {}, {50, 0, 0, 50}},
      {"worker 1 held at 1.9 s", {{1, milliseconds(1900), milliseconds(2200)}}, {}, {50, 0, 0, 50}},
      {"collector held at 0.9 s", {}, {{milliseconds(900), milliseconds(2200)}}, {50, 0, 0, 50}},
      // From 1.5 s to the end: the set of interval 2 cannot be handed over, and holds 2 s to 3.3 s.
      {"collector frozen at 1.5 s", {}, {{milliseconds(1500), milliseconds(60'000)}}, {50, 0, 50}},
      {"collector frozen at 0.5 s", {}, {{milliseconds(500), milliseconds(60'000)}}, {50, 50}},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.what);
    setup s = open_setup(100, std::chrono::seconds(1));
    s.config.threads = 2;
    std::get<run::open_model>(s.config.model).plan.workers = 2;
    s.server.stalls = {{milliseconds(500), milliseconds(3300)}};
    s.pauses = v.pauses;
    s.collector_pauses = v.collector_pauses;
    const auto sim = run_checked(s);
    EXPECT_EQ(count_of(*sim, record::outcome::ok), 100u);
    const auto& series = sim->result().series;
    ASSERT_EQ(series.size(), v.completed.size());
    for (std::size_t i = 0; i < series.size(); ++i) {
      EXPECT_EQ(series[i].index, static_cast<std::int64_t>(i));
      EXPECT_EQ(series[i].counts.completed, v.completed[i]) << "interval " << i;
    }
  }
}

// Without -d the stages set the run's length, warm-up included, as k6's do: a ramp from 0 to
// 50/s over 1 s, then to 100/s over 1 s, with a 500 ms warm-up, measures 1.5 s, in which the
// ramps plan 18.75 + 75 requests.
TEST(sim_open, stages_without_a_duration_set_the_run_length) {
  const cli_result r =
      run_judged(command({"-t1", "-c2", "--stages", "1s:50,1s:100", "--warmup", "500ms"}));
  EXPECT_EQ(r.doc["schedule"]["duration_ns"].get<std::int64_t>(), 1'500'000'000);
  EXPECT_NEAR(r.doc["schedule"]["planned"].get<double>(), 93.75, 1.0);
  EXPECT_THROW(run_cli(command({"-t1", "-c2", "--stages", "1s:100", "--warmup", "2s"})),
               cli::usage_error);
}

// With -d too, the two must agree: a longer -d would hold the last rate, a shorter one cut the
// stages, and neither is the load the stages describe.
TEST(sim_open, stages_and_a_duration_that_disagree_are_refused) {
  EXPECT_THROW(run_cli(command({"-t1", "-c2", "--stages", "1s:50,1s:100", "-d", "3s"})),
               cli::usage_error);
  EXPECT_THROW(run_cli(command({"-t1", "-c2", "--stages", "1s:50,1s:100", "-d", "1s"})),
               cli::usage_error);
  const cli_result r = run_judged(
      command({"-t1", "-c2", "--stages", "1s:50,1s:100", "-d", "1500ms", "--warmup", "500ms"}));
  EXPECT_EQ(r.doc["schedule"]["duration_ns"].get<std::int64_t>(), 1'500'000'000);
}

}  // namespace
}  // namespace punctual::sim::open_cases
