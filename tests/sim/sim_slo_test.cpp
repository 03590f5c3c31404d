// The SLO gate in the simulation (docs/design.md, "Exit codes, in order of precedence"): 3 when
// service time alone fails an SLO, else 4 for an invalid run, else 3 for a failing SLO, else 0.
// Also what an SLO is gated on: the point estimate or its upper bound, batch means across a stall,
// the closed model's refusal and its two ways to gate; and expressions refused before anything
// is sent. Each SLO figure is held to the run's own requests.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "analysis/confidence.hpp"
#include "cli/command.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::slo_cases {
namespace {

using json = nlohmann::ordered_json;
using record::outcome;
using std::chrono::milliseconds;

// The one result of `expression`; every result carries every field.
const json& slo_result(const json& doc, const std::string& expression) {
  static const json none;
  const json* found = nullptr;
  for (const auto& r : doc["slo"]["results"]) {
    for (const char* field : {"expression", "figure", "bound", "threshold", "pass",
                              "service_time_fails", "service_figure"}) {
      EXPECT_TRUE(r.contains(field)) << field << " missing from " << r.dump();
    }
    if (r["expression"] == expression) {
      EXPECT_EQ(found, nullptr) << expression << " listed twice";
      found = &r;
    }
  }
  if (!found) ADD_FAILURE() << "no result for " << expression << " in " << doc["slo"].dump();
  return found ? *found : none;
}

bool valid(const json& doc) {
  return doc["validity"]["valid"].get<bool>();
}

double point(const simulation& sim, double p, decltype(response_of) view = response_of) {
  return static_cast<double>(truth(sim, view).value_at_percentile(p));
}

// 600 samples leave p99.99 unresolved (invalid), but a 200 us server passes p99.99<1s: no
// verdict on response time can be given, so 4.
TEST(sim_slo, exit_4_when_an_slo_passes_on_an_invalid_run) {
  const cli_result r =
      run_judged(command({"-t", "1", "-c", "4", "-R", "200", "-d", "3s", "--slo", "p99.99<1s"}));
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(valid(r.doc));
  const json& s = slo_result(r.doc, "p99.99<1s");
  EXPECT_TRUE(s["pass"].get<bool>());
  EXPECT_FALSE(s["service_time_fails"].get<bool>());
  EXPECT_EQ(s["figure"], point(*r.sim, 99.99));
}

// -c 1 for a 5 ms server at 1000 req/s: invalid (the connection cap), and requests queue.
surroundings five_ms_server() {
  surroundings around;
  around.server.service = {service_time::kind::constant, milliseconds(5)};
  return around;
}

std::vector<std::string> one_connection(const std::string& slo) {
  return command(
      {"-t", "1", "-c", "1", "-R", "1000", "-d", "1500ms", "--timeout", "500ms", "--slo", slo});
}

// The server fails p50<=1ms before any generator delay: that verdict stands, 3 over 4.
TEST(sim_slo, exit_3_over_4_when_service_time_alone_fails) {
  const cli_result r = run_judged(one_connection("p50<=1ms"), five_ms_server());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(valid(r.doc));
  const json& s = slo_result(r.doc, "p50<=1ms");
  EXPECT_FALSE(s["pass"].get<bool>());
  EXPECT_TRUE(s["service_time_fails"].get<bool>());
  EXPECT_EQ(s["service_figure"], point(*r.sim, 50, service_of));
  EXPECT_GT(s["service_figure"].get<double>(), 5e6);
}

// p99<=50ms fails on response time (queueing behind -c 1) but the 5 ms server passes it on
// service time: the invalid run cannot say whose fault it is, so 4.
TEST(sim_slo, exit_4_when_only_response_time_fails_an_invalid_run) {
  const cli_result r = run_judged(one_connection("p99<=50ms"), five_ms_server());
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(valid(r.doc));
  const json& s = slo_result(r.doc, "p99<=50ms");
  EXPECT_FALSE(s["pass"].get<bool>());
  EXPECT_FALSE(s["service_time_fails"].get<bool>());
  EXPECT_EQ(s["figure"], point(*r.sim, 99));
  EXPECT_GT(s["figure"].get<double>(), 50e6);
  EXPECT_EQ(s["service_figure"], point(*r.sim, 99, service_of));
}

surroundings exponential_10ms_server() {
  surroundings around;
  around.server.service = {service_time::kind::exponential, milliseconds(10)};
  around.seed = 7;
  return around;
}

TEST(sim_slo, exit_3_on_a_valid_run_whose_service_time_fails_too) {
  const cli_result r =
      run_judged(command({"-t", "1", "-c", "32", "-R", "200", "-d", "1s", "--slo", "p50<=1us"}),
                 exponential_10ms_server());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(valid(r.doc)) << r.text;
  const json& s = slo_result(r.doc, "p50<=1us");
  EXPECT_FALSE(s["pass"].get<bool>());
  EXPECT_TRUE(s["service_time_fails"].get<bool>());
  EXPECT_EQ(s["figure"], point(*r.sim, 50));
  EXPECT_EQ(s["service_figure"], point(*r.sim, 50, service_of));
}

// The server answers nothing from 3 s to 4 s. With -c 4 the requests due then queue in the
// generator: response time sees the whole second, service time only the 4 stalled requests' of
// 1,400.
cli_result stall_run() {
  surroundings around;
  around.server.stalls = {{milliseconds(3000), milliseconds(4000)}};
  return run_judged(command({"-t", "1", "-c", "4", "-R", "200", "-d", "7s", "--slo", "p99<=100ms"}),
                    around);
}

TEST(sim_slo, a_stall_fails_response_time_on_a_valid_run_with_exit_3) {
  const cli_result r = stall_run();
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(valid(r.doc)) << r.text;
  EXPECT_FALSE(r.doc["slo"]["refused"].get<bool>());
  const json& s = slo_result(r.doc, "p99<=100ms");
  EXPECT_EQ(s["bound"], "point");
  EXPECT_FALSE(s["pass"].get<bool>());
  EXPECT_EQ(s["figure"], point(*r.sim, 99));
  EXPECT_GT(s["figure"].get<double>(), 100e6);
  EXPECT_FALSE(s["service_time_fails"].get<bool>());
  EXPECT_EQ(s["service_figure"], point(*r.sim, 99, service_of));
  EXPECT_LE(s["service_figure"].get<double>(), 100e6);
  std::size_t stalled = 0;
  for (const auto& f : r.sim->finals())
    stalled += f.outcome == outcome::ok && f.at - f.t.sent > milliseconds(100);
  EXPECT_EQ(stalled, 4u);
}

// A stall is the server's doing: its queue drains at the usual speed, so -c 4 still carries
// the rate at the steady service time.
TEST(sim_slo, a_server_stall_keeps_the_connection_cap) {
  const cli_result r = stall_run();
  int seen = 0;
  for (const auto& c : r.doc["validity"]["checks"]) {
    if (c["name"] != "connection_cap") continue;
    ++seen;
    EXPECT_TRUE(c["pass"].get<bool>()) << c.dump();
    EXPECT_EQ(c["figure"], 4.0);
    // No second's median service time was a stall's: the mean is every answer's.
    EXPECT_NEAR(c["threshold"].get<double>(), 1.5 * 200 * truth(*r.sim, service_of).mean() / 1e9,
                1e-9);
  }
  EXPECT_EQ(seen, 1);
}

// The stall fills one second with huge values: the per-second values of p90 or p99 vary far
// more than independent samples would, so batch means gives the wider interval, and is used.
TEST(sim_slo, a_stall_widens_the_interval_to_batch_means) {
  const cli_result r = stall_run();
  const hdr::histogram h = truth(*r.sim, response_of);
  const json& rt = r.doc["latency"]["response_time"];
  int batch = 0;
  for (const char* p : {"90", "99"}) {
    const auto lo = rt["percentiles_ci_ns"][p][0].get<std::int64_t>();
    const auto hi = rt["percentiles_ci_ns"][p][1].get<std::int64_t>();
    EXPECT_LE(lo, rt["percentiles_ns"][p].get<std::int64_t>()) << p;
    EXPECT_LE(rt["percentiles_ns"][p].get<std::int64_t>(), hi) << p;
    EXPECT_GT(hi, lo) << p;
    const auto binomial = analysis::binomial_interval(h, std::stod(p));
    ASSERT_TRUE(binomial);
    if (rt["percentiles_ci_method"][p] == "batch-means") {
      ++batch;
      EXPECT_GT(hi - lo, binomial->width()) << p;
    } else {
      EXPECT_EQ(rt["percentiles_ci_method"][p], "binomial") << p;
      EXPECT_EQ(lo, binomial->lo) << p;
      EXPECT_EQ(hi, binomial->hi) << p;
    }
  }
  EXPECT_GT(batch, 0) << rt["percentiles_ci_method"].dump();
  // Each batch interval is printed, or called unresolved when its lower end fell below zero.
  const auto& unresolved = rt["percentiles_ci_unresolved"];
  for (const auto& p : unresolved) {
    EXPECT_EQ(rt["percentiles_ci_method"][p.get<std::string>()], "batch-means") << p;
    EXPECT_EQ(rt["percentiles_ci_ns"][p.get<std::string>()][0], 0) << p;
  }
  EXPECT_EQ(r.text.find("(batch") != std::string::npos,
            batch > static_cast<int>(unresolved.size()));
  EXPECT_EQ(r.text.find("unresolved: the run's seconds disagree; run longer") != std::string::npos,
            !unresolved.empty())
      << r.text;
}

std::vector<std::string> bound_run(std::initializer_list<std::string> gate) {
  std::vector<std::string> args{"-t", "1", "-c", "32", "-R", "500", "-d", "3s"};
  args.insert(args.end(), gate);
  args.emplace_back("http://127.0.0.1:8080/");
  return args;
}

// A threshold between p99 and its upper 95% bound: the point estimate passes it, the upper
// bound does not. The same seed gives the same run each time, so the three runs agree.
TEST(sim_slo, the_upper_bound_fails_where_the_point_estimate_passes) {
  const cli_result first = run_judged(bound_run({"--slo", "p99<=1s"}), exponential_10ms_server());
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_TRUE(valid(first.doc)) << first.text;
  const json& loose = slo_result(first.doc, "p99<=1s");
  EXPECT_TRUE(loose["pass"].get<bool>());
  EXPECT_EQ(loose["bound"], "point");
  const hdr::histogram h = truth(*first.sim, response_of);
  const auto p99 = h.value_at_percentile(99);
  const auto upper =
      first.doc["latency"]["response_time"]["percentiles_ci_ns"]["99"][1].get<std::int64_t>();
  ASSERT_GE(upper - p99, 1'000'000) << "p99 and its upper bound are too close to split";
  const std::string expression = "p99<=" + std::to_string((p99 + upper) / 2 / 1000) + "us";

  const cli_result strict = run_judged(bound_run({"--slo-bound", "upper", "--slo", expression}),
                                       exponential_10ms_server());
  EXPECT_EQ(strict.exit_code, 3);
  EXPECT_TRUE(valid(strict.doc));
  const json& s = slo_result(strict.doc, expression);
  EXPECT_EQ(s["bound"], "upper");
  EXPECT_EQ(s["figure"], upper);
  EXPECT_FALSE(s["pass"].get<bool>());

  const cli_result lenient = run_judged(bound_run({"--slo-bound", "point", "--slo", expression}),
                                        exponential_10ms_server());
  EXPECT_EQ(lenient.exit_code, 0);
  const json& l = slo_result(lenient.doc, expression);
  EXPECT_EQ(l["bound"], "point");
  EXPECT_EQ(l["figure"], p99);
  EXPECT_TRUE(l["pass"].get<bool>());
}

cli_result closed_run(std::initializer_list<std::string> extra) {
  surroundings around;
  around.server.service = {service_time::kind::constant, milliseconds(1)};
  std::vector<std::string> args{"-t", "1",       "-c",     "2",     "-d",
                                "1s", "--model", "closed", "--slo", "p99<1us"};
  args.insert(args.end(), extra);
  args.emplace_back("http://127.0.0.1:8080/");
  return run_judged(args, around);
}

// A closed run's latencies hide the waits its users never made: without a correction the gate
// refuses, so a failing SLO cannot fail the run.
TEST(sim_slo, the_closed_model_refuses_to_gate) {
  const cli_result r = closed_run({});
  EXPECT_EQ(r.exit_code, 0);
  const json& slo = r.doc["slo"];
  EXPECT_TRUE(slo["refused"].get<bool>());
  const auto refusal = slo["refusal"].get<std::string>();
  EXPECT_FALSE(refusal.empty());
  EXPECT_EQ(slo["results"], json::array());
  EXPECT_EQ(slo["basis"], "none");
  EXPECT_NE(r.text.find(refusal), std::string::npos);
}

// With --expected-interval (no answer took longer, so nothing is added) or --allow-uncorrected
// the gate judges the observed latencies, and says on what.
void expect_closed_gate(const cli_result& r, const std::string& basis) {
  EXPECT_EQ(r.exit_code, 3) << basis;
  EXPECT_FALSE(r.doc["slo"]["refused"].get<bool>());
  EXPECT_EQ(r.doc["slo"]["basis"], basis);
  const json& s = slo_result(r.doc, "p99<1us");
  EXPECT_FALSE(s["pass"].get<bool>());
  EXPECT_EQ(s["figure"], point(*r.sim, 99)) << basis;
  const std::string view =
      basis == "reconstructed" ? "reconstructed response time" : "latency (uncorrected)";
  EXPECT_NE(r.text.find("slo (on " + view + "):"), std::string::npos) << r.text;
}

TEST(sim_slo, the_closed_model_gates_when_corrected_or_allowed) {
  expect_closed_gate(closed_run({"--expected-interval", "10ms"}), "reconstructed");
  expect_closed_gate(closed_run({"--allow-uncorrected"}), "uncorrected");
}

// Refused as the command line is read (exit 2), with one line that names the expression: no
// run is built, so nothing is sent.
TEST(sim_slo, bad_expressions_are_refused_before_anything_is_sent) {
  for (const char* expression : {"p99<=", "p101<1s", "latency<1s", "p99<=200xs", "errors<=abc",
                                 "p99~1s", "rate>=150%", "p0<1s"}) {
    try {
      run_cli(command({"-d", "1s", "-R", "10", "--slo", expression}));
      ADD_FAILURE() << expression << " was accepted";
    } catch (const cli::usage_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(expression), std::string::npos) << what;
    }
  }
  EXPECT_THROW(
      run_cli(command({"-d", "1s", "-R", "10", "--slo-bound", "sideways", "--slo", "p99<1s"})),
      cli::usage_error);
}

// One --slo may list several SLOs joined by commas: each is judged as if given alone.
TEST(sim_slo, a_comma_list_is_several_slos) {
  const cli_result r = run_judged(
      command({"-t", "1", "-c", "4", "-R", "200", "-d", "3s", "--slo", "p50<1s,errors<=1%"}));
  EXPECT_EQ(r.doc["slo"]["results"].size(), 2u);
  EXPECT_TRUE(slo_result(r.doc, "p50<1s")["pass"].get<bool>());
  EXPECT_TRUE(slo_result(r.doc, "errors<=1%")["pass"].get<bool>());
}

}  // namespace
}  // namespace punctual::sim::slo_cases
