// The worst second by intended time (docs/design.md, "Reports people look at") and the cause it
// names: a server stall (the server), too few connections (queueing), a generator that could not
// run (the generator, with the warning worst_second_send_lag). The truth is rebuilt from the
// run's own requests: grouped by the second they were intended in, each second ranked by its
// response-time p99, then its max, then the earlier second.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::worst_second_cases {
namespace {

using json = nlohmann::ordered_json;
using record::outcome;
using std::chrono::milliseconds;
using std::chrono::seconds;

cli_result run_ranked(std::initializer_list<std::string> args, const surroundings& around) {
  std::vector<std::string> line(args);
  line.emplace_back("http://127.0.0.1:8080/");
  cli_result r = run_cli(line, around);
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  EXPECT_FALSE(r.doc.is_null()) << "no report";
  return r;
}

// What the requests intended in one second became.
struct second_truth {
  hdr::histogram response{record::latency_params()};
  hdr::histogram send_lag{record::latency_params()};
  hdr::histogram queue_wait{record::latency_params()};
  hdr::histogram connect_time{record::latency_params()};
  hdr::histogram service_time{record::latency_params()};
  std::uint64_t planned = 0;
  std::tuple<std::int64_t, std::int64_t> rank() const {
    return {response.value_at_percentile(99), response.max()};
  }
};

// Each whole second of the window, from the requests' final attempts.
std::vector<second_truth> seconds_of(const simulation& sim) {
  const nanoseconds from = sim.result().measure_start;
  std::vector<second_truth> out(static_cast<std::size_t>(sim.result().window / seconds(1)));
  const auto span = [](nanoseconds a, nanoseconds b) {
    return std::max<std::int64_t>(0, (b - a).count());
  };
  for (const auto& f : sim.finals()) {
    const auto& t = f.t;
    if (t.intended < from) continue;
    const auto s = static_cast<std::size_t>((t.intended - from) / seconds(1));
    if (s >= out.size()) continue;
    second_truth& st = out[s];
    ++st.planned;
    if (f.outcome == outcome::dropped || f.outcome == outcome::skipped) continue;
    st.response.record(span(t.intended, f.at));
    if (t.dispatched.count()) st.send_lag.record(span(t.due_time(), t.dispatched));
    if (t.assigned.count()) st.queue_wait.record(span(t.dispatched, t.assigned));
    if (t.had_to_connect && t.sent.count()) st.connect_time.record(span(t.assigned, t.sent));
    if (f.outcome == outcome::ok || f.outcome == outcome::http_error)
      st.service_time.record(span(t.sent, f.at));
  }
  return out;
}

// The worst second: the highest p99, then the highest max, then the earlier one.
std::size_t worst_of(const std::vector<second_truth>& all) {
  std::size_t worst = 0;
  for (std::size_t s = 1; s < all.size(); ++s) {
    if (all[s].rank() > all[worst].rank()) worst = s;
  }
  return worst;
}

// The worst second the report names is the truth's, with its range, its planned requests and
// the p99 of its response time and of each part of it.
void expect_worst_second(const cli_result& r, std::size_t expected) {
  const simulation& sim = *r.sim;
  const auto all = seconds_of(sim);
  ASSERT_EQ(worst_of(all), expected);
  const json& w = r.doc["worst_interval"];
  ASSERT_TRUE(w.is_object());
  EXPECT_EQ(w["second"], expected);
  const nanoseconds begins = sim.result().measure_start + seconds(expected);
  EXPECT_EQ(w["intended_start_mono_ns"], begins.count());
  EXPECT_EQ(w["intended_end_mono_ns"], (begins + seconds(1)).count());
  EXPECT_EQ(w["intended_start_unix_ns"].get<std::int64_t>() -
                w["intended_start_mono_ns"].get<std::int64_t>(),
            (sim.result().start.unix - sim.result().start.mono).count());
  const second_truth& t = all[expected];
  EXPECT_EQ(w["planned"], t.planned);
  EXPECT_EQ(w["response_time"]["p99_ns"], t.response.value_at_percentile(99));
  EXPECT_EQ(w["response_time"]["max_ns"], t.response.max());
  const json& parts = w["components_p99_ns"];
  EXPECT_EQ(parts["send_lag"], t.send_lag.value_at_percentile(99));
  EXPECT_EQ(parts["queue_wait"], t.queue_wait.value_at_percentile(99));
  EXPECT_EQ(parts["connect_time"], t.connect_time.value_at_percentile(99));
  EXPECT_EQ(parts["service_time"], t.service_time.value_at_percentile(99));
}

// The timeline's rows add up to the run's totals, and each row's planned requests are those
// intended in its second.
void expect_series_adds_up(const cli_result& r) {
  const json& rows = r.doc["series"]["per_second"];
  const auto all = seconds_of(*r.sim);
  ASSERT_GE(rows.size(), all.size());
  std::uint64_t planned = 0, ok = 0, timeouts = 0, samples = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["second"], i);
    if (i < all.size()) {
      EXPECT_EQ(rows[i]["planned"], all[i].planned) << "second " << i;
    }
    planned += rows[i]["planned"].get<std::uint64_t>();
    ok += rows[i]["ok"].get<std::uint64_t>();
    timeouts += rows[i]["timeouts"].get<std::uint64_t>();
    samples += rows[i]["response_time"]["count"].get<std::uint64_t>();
  }
  EXPECT_EQ(planned, r.doc["schedule"]["planned"]);
  EXPECT_EQ(ok, r.doc["outcomes"]["ok"]);
  EXPECT_EQ(timeouts, r.doc["outcomes"]["timeout"]);
  EXPECT_EQ(samples, r.doc["latency"]["response_time"]["count"]);
}

