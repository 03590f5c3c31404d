// Does the report's 95% interval (analysis::percentile_interval) cover the true percentile of the
// response time at its stated rate? Each seed is one run against a server whose response-time
// law is known exactly, so the truth is computed, not estimated:
//
// - steady: service times exponential with mean m, enough connections that no request waits for
//   one. A response time is the two one-way link delays plus the service time (the requests'
//   and answers' few hundred bytes cross a 10 Gbit/s link in well under the histogram's
//   resolution), so its q-quantile is delays - m ln(1 - q).
// - stall: the same server, also answering nothing for `stall` in every `period` (serve's
//   --stall), at a phase drawn per seed. An answer due in a stall waits for its end. The phase of
//   an answer's due time (intended + up delay + service, mod the period) is uniform and
//   independent of the service time, so the wait is 0 with probability 1 - stall/period and
//   else uniform on [0, stall): the response time's law is the service time's convolved with
//   that. A run of whole periods at constant arrivals holds that share of stalled requests; a
//   run of 12 s holds two or three stalls, and its own percentiles move with them.
//
// A request that waited for a connection would break the law, so every run is held to none.
// Each case prints its coverage; `SIM_SEEDS=33334 build/tests/sim_tests
// --gtest_filter='sim_coverage*'` runs 500 seeds a case, and SIM_COVERAGE_TRACE=1 prints each
// run's intervals beside the truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/confidence.hpp"
#include "analysis/interval_series.hpp"
#include "schedule/prng.hpp"
#include "sim_seeds.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::coverage_cases {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct scenario {
  const char* name;
  double rate;
  nanoseconds duration;
  std::uint32_t connections;
  nanoseconds mean_service;
  nanoseconds period{};  // zero: no stalls
  nanoseconds stall{};
};

// The response time's law, as a CDF over ns.
double law_cdf(const scenario& s, nanoseconds delays, double x) {
  const double m = static_cast<double>(s.mean_service.count());
  const double y = x - static_cast<double>(delays.count());
  const auto service_cdf = [m](double v) { return v <= 0 ? 0.0 : 1 - std::exp(-v / m); };
  if (s.period.count() == 0) return service_cdf(y);
  const double l = static_cast<double>(s.stall.count());
  const double share = l / static_cast<double>(s.period.count());
  // The stalled share: (1/l) times the integral over w in [0, l) of F(y - w).
  const double top = std::clamp(y, 0.0, l);
  const double stalled =
      y <= 0 ? 0.0 : (top - m * (std::exp(-(y - top) / m) - std::exp(-y / m))) / l;
  return (1 - share) * service_cdf(y) + share * stalled;
}

