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