// A 300 ms stall from 2 s (1.8 s into the window, after a 200 ms warm-up): requests of second
// 1 wait up to 300 ms for it, those of second 2 up to 100 ms. 200 connections: nobody queues.
TEST(sim_worst_second, a_server_stall_makes_its_second_worst_and_the_server_the_cause) {
  surroundings around;
  around.server.stalls = {{milliseconds(2000), milliseconds(2300)}};
  const cli_result r =
      run_ranked({"-t", "1", "-c", "200", "-R", "500", "-d", "3s", "--warmup", "200ms"}, around);
  expect_series_adds_up(r);
  expect_worst_second(r, 1);
  const json& w = r.doc["worst_interval"];
  EXPECT_EQ(w["planned"], 500);
  EXPECT_EQ(w["components_p99_ns"]["queue_wait"], 0);
  EXPECT_EQ(w["cause"], "server");
  EXPECT_GT(w["response_time"]["p99_ns"].get<std::int64_t>(), 290'000'000);
}

// The most requests waiting in the generator's queue at once, from when each was got to and when
// it got a connection.
std::uint64_t deepest_queue(const simulation& sim) {
  std::map<nanoseconds, int> change;
  for (const auto& f : sim.finals()) {
    if (f.t.dispatched.count() == 0 || f.t.assigned == f.t.dispatched) continue;
    ++change[f.t.dispatched];
    if (f.t.assigned.count()) --change[f.t.assigned];
  }
  int depth = 0, deepest = 0;
  for (const auto& [at, d] : change) deepest = std::max(deepest, depth += d);
  return static_cast<std::uint64_t>(deepest);
}

// Two connections for a 20 ms server at 150 req/s, 1.5 times what they carry: requests wait
// for a connection, longer and longer, and that wait is the largest part of the worst second.
TEST(sim_worst_second, busy_connections_make_queueing_the_cause) {
  surroundings around;
  around.server.service = {service_time::kind::constant, milliseconds(20)};
  const cli_result r =
      run_ranked({"-t", "1", "-c", "2", "-R", "150", "-d", "2s", "--timeout", "20s"}, around);
  expect_series_adds_up(r);
  const std::size_t worst = worst_of(seconds_of(*r.sim));
  expect_worst_second(r, worst);
  const json& w = r.doc["worst_interval"];
  EXPECT_EQ(w["cause"], "queueing behind busy connections");
  EXPECT_GT(w["components_p99_ns"]["queue_wait"], w["components_p99_ns"]["service_time"]);
  std::uint64_t reported = 0;
  for (const auto& row : r.doc["series"]["per_second"]) {
    reported = std::max(reported, row["queue_depth_max"].get<std::uint64_t>());
  }
  EXPECT_EQ(reported, deepest_queue(*r.sim));
  EXPECT_GT(reported, 10u);
}

// The generator cannot run from 1.3 s to 1.55 s: the requests due then go out when it resumes,
// up to 250 ms late. That lateness makes second 1 the worst, the generator its cause, and the
// warning worst_second_send_lag says so.
TEST(sim_worst_second, a_generator_that_cannot_run_is_the_cause) {
  surroundings around;
  around.pauses = {{0, milliseconds(1300), milliseconds(250)}};
  const cli_result r = run_ranked({"-t", "1", "-c", "100", "-R", "1000", "-d", "2s"}, around);
  expect_series_adds_up(r);
  expect_worst_second(r, 1);
  const json& w = r.doc["worst_interval"];
  EXPECT_EQ(w["cause"], "the generator");
  EXPECT_EQ(w["cause_component"], "send_lag");
  const auto lag = w["components_p99_ns"]["send_lag"].get<std::int64_t>();
  EXPECT_GT(lag, 240'000'000);
  int seen = 0;
  for (const auto& c : r.doc["validity"]["checks"]) {
    if (c["name"] != "worst_second_send_lag") continue;
    ++seen;
    EXPECT_EQ(c["level"], "warning");
    EXPECT_FALSE(c["pass"].get<bool>());
    EXPECT_EQ(c["figure"], static_cast<double>(lag));
    EXPECT_NE(c["note"].get<std::string>().find("second 1 of the window"), std::string::npos)
        << c["note"];
  }
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace punctual::sim::worst_second_cases
