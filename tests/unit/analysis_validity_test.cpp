#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/validity.hpp"
#include "test_numbers.hpp"

namespace {

using namespace std::chrono_literals;
using punctual::analysis::check;
using punctual::analysis::check_level;
using punctual::analysis::check_validity;
using punctual::analysis::interval_series;
using punctual::analysis::validity_input;
using punctual::analysis::validity_report;
using punctual::record::counters;
using punctual::record::outcome;
using punctual::record::view;
using punctual::record::view_set;

using punctual::test::ms;

// A healthy open-model run: 10 s at 1000 req/s, 5 ms responses (4 ms service), 10 us send lag.
struct fixture {
  view_set views;
  counters counts;
  interval_series series;
  std::vector<double> slo;
  std::vector<double> cpu{0.3, 0.4};
  std::optional<double> rate = 1000.0;
  std::uint32_t connections = 64;
  std::chrono::nanoseconds window = 10s;
  punctual::record::per_second_load load;
  bool carry_load = false;  // the connections carry a plan without one rate
  std::uint32_t max_users = 0;
  double mean_session_ns = 0;
  std::optional<std::chrono::nanoseconds> start_lag;
  std::chrono::nanoseconds send_tick{};
  std::vector<punctual::analysis::slo_tail> scoped;

  fixture() {
    view_set second;
    for (int s = 0; s < 10; ++s) {
      second.reset();
      second[view::response_time].record_n(5 * ms, 1000);
      second[view::service_time].record_n(4 * ms, 1000);
      second[view::send_lag].record_n(10'000, 1000);
      series.add(second);
      views.add(second);
    }
    counts.planned = 10'000;
    load.planned.assign(11, 1000);  // a drain second after the window
    load.planned.back() = 0;
    load.late.assign(11, 0);
    counts.outcomes[punctual::record::index(outcome::ok)] = 10'000;
  }
  // Unscoped SLOs on these percentiles, plus any scoped ones a test sets.
  std::vector<punctual::analysis::slo_tail> tails() const {
    std::vector<punctual::analysis::slo_tail> out = scoped;
    for (const double p : slo) out.push_back({"", p, views[view::response_time].total_count()});
    return out;
  }
  validity_report run() const {
    return check_validity(validity_input{.views = views,
                                         .counts = counts,
                                         .rate_per_s = rate,
                                         .connections = connections,
                                         .worker_cpu_shares = cpu,
                                         .intervals = series,
                                         .slo_percentiles = slo,
                                         .slo_tails = tails(),
                                         .window = window,
                                         .load = &load,
                                         .connections_carry_load = carry_load,
                                         .max_users = max_users,
                                         .mean_session_ns = mean_session_ns,
                                         .start_lag = start_lag,
                                         .shard = "shard 2 of 7",
                                         .send_tick = send_tick});
  }
};

const check& find(const validity_report& r, const std::string& name) {
  for (const auto& c : r.checks) {
    if (c.name == name) return c;
  }
  static const check missing = [] {
    check c;
    c.name = "<missing>";
    return c;
  }();
  ADD_FAILURE() << "no check named " << name;
  return missing;
}

bool has(const validity_report& r, const std::string& name) {
  for (const auto& c : r.checks) {
    if (c.name == name) return true;
  }
  return false;
}

TEST(analysis_validity, healthy_run_passes_everything) {
  fixture f;
  // 100 s, so that even p99.99 has 10 samples beyond it.
  f.views[view::response_time].record_n(5 * ms, 90'000);
  f.views[view::send_lag].record_n(10'000, 90'000);
  f.window = 100s;
  f.slo = {99};
  const auto r = f.run();
  EXPECT_TRUE(r.valid());
  EXPECT_TRUE(r.failures().empty());
  for (const auto& c : r.checks) {
    EXPECT_TRUE(c.pass) << c.name << ": " << c.note;
    EXPECT_TRUE(c.note.empty()) << c.name;
  }
  for (const char* name :
       {"send_lag_p99", "send_lag_p99.9", "send_lag_max", "dropped", "connection_cap",
        "samples_beyond_p99", "worker_cpu_0", "worker_cpu_1", "schedule_kept"}) {
    EXPECT_TRUE(has(r, name)) << name;
  }
  EXPECT_EQ(find(r, "samples_beyond_p99").level, check_level::gating);
  EXPECT_EQ(find(r, "samples_beyond_p99.9").level, check_level::warning);
  EXPECT_FALSE(has(r, "samples_beyond_p100"));
}

TEST(analysis_validity, send_lag_fails_at_p99) {
  fixture f;
  f.views[view::send_lag].reset();
  f.views[view::send_lag].record_n(10'000, 9'800);
  f.views[view::send_lag].record_n(3 * ms, 200);  // 2%: p99 and above are 3 ms
  const auto r = f.run();
  EXPECT_FALSE(r.valid());
  const auto& c = find(r, "send_lag_p99");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_DOUBLE_EQ(c.threshold, 1e6);  // 10% of 5 ms is below the 1 ms floor
  EXPECT_GE(c.figure, 3e6);
  EXPECT_NE(c.note.find("behind its schedule"), std::string::npos);
  EXPECT_FALSE(find(r, "send_lag_p99.9").pass);
  EXPECT_EQ(find(r, "send_lag_p99.9").level, check_level::warning);
  EXPECT_FALSE(find(r, "send_lag_max").pass);
  ASSERT_EQ(r.failures().size(), 1u);
  EXPECT_EQ(r.failures().front()->name, "send_lag_p99");
  // The warnings then do not claim the gated figure is unaffected.
  EXPECT_EQ(find(r, "send_lag_max").note.find("not affected"), std::string::npos);
}

// Coarse mode's lag comes from its ticks: the advice names the mode, not threads or the rate,
// unless the lag is well past a tick.
TEST(analysis_validity, a_coarse_runs_send_lag_failure_names_its_ticks) {
  fixture f;
  f.views[view::send_lag].reset();
  f.views[view::send_lag].record_n(500'000, 9'800);
  f.views[view::send_lag].record_n(1'050'000, 200);  // 2%: p99 is 1.05 ms
  const auto fine = f.run();
  EXPECT_NE(find(fine, "send_lag_p99").note.find("use more threads"), std::string::npos);
  f.send_tick = 1ms;
  const auto coarse = f.run();
  const auto& c = find(coarse, "send_lag_p99");
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.note.find("--precision coarse sends what is due once every 1ms"), std::string::npos)
      << c.note;
  EXPECT_EQ(c.note.find("more threads"), std::string::npos) << c.note;
  // Three ticks late is more than the ticks explain.
  f.views[view::send_lag].record_n(3 * ms, 400);
  const auto behind = f.run();
  EXPECT_NE(find(behind, "send_lag_p99").note.find("use more threads"), std::string::npos);
}

// Workers that slept most of the run were late waking up, not short of CPU: the advice is to
// keep them awake (and on their own CPUs), not more threads or a lower rate.
TEST(analysis_validity, a_sleeping_generators_send_lag_failure_points_to_its_wake_ups) {
  fixture f;
  f.views[view::send_lag].reset();
  f.views[view::send_lag].record_n(500'000, 9'800);
  f.views[view::send_lag].record_n(2'000'000, 200);  // 2%: p99 is 2 ms
  f.cpu = {0.06, 0.08};
  const auto idle = f.run();
  const std::string& note = find(idle, "send_lag_p99").note;
  EXPECT_NE(note.find("slept most of the time (the busiest used 8% of a core)"), std::string::npos)
      << note;
  EXPECT_NE(note.find("--precision spin"), std::string::npos) << note;
  EXPECT_NE(note.find("--pin"), std::string::npos) << note;
  EXPECT_EQ(note.find("more threads"), std::string::npos) << note;
  f.cpu = {0.06};
  const auto one = f.run();
  const std::string& alone = find(one, "send_lag_p99").note;
  EXPECT_NE(alone.find("-t2 lets one worker send for another"), std::string::npos) << alone;
  // A busy worker is short of CPU.
  f.cpu = {0.95, 0.9};
  EXPECT_NE(find(f.run(), "send_lag_p99").note.find("use more threads"), std::string::npos);
}

TEST(analysis_validity, send_lag_allowance_scales_with_response_time) {
  fixture f;
  f.views[view::response_time].reset();
  f.views[view::response_time].record_n(100 * ms, 10'000);
  f.views[view::send_lag].reset();
  f.views[view::send_lag].record_n(5 * ms, 10'000);  // 5 ms < 10% of 100 ms
  const auto r = f.run();
  EXPECT_TRUE(find(r, "send_lag_p99").pass);
  EXPECT_TRUE(find(r, "send_lag_max").pass);
  EXPECT_NEAR(find(r, "send_lag_p99").threshold, 10 * ms, 0.01 * ms);
  EXPECT_TRUE(r.valid());
}

// One late wake-up the host caused moves the maximum and p99.99 only: a warning that says what
// it did to which figures, never a verdict.
TEST(analysis_validity, one_generator_stall_only_warns) {
  fixture f;
  f.views[view::send_lag].record(50 * ms);  // 1 in 10001: hidden by p99 and p99.9
  f.views[view::send_lag].record(3 * ms);
  const auto r = f.run();
  EXPECT_TRUE(find(r, "send_lag_p99").pass);
  EXPECT_EQ(find(r, "send_lag_p99").level, check_level::gating);
  EXPECT_TRUE(find(r, "send_lag_p99.9").pass);
  const auto& c = find(r, "send_lag_max");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::warning);
  EXPECT_NE(c.note.find("p99.99 and max include up to 50"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("(2 requests over 1ms)"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("p99, which the run is judged on, is not affected"), std::string::npos)
      << c.note;
  EXPECT_EQ(find(r, "send_lag_p99.99").note, c.note);
  EXPECT_TRUE(r.valid());
}

// An SLO on the maximum gates it: then one hiccup does invalidate the run.
TEST(analysis_validity, an_slo_on_the_maximum_gates_it) {
  fixture f;
  f.views[view::send_lag].record(50 * ms);
  f.slo = {100};
  const auto r = f.run();
  const auto& c = find(r, "send_lag_max");
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.note.find("behind its schedule at the maximum"), std::string::npos) << c.note;
  EXPECT_EQ(find(r, "send_lag_p99").level, check_level::warning);  // named by no SLO
  EXPECT_FALSE(has(r, "samples_beyond_p100"));
  EXPECT_FALSE(r.valid());
}

TEST(analysis_validity, gated_percentiles_are_the_slo_ones_else_p99) {
  using punctual::analysis::gated_percentiles;
  EXPECT_EQ(gated_percentiles({}), std::vector<double>{99});
  EXPECT_EQ(gated_percentiles({99.9, 50, 99.9}), (std::vector<double>{50, 99.9}));
  EXPECT_EQ(gated_percentiles({100}), std::vector<double>{100});
}

TEST(analysis_validity, an_slo_percentile_outside_the_summary_gets_its_own_check) {
  fixture f;
  f.slo = {95};
  const auto r = f.run();
  EXPECT_EQ(find(r, "send_lag_p95").level, check_level::gating);
  EXPECT_EQ(find(r, "samples_beyond_p95").level, check_level::gating);
  EXPECT_EQ(find(r, "send_lag_p99").level, check_level::warning);
  EXPECT_EQ(find(r, "samples_beyond_p99").level, check_level::warning);
}

TEST(analysis_validity, drops_make_the_run_invalid) {
  fixture f;
  f.counts.outcomes[punctual::record::index(outcome::dropped)] = 3;
  const auto r = f.run();
  const auto& c = find(r, "dropped");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.figure, 3);
  EXPECT_NE(c.note.find("3 requests were dropped"), std::string::npos);
  EXPECT_FALSE(r.valid());
}

TEST(analysis_validity, connection_cap_names_the_c_that_suffices) {
  fixture f;  // 1000 req/s at 4 ms service: 1.5 * 1000 * 0.004 = 6 connections, and a bit more
  // because the histogram's mean uses each bucket's middle value.
  const double mean = f.views[view::service_time].mean();
  const double needed = 1.5 * 1000 * mean / 1e9;
  const auto suffices = static_cast<std::uint32_t>(std::ceil(needed));
  EXPECT_NEAR(needed, 6.0, 0.01);
  f.connections = suffices - 1;
  auto r = f.run();
  const auto& c = find(r, "connection_cap");
  EXPECT_FALSE(c.pass);
  EXPECT_DOUBLE_EQ(c.threshold, needed);
  EXPECT_NE(c.note.find("-c " + std::to_string(suffices) + " would have sufficed"),
            std::string::npos)
      << c.note;
  EXPECT_FALSE(r.valid());
  f.connections = suffices;
  EXPECT_TRUE(find(f.run(), "connection_cap").pass);
  EXPECT_EQ(punctual::analysis::connections_needed(1000, 5e6), 8u);  // 7.5 rounds up
}

TEST(analysis_validity, user_cap_is_littles_law_on_the_busiest_second) {
  fixture f;  // as arrivals: 1000 users/s, but one second of 1200
  f.load.planned[3] = 1200;
  EXPECT_FALSE(has(f.run(), "user_cap"));  // no cap, no check
  f.mean_session_ns = 2e9;                 // 1.5 * 1200/s * 2 s = 3600 users
  f.max_users = 3599;
  auto r = f.run();
  const auto& c = find(r, "user_cap");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_DOUBLE_EQ(c.threshold, 3600);
  EXPECT_NE(c.note.find("max_users 3600 would have sufficed"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("1200 users/s"), std::string::npos) << c.note;
  EXPECT_FALSE(r.valid());
  f.max_users = 3600;
  EXPECT_TRUE(find(f.run(), "user_cap").pass);
}

// Stages: no one rate, so -c is held to the busiest whole second of the planned load, here the
// 1400 requests of second 2 (1.5 * 1400/s * ~4 ms = 8.4 connections), not to the mean.
TEST(analysis_validity, connection_cap_without_one_rate_is_judged_on_the_busiest_second) {
  fixture f;
  f.rate.reset();
  f.carry_load = true;
  f.load.steps = {500, 1000, 1400, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 0};
  const double mean = f.views[view::service_time].mean();
  f.connections = 8;
  auto r = f.run();
  const auto& c = find(r, "connection_cap");
  EXPECT_FALSE(c.pass);
  EXPECT_DOUBLE_EQ(c.threshold, 1.5 * 1400 * mean / 1e9);
  EXPECT_NE(c.note.find("-c 8 cannot carry 1400 req/s (the busiest second) at a mean service "
                        "time of 4"),
            std::string::npos)
      << c.note;
  EXPECT_NE(c.note.find("-c 9 would have sufficed"), std::string::npos) << c.note;
  EXPECT_FALSE(r.valid());
  f.connections = 9;
  EXPECT_TRUE(find(f.run(), "connection_cap").pass);
}

// A trace replayed with -d 2.5s: the half second at its end is not judged (as in the schedule
// check), however dense; a window shorter than a second is judged on its one second, scaled.
TEST(analysis_validity, busiest_second_counts_whole_seconds_unless_there_are_none) {
  punctual::record::per_second_load load;
  load.steps = {100, 300, 400, 0};
  EXPECT_DOUBLE_EQ(punctual::analysis::busiest_second_rate(load, 2500ms), 300);
  EXPECT_DOUBLE_EQ(punctual::analysis::busiest_second_rate(load, 3s), 400);
  load.steps = {400, 0};
  EXPECT_DOUBLE_EQ(punctual::analysis::busiest_second_rate(load, 500ms), 800);
  EXPECT_DOUBLE_EQ(punctual::analysis::busiest_second_rate(load, 0ms), 0);
  load.steps.clear();
  EXPECT_DOUBLE_EQ(punctual::analysis::busiest_second_rate(load, 2s), 0);

  fixture f;  // the trace's run: 2.5 s, 4 ms service, 2 connections for 300 req/s at most
  f.rate.reset();
  f.carry_load = true;
  f.window = 2500ms;
  f.load.steps = {100, 300, 400, 0};
  f.connections = 2;
  const auto r = f.run();
  const auto& c = find(r, "connection_cap");
  EXPECT_TRUE(c.pass) << c.note;
  EXPECT_DOUBLE_EQ(c.threshold, 1.5 * 300 * f.views[view::service_time].mean() / 1e9);
}

// A hybrid run whose users share the -c connections (connection: pool): the connections carry
// every step, so -c is judged on the busiest second's steps (five per session here), while
// max_users is judged on its arrivals.
TEST(analysis_validity, a_hybrid_pool_is_judged_on_its_steps_and_max_users_on_its_arrivals) {
  fixture f;
  f.rate.reset();
  f.carry_load = true;
  f.load.planned.assign(11, 90);  // users/s
  f.load.planned.back() = 0;
  f.load.steps.assign(11, 450);  // steps/s: 1.5 * 450/s * ~4 ms = 2.7 connections
  f.load.steps.back() = 0;
  f.max_users = 300;
  f.mean_session_ns = 2e9;  // 1.5 * 90/s * 2 s = 270 users
  f.connections = 2;
  auto r = f.run();
  const auto& c = find(r, "connection_cap");
  EXPECT_FALSE(c.pass);
  EXPECT_DOUBLE_EQ(c.threshold, 1.5 * 450 * f.views[view::service_time].mean() / 1e9);
  EXPECT_NE(c.note.find("450 req/s (the busiest second)"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("-c 3 would have sufficed"), std::string::npos) << c.note;
  EXPECT_TRUE(find(r, "user_cap").pass) << find(r, "user_cap").note;
  f.connections = 3;
  EXPECT_TRUE(find(f.run(), "connection_cap").pass);
  // Connections of their own (connection: per_user): max_users alone is judged.
  f.carry_load = false;
  f.connections = 1;
  r = f.run();
  EXPECT_FALSE(has(r, "connection_cap"));
  EXPECT_TRUE(has(r, "user_cap"));
}

TEST(analysis_validity, closed_model_has_no_connection_check) {
  fixture f;
  f.rate.reset();
  f.connections = 1;
  const auto r = f.run();
  EXPECT_FALSE(has(r, "connection_cap"));
  EXPECT_TRUE(r.valid());
}

TEST(analysis_validity, server_stall_does_not_fail_the_connection_check) {
  fixture f;
  // One second in which the server stalled: service-time p50 of 2 s, far above 10x the median.
  view_set stall;
  stall[view::response_time].record_n(2000 * ms, 1000);
  stall[view::service_time].record_n(2000 * ms, 1000);
  stall[view::send_lag].record_n(10'000, 1000);
  f.series.add(stall);
  f.views.add(stall);
  f.connections = 7;
  const auto r = f.run();
  // The whole-run mean (~185 ms) would ask for ~280 connections; the steady mean is 4 ms.
  EXPECT_GT(f.views[view::service_time].mean(), 100e6);
  EXPECT_NEAR(punctual::analysis::steady_mean_service_ns(f.views, f.series), 4e6, 0.01e6);
  EXPECT_TRUE(find(r, "connection_cap").pass) << find(r, "connection_cap").note;
}

TEST(analysis_validity, slo_percentile_needs_ten_samples_beyond_it) {
  fixture f;  // 10,000 samples in 10 s
  f.slo = {99.99, 100};
  const auto r = f.run();
  const auto& c = find(r, "samples_beyond_p99.99");
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_FALSE(c.pass);
  EXPECT_NEAR(c.figure, 1.0, 1e-6);
  // 10 beyond p99.99 needs 100,000 samples: 100 s at the observed 1000 req/s.
  EXPECT_NE(c.note.find("100s"), std::string::npos) << c.note;
  EXPECT_FALSE(r.valid());
  EXPECT_FALSE(has(r, "samples_beyond_p100"));  // the maximum is exempt
  int named = 0;
  for (const auto& k : r.checks) named += k.name == "samples_beyond_p99.99";
  EXPECT_EQ(named, 1);  // gated, so not repeated as a warning

  f.slo = {99.9};  // exactly 10 beyond
  EXPECT_TRUE(find(f.run(), "samples_beyond_p99.9").pass);
}

TEST(analysis_validity, thin_summary_percentiles_only_warn) {
  fixture f;
  const auto r = f.run();
  const auto& c = find(r, "samples_beyond_p99.99");
  EXPECT_EQ(c.level, check_level::warning);
  EXPECT_FALSE(c.pass);
  EXPECT_NE(c.note.find("100s"), std::string::npos) << c.note;
  EXPECT_TRUE(r.valid());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_EQ(r.warnings()[0]->name, "samples_beyond_p99.99");
}

// Without an SLO there is no verdict to withhold: a smoke test's thin p99 only warns, and says
// how long a run would resolve it.
TEST(analysis_validity, without_an_slo_too_few_samples_beyond_p99_only_warn) {
  fixture f;
  f.window = std::chrono::seconds(2);
  f.views.reset();
  f.views[view::response_time].record_n(5 * ms, 400);
  f.views[view::service_time].record_n(4 * ms, 400);
  f.views[view::send_lag].record_n(10'000, 400);
  const auto r = f.run();
  const auto& c = find(r, "samples_beyond_p99");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::warning);
  EXPECT_NE(c.note.find("runs of 5s, 50s and 500s at the observed 200 req/s"), std::string::npos)
      << c.note;
  EXPECT_TRUE(r.valid());
  f.slo = {99};
  EXPECT_FALSE(f.run().valid());
}

// An SLO on a name judges that name's samples: a session SLO with enough sessions beyond its
// p99 passes the gate whatever the run's own p99 has, and a thin one fails it.
TEST(analysis_validity, a_scoped_slo_gates_the_samples_of_its_own_view) {
  fixture f;
  f.window = std::chrono::seconds(2);
  f.views.reset();
  f.views[view::response_time].record_n(5 * ms, 400);  // 4 beyond the run's p99
  f.views[view::send_lag].record_n(10'000, 400);
  f.scoped = {{"buy.session", 99, 2000}};
  auto r = f.run();
  EXPECT_TRUE(r.valid()) << r.failures().front()->note;
  EXPECT_TRUE(find(r, "samples_beyond_buy.session_p99").pass);
  EXPECT_EQ(find(r, "samples_beyond_p99").level, check_level::warning);
  f.scoped = {{"buy.session", 99, 300}};
  r = f.run();
  const auto& c = find(r, "samples_beyond_buy.session_p99");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_NE(c.note.find("buy.session's p99 has 3 samples"), std::string::npos) << c.note;
  EXPECT_FALSE(r.valid());
}

TEST(analysis_validity, busy_worker_warns) {
  fixture f;
  f.cpu = {0.5, 0.95};
  const auto r = f.run();
  EXPECT_TRUE(find(r, "worker_cpu_0").pass);
  const auto& c = find(r, "worker_cpu_1");
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.level, check_level::warning);
  EXPECT_NE(c.note.find("95%"), std::string::npos) << c.note;
  EXPECT_TRUE(r.valid());
}

namespace schedule_rule {

using punctual::analysis::schedule_check;
using punctual::record::per_second_load;

per_second_load seconds(std::vector<std::uint64_t> planned, std::vector<std::uint64_t> late) {
  per_second_load l;
  l.planned = std::move(planned);
  l.late = std::move(late);
  return l;
}

TEST(schedule_check, allows_one_percent_or_two_requests_per_second) {
  // 2000 planned: 20 late allowed, 21 not.
  EXPECT_TRUE(schedule_check(seconds({2000, 2000}, {20, 0}), 2s).pass);
  const auto c = schedule_check(seconds({2000, 2000}, {0, 21}), 2s);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.figure, 1);
  EXPECT_NE(c.note.find("second 1 of the window: 21 of 2000"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("(at most 20 allowed)"), std::string::npos) << c.note;
  // 100 planned: 1% is 1, but 2 are always allowed.
  EXPECT_TRUE(schedule_check(seconds({100}, {2}), 1s).pass);
  EXPECT_FALSE(schedule_check(seconds({100}, {3}), 1s).pass);
}

TEST(schedule_check, a_trailing_partial_second_is_not_judged) {
  // 2.5 s: seconds 0 and 1 are whole, second 2 holds half a second (or an interruption).
  const auto l = seconds({1000, 1000, 500, 0}, {0, 0, 500, 0});
  EXPECT_TRUE(schedule_check(l, 2500ms).pass);
  EXPECT_FALSE(schedule_check(l, 3s).pass);
  // Shorter than a second: nothing whole to judge.
  EXPECT_TRUE(schedule_check(seconds({900}, {900}), 999ms).pass);
}

TEST(schedule_check, a_ramp_to_zero_judges_empty_seconds_as_kept) {
  // 100 -> 0 req/s over 4 s: the last seconds plan 12, 3 and 0 requests.
  const auto l = seconds({87, 62, 37, 12, 3, 0}, {0, 0, 0, 2, 2, 0});
  EXPECT_TRUE(schedule_check(l, 6s).pass);
  EXPECT_FALSE(schedule_check(seconds({87, 62, 37, 12, 3, 0}, {0, 0, 0, 3, 0, 0}), 6s).pass);
}

TEST(schedule_check, poisson_at_50_per_second_allows_two_late_per_second) {
  // Poisson at 50 req/s plans 35..65 in a second; 1% is below 1, so the floor of 2 decides.
  const auto kept = seconds({43, 58, 51, 66, 37}, {2, 0, 1, 2, 2});
  EXPECT_TRUE(schedule_check(kept, 5s).pass);
  const auto c = schedule_check(seconds({43, 58, 51, 66, 37}, {2, 3, 0, 0, 5}), 5s);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.figure, 2);
  EXPECT_NE(c.note.find("in 2 of 5 seconds"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("second 4 of the window: 5 of 37"), std::string::npos) << c.note;
}

TEST(schedule_check, gates_a_run_and_is_absent_without_a_schedule) {
  fixture f;
  f.load.late[3] = 500;
  auto r = f.run();
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(r.failures().front()->name, "schedule_kept");
  EXPECT_EQ(find(r, "schedule_kept").level, check_level::gating);
  auto in = validity_input{.views = f.views,
                           .counts = f.counts,
                           .rate_per_s = std::nullopt,
                           .connections = 4,
                           .worker_cpu_shares = f.cpu,
                           .intervals = f.series,
                           .slo_percentiles = {},
                           .slo_tails = {},
                           .window = f.window};
  EXPECT_FALSE(has(check_validity(in), "schedule_kept"));
}

}  // namespace schedule_rule

}  // namespace

// A shard that began its schedule more than 100 ms after --start-at fails the run, and the
// note names the shard; a run without --start-at has no such check.
TEST(start_lag_rule, gates_a_late_shard_and_names_it) {
  fixture f;
  EXPECT_FALSE(has(f.run(), "start_lag"));
  f.start_lag = std::chrono::milliseconds(100);
  EXPECT_TRUE(f.run().valid());
  EXPECT_TRUE(find(f.run(), "start_lag").pass);
  f.start_lag = std::chrono::milliseconds(340);
  const auto r = f.run();
  EXPECT_FALSE(r.valid());
  const auto& c = find(r, "start_lag");
  EXPECT_EQ(c.level, check_level::gating);
  EXPECT_DOUBLE_EQ(c.figure, 340e6);
  EXPECT_NE(c.note.find("shard 2 of 7 began its schedule 340"), std::string::npos) << c.note;
}

// A shard carries 1/N of the planned rate on its own -c: the connection cap is judged on that
// share, so 4 connections that carry a quarter of the rate pass.
TEST(connection_rule, judges_a_shard_on_its_share_of_the_rate) {
  fixture f;
  f.rate = 1000;  // ~4 ms mean service: 1.5 * 1000 * 0.004 = 6 connections needed
  f.connections = 4;
  EXPECT_FALSE(find(f.run(), "connection_cap").pass);
  auto in = validity_input{.views = f.views,
                           .counts = f.counts,
                           .rate_per_s = f.rate,
                           .connections = 4,
                           .worker_cpu_shares = f.cpu,
                           .intervals = f.series,
                           .slo_percentiles = {},
                           .slo_tails = {},
                           .window = f.window,
                           .shards = 4};
  const auto report = check_validity(in);
  const auto& c = find(report, "connection_cap");
  EXPECT_TRUE(c.pass);
  EXPECT_NEAR(c.threshold, 1.5 * 250 * f.views[view::service_time].mean() / 1e9, 1e-9);
}