double true_quantile(const scenario& s, nanoseconds delays, double percentile) {
  const double q = percentile / 100;
  double lo = 0, hi = 1e12;
  for (int i = 0; i < 200 && hi - lo > 0.5; ++i) {
    const double mid = (lo + hi) / 2;
    (law_cdf(s, delays, mid) < q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct tally {
  std::uint64_t runs = 0;
  std::uint64_t covered = 0;
  std::uint64_t batch_chosen = 0;
  std::uint64_t at_minimum = 0;      // the interval reaches down to the run's fastest response
  std::uint64_t quantile_means = 0;  // the mean of the seconds' values -+ t * se reaches 0
};

// The lower end of the interval the method had before this test (the mean of the seconds'
// values of the percentile, -+ t(0.975, k-1) * sd / sqrt(k)), for comparison in the output.
double seconds_mean_lower(const analysis::interval_series& series, double p) {
  const auto v = series.response_values(p);
  if (v.size() < 5) return 1;
  const double k = static_cast<double>(v.size());
  double sum = 0;
  for (const auto x : v) sum += static_cast<double>(x);
  const double mean = sum / k;
  double sq = 0;
  for (const auto x : v) sq += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  return mean - analysis::student_t_975(static_cast<int>(v.size()) - 1) * std::sqrt(sq / (k - 1)) /
                    std::sqrt(k);
}

constexpr double checked[] = {50, 90, 99};

void run_seed(const scenario& sc, std::uint64_t seed, std::vector<tally>& tallies) {
  setup s = open_setup(sc.rate, sc.duration);
  s.config.connections = sc.connections;
  s.server.service = {service_time::kind::exponential, sc.mean_service, {}};
  s.seed = seed;
  if (sc.period.count() != 0) {
    schedule::xoshiro256ss draw(seed);
    const auto phase = nanoseconds{
        static_cast<std::int64_t>(draw.next_unit() * static_cast<double>(sc.period.count()))};
    for (nanoseconds at = phase - sc.period; at < sc.duration + sc.period; at += sc.period)
      s.server.stalls.push_back({at, at + sc.stall});
  }
  simulation sim(s);
  analysis::interval_series series;
  sim.set_sink([&](std::int64_t, const record::view_set& v) { series.add(v); });
  ASSERT_TRUE(sim.run()) << sim.failure().value_or("");
  std::uint64_t waited = 0;
  for (const auto& f : sim.finals()) waited += f.t.assigned != f.t.dispatched ? 1 : 0;
  ASSERT_EQ(waited, 0u) << "requests waited for a connection: the law does not hold (seed " << seed
                        << ")";
  ASSERT_EQ(count_of(sim, record::outcome::ok), sim.result().measured.counts.planned);
  const auto& h = sim.result().measured.views[record::view::response_time];
  const nanoseconds delays = s.up.delay + s.down.delay;
  for (std::size_t i = 0; i < std::size(checked); ++i) {
    const double p = checked[i];
    const double truth = true_quantile(sc, delays, p);
    const auto ci = analysis::percentile_interval(h, series, p);
    tally& t = tallies[i];
    ++t.runs;
    if (static_cast<double>(ci.lo) <= truth && truth <= static_cast<double>(ci.hi)) ++t.covered;
    if (ci.method == analysis::method_batch_means) ++t.batch_chosen;
    if (ci.lo == h.lowest_equivalent_value(h.min())) ++t.at_minimum;
    if (seconds_mean_lower(series, p) <= 0) ++t.quantile_means;
    if (std::getenv("SIM_COVERAGE_TRACE"))
      std::printf("%s seed %llu p%g truth %.0f ci %lld..%lld %s point %lld\n", sc.name,
                  static_cast<unsigned long long>(seed), p, truth, static_cast<long long>(ci.lo),
                  static_cast<long long>(ci.hi), std::string(ci.method).c_str(),
                  static_cast<long long>(h.value_at_percentile(p)));
  }
}

// Each percentile's interval must cover the truth in at least 95% of the seeds, less three
// binomial standard errors of that share (78% of 15 seeds, 93% of 1,000).
//
// make test runs 15 seeds a case, SIM_SEEDS the share of 30 in 2,000 (make test-full: 750). 15
// is as sharp as 30 was against the method broken on purpose (measured 2026-12-03): intervals
// half as wide failed steady at p99 (8 of 15; 17 of 30), the binomial interval alone, never
// batch means, failed stall-12s at p50 and p90 (9 and 1 of 15; 17 and 2 of 30); intervals a
// quarter narrower passed both counts (steady p99 12 of 15, 26 of 30). No break tried failed
// the periodic stall case at either count.
constexpr std::uint64_t quick_seeds = 15;
constexpr std::uint64_t full_share = 30;

void check_coverage(const scenario& sc) {
  std::vector<tally> tallies(std::size(checked));
  for (const std::uint64_t seed : seeds_to_run(quick_seeds, full_share)) {
    run_seed(sc, seed, tallies);
    if (testing::Test::HasFatalFailure()) return;
  }
  for (std::size_t i = 0; i < std::size(checked); ++i) {
    const tally& t = tallies[i];
    const auto runs = static_cast<double>(t.runs);
    const double rate = static_cast<double>(t.covered) / runs;
    std::printf(
        "%s p%g: covered %llu of %llu (%.1f%%); batch means chosen %llu, down to the "
        "fastest response %llu; seconds' mean -+ t*se <= 0: %llu\n",
        sc.name, checked[i], static_cast<unsigned long long>(t.covered),
        static_cast<unsigned long long>(t.runs), 100 * rate,
        static_cast<unsigned long long>(t.batch_chosen),
        static_cast<unsigned long long>(t.at_minimum),
        static_cast<unsigned long long>(t.quantile_means));
    EXPECT_GE(rate, 0.95 - 3 * std::sqrt(0.95 * 0.05 / runs))
        << sc.name << " p" << checked[i] << ": covered " << t.covered << " of " << t.runs;
  }
}

TEST(sim_coverage, steady_server) {
  check_coverage({"steady", 500, seconds(10), 32, milliseconds(1)});
}

TEST(sim_coverage, periodic_stall_server) {
  check_coverage({"stall", 200, seconds(20), 300, milliseconds(1), seconds(5), seconds(1)});
}

// 12 s of a 5 s period: two or three stalls by the phase, so the run's share of stalled
// requests (1/6 to 1/4) is not the law's 1/5, and the run's own percentile moves with it.
TEST(sim_coverage, stall_period_not_dividing_the_run) {
  check_coverage({"stall-12s", 200, seconds(12), 300, milliseconds(1), seconds(5), seconds(1)});
}

}  // namespace
}  // namespace punctual::sim::coverage_cases
