#include "analysis/validity.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

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

constexpr std::int64_t ms = 1'000'000;

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
    counts.outcomes[punctual::record::index(outcome::ok)] = 10'000;
  }
  validity_report run() const {
    return check_validity(validity_input{.views = views, .counts = counts, .rate_per_s = rate,
                                         .connections = connections, .worker_cpu_shares = cpu,
                                         .intervals = series, .slo_percentiles = slo, .window = window});
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
  for (const char* name : {"send_lag_p99", "send_lag_p99.9", "send_lag_max", "dropped", "connection_cap",
                           "samples_beyond_p99", "worker_cpu_0", "worker_cpu_1"}) {
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
  EXPECT_FALSE(find(r, "send_lag_max").pass);
  EXPECT_EQ(r.failures().front()->name, "send_lag_p99");
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

TEST(analysis_validity, one_generator_stall_fails_only_max) {
  fixture f;
  f.views[view::send_lag].record(50 * ms);  // 1 in 10001: hidden by p99 and p99.9
  const auto r = f.run();
  EXPECT_TRUE(find(r, "send_lag_p99").pass);
  EXPECT_TRUE(find(r, "send_lag_p99.9").pass);
  EXPECT_FALSE(find(r, "send_lag_max").pass);
  EXPECT_FALSE(r.valid());
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
  EXPECT_NE(c.note.find("-c " + std::to_string(suffices) + " would have sufficed"), std::string::npos)
      << c.note;
  EXPECT_FALSE(r.valid());
  f.connections = suffices;
  EXPECT_TRUE(find(f.run(), "connection_cap").pass);
  EXPECT_EQ(punctual::analysis::connections_needed(1000, 5e6), 8u);  // 7.5 rounds up
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

}  // namespace
