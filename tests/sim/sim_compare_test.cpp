// `punctual compare` against servers whose latency distributions are known: pairs of simulated
// runs (each a `punctual run` command line with its JSON and .hlog, as the binary writes them),
// compared as the binary compares them (report::compare_runs). Checked:
// - A/A: pairs of runs of one server with different seeds, stalling servers among them, call a
//   regression in any row in at most 5% of the pairs;
// - coverage: the 95% interval of the change at p50 and p99 covers the true change, computed
//   from the two servers' service-time distributions (the network's delays are the same in both
//   and cancel), in at least 93% of the pairs;
// - A/B: a service time 20% slower is a regression at p50 in at least 19 of 20 pairs, and a
//   300 ms stall every 2 s added to the candidate a regression at p99;
// - the verdict's exit codes: 3 for a regression, 4 when a run is invalid, and the refusal of
//   runs whose workloads differ.
// make test runs 20 A/A pairs, 40 coverage pairs and 10 A/B pairs; make test-full (FULL=1 or
// SIM_SEEDS) or SIM_PAIRS=200 runs the 200 (and 20 A/B) the claims are about (pairs_to_run).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/confidence.hpp"
#include "cli_run.hpp"
#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "report/compare_report.hpp"
#include "schedule/prng.hpp"
#include "sim_seeds.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::compare_cases {
namespace {

using json = nlohmann::ordered_json;
using std::chrono::microseconds;
using std::chrono::milliseconds;

// Pairs in make test; 200 under make test-full (pairs_to_run). Each count is the smallest that
// still failed the test when the method was broken on purpose (docs/design.md, "Comparing two
// runs": intervals narrowed or widened, Holm left out).
constexpr std::uint64_t quick_aa_pairs = 20;
constexpr std::uint64_t quick_coverage_pairs = 40;
constexpr std::uint64_t quick_ab_pairs = 10;
constexpr std::uint64_t quick_holm_pairs = 10;

// The pairs a statistical case runs: `quick` in make test, the 200 the claim is about under
// make test-full (FULL=1 or SIM_SEEDS set), or SIM_PAIRS.
std::vector<std::uint64_t> pairs_to_run(std::uint64_t quick) {
  std::uint64_t n = env_number("SIM_PAIRS", 0);
  if (n == 0) n = env_number("FULL", 0) || env_number("SIM_SEEDS", 0) ? 200 : quick;
#ifdef PUNCTUAL_SANITIZED
  // A run costs ~30 times as much under a sanitizer, which is there for memory errors, not for
  // the statistics: a pair or two walks every path.
  n = std::max<std::uint64_t>(1, n / 40);
#endif
  std::vector<std::uint64_t> out;
  for (std::uint64_t i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

report::compare_input input_of(const cli_result& r, const std::string& name) {
  report::compare_input in;
  in.name = name;
  in.doc = r.doc;
  auto log = hdr::read_interval_log(r.hlog);
  EXPECT_TRUE(log) << log.error;
  if (!log) return in;
  for (const auto& iv : log.log->intervals) in.add_interval(*log.log, iv);
  return in;
}

// One run of `server` at `rate` for `duration`, Poisson arrivals from `seed` (the server's
// draws from it too).
cli_result simulated_run(const server_script& server, std::uint64_t seed,
                         const std::string& rate = "200", const std::string& duration = "10s",
                         std::vector<std::string> extra = {}) {
  surroundings around;
  around.server = server;
  around.seed = seed;
  std::vector<std::string> args{"-R",        rate,      "-d",     duration,
                                "--arrival", "poisson", "--seed", std::to_string(seed),
                                "-t",        "1",       "-c",     "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("http://127.0.0.1:8080/");
  return run_cli(args, around);
}

report::comparison compare(const cli_result& base, const cli_result& cand,
                           const report::compare_settings& settings = {}) {
  return report::compare_runs(input_of(base, "base.json"), input_of(cand, "cand.json"), settings);
}

server_script exponential(nanoseconds mean) {
  server_script s;
  s.service = {service_time::kind::exponential, mean, {}};
  return s;
}

const json* row_of(const json& doc, const std::string& metric, const std::string& name = "") {
  for (const auto& r : doc["rows"]) {
    if (r["metric"] == metric && r["name"] == name) return &r;
  }
  return nullptr;
}

bool any_regression(const json& doc) {
  for (const auto& r : doc["rows"]) {
    if (r["verdict"] == "regression") return true;
  }
  return false;
}

// The server of A/A pair `i`, as run `run` of the pair meets it: exponential, uniform, or
// exponential with stalls of 300 ms that come at random (each second of the window has one with
// probability 0.2, at a random place in it), so two runs of this one server meet different
// stalls, as two runs against a server that collects garbage now and then do.
server_script aa_server(std::uint64_t i, std::uint64_t run) {
  server_script s = exponential(milliseconds(2));
  if (i % 3 == 1) s.service = {service_time::kind::uniform, milliseconds(1), milliseconds(3)};
  if (i % 3 == 2) {
    schedule::xoshiro256ss draw(i * 1000 + run);
    for (int second = 0; second < 10; ++second) {
      if (draw.next_unit() >= 0.2) continue;
      const auto at = milliseconds(second * 1000 + static_cast<int>(draw.next_unit() * 700));
      s.stalls.push_back({at, at + milliseconds(300)});
    }
  }
  return s;
}

// What a method that takes requests as independent would call at p99: the candidate's binomial
// (order-statistic) interval wholly above the base's by more than 5%. The A/A case counts it
// beside compare's own calls, to show that the pairs are ones on which a wrong method fails.
bool independent_method_calls_p99(const cli_result& base, const cli_result& cand) {
  const auto whole = [](const cli_result& r) {
    return std::move(*hdr::decode_compressed_base64(
                          r.doc["histograms"]["views"]["response_time"].get<std::string>())
                          .value);
  };
  const auto hb = whole(base);
  const auto hc = whole(cand);
  const auto b = analysis::binomial_interval(hb, 99);
  const auto c = analysis::binomial_interval(hc, 99);
  if (!b || !c) return false;
  // Each interval's half width as 1.96 standard errors; one-sided at 5%, as compare's test is.
  const double se =
      std::hypot(static_cast<double>(b->width()), static_cast<double>(c->width())) / (2 * 1.96);
  const double excess = static_cast<double>(hc.value_at_percentile(99)) -
                        1.05 * static_cast<double>(hb.value_at_percentile(99));
  return excess > 1.645 * se;
}

TEST(sim_compare, runs_of_one_server_rarely_call_a_regression) {
  const auto pairs = pairs_to_run(quick_aa_pairs);
  std::size_t false_alarms = 0;
  std::size_t independent_alarms = 0;
  std::vector<std::string> alarms;
  for (const auto i : pairs) {
    const auto base = simulated_run(aa_server(i, 0), 2 * i);
    const auto cand = simulated_run(aa_server(i, 1), 2 * i + 1);
    independent_alarms += independent_method_calls_p99(base, cand);
    const auto c = compare(base, cand);
    EXPECT_EQ(c.doc["workload"]["same"], true);
    if (any_regression(c.doc)) {
      ++false_alarms;
      for (const auto& r : c.doc["rows"]) {
        if (r["verdict"] == "regression") alarms.push_back(fmt::format("pair {}: {}", i, r.dump()));
      }
    }
  }
  RecordProperty("false_alarm_pairs", static_cast<int>(false_alarms));
  std::printf("A/A: a regression called in %zu of %zu pairs (at p99 by independent samples: %zu)\n",
              false_alarms, pairs.size(), independent_alarms);
  // Over the 200 pairs of make test-full (13 of 200 when measured); too few stalling pairs
  // run in make test to show it.
  if (pairs.size() >= 200) {
    EXPECT_GT(static_cast<double>(independent_alarms), 0.05 * static_cast<double>(pairs.size()))
        << "these pairs no longer show what a method assuming independence gets wrong";
  }
  EXPECT_LE(static_cast<double>(false_alarms), 0.05 * static_cast<double>(pairs.size()))
      << fmt::format("{}", fmt::join(alarms, "\n"));
}

// The true change at a percentile between two exponential service times.
double exponential_change(nanoseconds mean_base, nanoseconds mean_cand, double percentile) {
  const double q = -std::log(1 - percentile / 100);
  return static_cast<double>((mean_cand - mean_base).count()) * q;
}

TEST(sim_compare, the_interval_covers_the_true_change) {
  const auto pairs = pairs_to_run(quick_coverage_pairs);
  const nanoseconds base_mean = milliseconds(2);
  const nanoseconds cand_mean = microseconds(2200);
  std::map<std::string, std::size_t> covered;
  for (const auto i : pairs) {
    const auto c = compare(simulated_run(exponential(base_mean), 5000 + 2 * i),
                           simulated_run(exponential(cand_mean), 5001 + 2 * i));
    for (const auto& [metric, p] : {std::pair{"p50", 50.0}, std::pair{"p99", 99.0}}) {
      const json* r = row_of(c.doc, metric);
      ASSERT_NE(r, nullptr);
      ASSERT_TRUE((*r)["ci95"].is_array()) << r->dump();
      const double truth = exponential_change(base_mean, cand_mean, p);
      covered[metric] +=
          (*r)["ci95"][0].get<double>() <= truth && truth <= (*r)["ci95"][1].get<double>();
    }
  }
  // 93% of the 200 pairs of make test-full, as claimed; over make test's 40 pairs, a coverage
  // clearly below the nominal 95% (2.33 binomial standard deviations, one-sided 1%).
  const double n_pairs = static_cast<double>(pairs.size());
  const double at_least = pairs.size() >= 200
                              ? 0.93 * n_pairs
                              : 0.95 * n_pairs - 2.33 * std::sqrt(n_pairs * 0.95 * 0.05);
  for (const auto& [metric, n] : covered) {
    std::printf("coverage at %s: %zu of %zu pairs\n", metric.c_str(), n, pairs.size());
    EXPECT_GE(static_cast<double>(n), at_least) << metric;
  }
}

TEST(sim_compare, a_service_time_20_percent_slower_is_a_regression_at_p50) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("a power; the slower name and step cases call regressions too");
  // 10 in make test, the claim's 20 under make test-full; 1 under a sanitizer.
  const std::uint64_t ab_pairs = std::min<std::uint64_t>(pairs_to_run(quick_ab_pairs).size(), 20);
  int regressions = 0;
  for (std::uint64_t i = 1; i <= ab_pairs; ++i) {
    const auto c =
        compare(simulated_run(exponential(milliseconds(2)), 9000 + 2 * i, "300", "20s"),
                simulated_run(exponential(microseconds(2400)), 9001 + 2 * i, "300", "20s"));
    const json& p50 = *row_of(c.doc, "p50");
    regressions += p50["verdict"] == "regression";
    if (p50["verdict"] != "regression")
      std::printf("pair %zu: %s\n", static_cast<std::size_t>(i), p50.dump().c_str());
    EXPECT_EQ(c.exit_code, any_regression(c.doc) ? 3 : 0);
  }
  EXPECT_GE(regressions, static_cast<int>(ab_pairs - ab_pairs / 20));  // 19 of 20, 10 of 10
}

// A stall as serve's --stall 300ms/2s makes it: the last 300 ms of every 2 s. (A single stall
// in a run is not enough evidence: resampling the run's seconds leaves its second out of about a
// third of the resamples, so the interval of the tail's change reaches down to no change.)
TEST(sim_compare, a_300ms_stall_in_the_candidate_is_a_regression_at_p99) {
  server_script stalling = exponential(milliseconds(2));
  for (int period = 0; period < 5; ++period)
    stalling.stalls.push_back(
        {milliseconds(period * 2000 + 1700), milliseconds(period * 2000 + 2000)});
  const auto c =
      compare(simulated_run(exponential(milliseconds(2)), 11), simulated_run(stalling, 12));
  EXPECT_EQ((*row_of(c.doc, "p99"))["verdict"], "regression") << c.doc["rows"].dump(1);
  EXPECT_EQ(c.exit_code, 3);
  EXPECT_EQ(c.doc["verdict"]["result"], "regression");
}

TEST(sim_compare, thresholds_decide_what_counts) {
  const auto base = simulated_run(exponential(milliseconds(2)), 21);
  const auto cand = simulated_run(exponential(microseconds(2400)), 22);
  report::compare_settings loose;
  loose.thresholds = report::parse_max_regression("p50:+50%,p90:+50%,p99:+50%,p99.9:+50%");
  const auto c = compare(base, cand, loose);
  EXPECT_EQ(c.exit_code, 0) << c.doc["rows"].dump(1);
  EXPECT_EQ((*row_of(c.doc, "p50"))["threshold"]["relative"], 0.5);
  report::compare_settings absolute;
  absolute.thresholds = report::parse_max_regression("p50:+100us");
  const auto d = compare(base, cand, absolute);
  EXPECT_EQ((*row_of(d.doc, "p50"))["verdict"], "regression");
  EXPECT_EQ((*row_of(d.doc, "p50"))["threshold_value"], 100000.0);
}

TEST(sim_compare, an_invalid_run_is_named_and_never_regresses) {
  surroundings paused;
  paused.server = exponential(microseconds(2400));
  paused.pauses = {{0, milliseconds(3000), milliseconds(300)}};
  const auto base = simulated_run(exponential(milliseconds(2)), 31);
  const auto cand = run_cli({"-R", "200", "-d", "10s", "--arrival", "poisson", "--seed", "32", "-t",
                             "1", "-c", "20", "http://127.0.0.1:8080/"},
                            paused);
  ASSERT_EQ(cand.exit_code, 4);
  const auto c = compare(base, cand);
  EXPECT_EQ(c.exit_code, 4);
  EXPECT_EQ(c.doc["verdict"]["result"], "invalid");
  EXPECT_EQ(c.doc["candidate"]["valid"], false);
  EXPECT_FALSE(c.doc["candidate"]["invalid_reasons"].empty());
  EXPECT_FALSE(any_regression(c.doc));
}

TEST(sim_compare, different_workloads_are_refused_unless_allowed) {
  const auto base = simulated_run(exponential(milliseconds(2)), 41);
  const auto cand =
      simulated_run(exponential(milliseconds(2)), 42, "200", "10s", {"--timeout", "2s"});
  try {
    compare(base, cand);
    ADD_FAILURE() << "different timeouts were compared";
  } catch (const report::compare_refused& e) {
    EXPECT_NE(std::string(e.what()).find("timeout \"2s\" vs \"10s\""), std::string::npos)
        << e.what();
  }
  report::compare_settings allow;
  allow.allow_different = true;
  const auto c = compare(base, cand, allow);
  EXPECT_EQ(c.doc["workload"]["same"], false);
  ASSERT_EQ(c.doc["workload"]["differences"].size(), 1u);
  EXPECT_EQ(c.doc["workload"]["differences"][0]["field"], "timeout");
  EXPECT_EQ(c.doc["workload"]["varied"][0]["field"], "seed");
}

TEST(sim_compare, a_short_run_is_inconclusive_and_says_how_long_would_settle_it) {
  const auto base = simulated_run(exponential(milliseconds(2)), 51, "300", "5s");
  const auto cand = simulated_run(exponential(microseconds(2100)), 52, "300", "5s");
  const auto c = compare(base, cand);
  const json& p50 = *row_of(c.doc, "p50");
  EXPECT_EQ(p50["verdict"], "inconclusive") << p50.dump();
  EXPECT_TRUE(p50["settle_window_ns"].is_number()) << p50.dump();
  EXPECT_GT(p50["settle_window_ns"].get<double>(), 5e9);
  EXPECT_EQ(c.exit_code, 0);
  report::compare_settings strict;
  strict.inconclusive_fails = true;
  EXPECT_EQ(compare(base, cand, strict).exit_code, 3);
}

// A mix of `names` requests, n0 .. n{names-1} at /n0 ..., drawn with equal weights.
std::string mix_of(const scratch_dir& dir, int names) {
  std::string text = "requests:\n";
  for (int i = 0; i < names; ++i) text += fmt::format("  - {{name: n{0}, path: /n{0}}}\n", i);
  return dir.write("mix.yaml", text);
}

std::vector<std::string> rows_called(const json& doc, const std::string& verdict) {
  std::vector<std::string> out;
  for (const auto& r : doc["rows"]) {
    if (r["verdict"] == verdict)
      out.push_back(r["name"].get<std::string>() + ":" + r["metric"].get<std::string>());
  }
  return out;
}

bool called_on(const json& doc, const std::string& name, const std::string& verdict) {
  for (const auto& r : doc["rows"]) {
    if (r["name"] == name && r["verdict"] == verdict) return true;
  }
  return false;
}

// One name of three made 50% slower in the candidate (its service time; the server is the same
// otherwise): a regression on that name's rows, on no other name's.
TEST(sim_compare, a_slower_name_is_a_regression_on_its_rows_alone) {
  const scratch_dir dir("compare-names");
  const std::string mix = mix_of(dir, 3);
  server_script slower = exponential(milliseconds(2));
  slower.slower_paths = {{"/n1", 1.5}};
  const auto c =
      compare(simulated_run(exponential(milliseconds(2)), 61, "300", "10s", {"--requests", mix}),
              simulated_run(slower, 62, "300", "10s", {"--requests", mix}));
  EXPECT_EQ((*row_of(c.doc, "p50", "n1"))["verdict"], "regression") << c.doc["rows"].dump(1);
  for (const char* other : {"n0", "n2"}) {
    ASSERT_NE(row_of(c.doc, "p50", other), nullptr) << other;
    EXPECT_FALSE(called_on(c.doc, other, "regression"))
        << other << ": " << fmt::format("{}", fmt::join(rows_called(c.doc, "regression"), ", "));
  }
  EXPECT_EQ(c.exit_code, 3);
}

// A scenario whose users load /home, then /item: the candidate's /item twice as slow. The item
// step's rows and the session's (home + item, no think time: about a third slower) are
// regressions; home's are not. (With /item 50% slower the session's p50, 20% slower, had a
// one-sided p of 0.005 alone and 0.06 after Holm over the 15 rows: inconclusive.)
TEST(sim_compare, a_slower_step_is_a_regression_on_its_rows_and_its_sessions) {
  const scratch_dir dir("compare-hybrid");
  const std::string scenario = dir.write("shop.yaml", R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 10s, arrival_rate: 150}
scenarios:
  - name: shop
    steps:
      - {name: home, path: /home}
      - {name: item, path: /item}
)");
  const auto hybrid_run = [&](const server_script& server, std::uint64_t seed) {
    surroundings around;
    around.server = server;
    around.seed = seed;
    return run_cli({"--scenario", scenario, "-t", "1", "-c", "20", "--seed", std::to_string(seed)},
                   around);
  };
  server_script slower = exponential(milliseconds(2));
  slower.slower_paths = {{"/item", 2}};
  const auto c = compare(hybrid_run(exponential(milliseconds(2)), 71), hybrid_run(slower, 72));
  const auto regressions = fmt::format("{}", fmt::join(rows_called(c.doc, "regression"), ", "));
  ASSERT_NE(row_of(c.doc, "p50", "shop.session"), nullptr) << c.doc["rows"].dump(1);
  EXPECT_EQ((*row_of(c.doc, "p50", "shop.item"))["verdict"], "regression") << regressions;
  EXPECT_EQ((*row_of(c.doc, "p50", "shop.session"))["verdict"], "regression")
      << regressions << "\n"
      << row_of(c.doc, "p50", "shop.session")->dump();
  EXPECT_FALSE(called_on(c.doc, "shop.home", "regression")) << regressions;
  EXPECT_EQ(c.exit_code, 3);
}

// Holm over many rows: A/A pairs with a mix of eight names (45 rows a pair), judged against no
// margin at all (every threshold +0%), so that each row alone calls a false regression in about
// 5% of the pairs and a comparison that took each row on its own would call one in most. Holm
// keeps the share of pairs with any regression at 5%.
TEST(sim_compare, holm_keeps_the_false_alarms_of_many_names_at_five_percent) {
  const scratch_dir dir("compare-holm");
  const std::string mix = mix_of(dir, 8);
  const auto pairs = pairs_to_run(quick_holm_pairs);
  report::compare_settings no_margin;
  no_margin.thresholds =
      report::parse_max_regression("p50:+0%,p90:+0%,p99:+0%,p99.9:+0%,errors:+0%");
  std::size_t holm_alarms = 0;
  std::size_t row_alone_alarms = 0;
  for (const auto i : pairs) {
    const auto c = compare(simulated_run(exponential(milliseconds(2)), 20000 + 2 * i, "400", "5s",
                                         {"--requests", mix}),
                           simulated_run(exponential(milliseconds(2)), 20001 + 2 * i, "400", "5s",
                                         {"--requests", mix}),
                           no_margin);
    ASSERT_EQ(c.doc["rows"].size(), 45u);
    holm_alarms += any_regression(c.doc);
    bool alone = false;
    for (const auto& r : c.doc["rows"]) alone = alone || r["p_regression"].get<double>() <= 0.05;
    row_alone_alarms += alone;
  }
  const double n = static_cast<double>(pairs.size());
  std::printf(
      "A/A with 8 names, no margin: a regression in %zu of %zu pairs with Holm, %zu row by row\n",
      holm_alarms, pairs.size(), row_alone_alarms);
  // 5% of the 200 pairs of make test-full; over make test's few, a share clearly above 5% (2.33
  // binomial standard deviations, one-sided 1%), as the coverage case judges its.
  const double at_most =
      pairs.size() >= 200 ? 0.05 * n : 0.05 * n + 2.33 * std::sqrt(n * 0.05 * 0.95);
  EXPECT_LE(static_cast<double>(holm_alarms), at_most);
  // The pairs are ones on which taking each row alone fails (not shown by the pair or two a
  // sanitized build runs).
  if (pairs.size() >= quick_holm_pairs) {
    EXPECT_GT(static_cast<double>(row_alone_alarms), at_most);
  }
}

}  // namespace
}  // namespace punctual::sim::compare_cases
