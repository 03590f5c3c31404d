// Hybrid sessions the run stops before their next step, in the simulation: the graceful stop
// passing while a user thinks, and an interruption between two steps. Such a session never
// finished, so it is unfinished (not ok), and its session time ends at its last completion, the
// last instant anyone saw it: never at the intended time of a step that was not sent, which can
// lie past the run's end. Each session is rebuilt from its steps' final outcomes and held to the
// report exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::session_cut_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;
using record::outcome;

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

// What each session should be, rebuilt from its steps: ok when every step was ok, unfinished
// when a step was skipped with none failed (these runs fail none); its time from the arrival to
// its last step's completion.
struct session_truth {
  std::uint64_t ok = 0;
  std::uint64_t unfinished = 0;
  std::vector<std::int64_t> times;
};

session_truth sessions_of(const simulation& sim) {
  std::map<std::uint64_t, std::vector<const final_outcome*>> by_user;
  for (const auto& f : sim.finals()) by_user[f.t.index].push_back(&f);
  session_truth out;
  for (const auto& [user, steps] : by_user) {
    nanoseconds last_completion{};
    bool skipped = false;
    for (const final_outcome* f : steps) {
      EXPECT_TRUE(f->outcome == outcome::ok || f->outcome == outcome::skipped)
          << "user " << user << " step " << f->t.step;
      if (f->outcome == outcome::skipped) {
        skipped = true;
      } else {
        last_completion = std::max(last_completion, f->at);
      }
    }
    (skipped ? out.unfinished : out.ok)++;
    out.times.push_back((last_completion - steps.front()->t.arrival).count());
  }
  return out;
}

// The report's sessions of scenario `s` against the truth: outcomes, censored, planned == their
// sum, and a session-time histogram that holds exactly the true times.
void expect_sessions(const cli_result& r, const session_truth& truth) {
  const json& s = r.doc["sessions"]["s"];
  const json& o = s["outcomes"];
  std::uint64_t ended = 0;
  for (const auto& [key, n] : o.items()) ended += number(n);
  EXPECT_EQ(number(s["planned"]), ended);
  EXPECT_EQ(number(s["planned"]), truth.ok + truth.unfinished);
  EXPECT_EQ(number(o["ok"]), truth.ok);
  EXPECT_EQ(number(o["unfinished"]), truth.unfinished);
  EXPECT_EQ(number(s["session_time"]["censored"]), truth.unfinished);
  // No session failed, so none failed at a step.
  for (const auto& [step, n] : s["failed_at"].items()) EXPECT_EQ(number(n), 0u) << step;
  // The requests: planned == sum(outcomes), none unfinished (the run stopped between steps).
  const json& requests = r.doc["outcomes"];
  std::uint64_t requests_ended = 0;
  for (const auto& [key, n] : requests.items()) requests_ended += number(n);
  EXPECT_EQ(number(r.doc["schedule"]["planned"]), requests_ended);
  EXPECT_EQ(number(requests["unfinished"]), 0u);

  hdr::histogram expected(record::latency_params());
  for (const auto t : truth.times) expected.record(t);
  const auto session_name = r.sim->settings().config.hybrid()->scenarios[0].session_name;
  const hdr::histogram& got =
      r.sim->result().measured.views.named(session_name, record::named_view::response_time);
  ASSERT_EQ(got.total_count(), expected.total_count());
  EXPECT_EQ(got.max(), expected.max());
  for (std::int32_t i = 0; i < got.counts_length(); ++i) {
    EXPECT_EQ(got.count_at_index(i), expected.count_at_index(i)) << "slot " << i;
  }
}

// 20 users a second for 2 s, no graceful stop, a think of 1.5 s between the two steps: the users
// who arrive in the first half second send their second step before the phases end, the others
// are still thinking then and never send it.
const char* const thinking_scenario = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 2s, arrival_rate: 20}
graceful_stop: 0s
scenarios:
  - name: s
    steps:
      - {name: first, path: /, think: 1500ms}
      - {name: second, path: /}
)";

TEST(sim_session_cut, a_session_the_graceful_stop_cuts_is_unfinished_at_its_last_completion) {
  const scratch_dir dir("session-cut-stop");
  const cli_result r =
      run_judged({"--scenario", dir.write("s.yaml", thinking_scenario), "-c", "4"});
  const session_truth truth = sessions_of(*r.sim);
  EXPECT_EQ(truth.ok, 10u);  // arrivals at 0 to 450 ms: their second step is due before 2 s
  EXPECT_EQ(truth.unfinished, 30u);
  expect_sessions(r, truth);
  EXPECT_EQ(number(r.doc["by_name"]["s.second"]["outcomes"]["skipped"]), 30u);
}

// 20 users a second for 10 s, three steps 1 s apart, interrupted at 2.525 s: no step is in
// flight then (each is answered within a millisecond of its 50 ms grid), so the 51 users who
// arrived stop between steps, but for the 11 who arrived by 0.5 s and had finished.
const char* const three_steps = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 10s, arrival_rate: 20}
scenarios:
  - name: s
    steps:
      - {name: a, path: /, think: 1s}
      - {name: b, path: /, think: 1s}
      - {name: c, path: /}
)";

TEST(sim_session_cut, a_session_an_interruption_cuts_is_unfinished_at_its_last_completion) {
  const scratch_dir dir("session-cut-interrupt");
  surroundings around;
  around.interrupt_at = milliseconds(2525);
  const cli_result r =
      run_judged({"--scenario", dir.write("s.yaml", three_steps), "-c", "4"}, around);
  EXPECT_EQ(r.exit_code, 130);
  const session_truth truth = sessions_of(*r.sim);
  EXPECT_EQ(truth.ok, 11u);
  EXPECT_EQ(truth.unfinished, 40u);
  expect_sessions(r, truth);
}

}  // namespace
}  // namespace punctual::sim::session_cut_cases
