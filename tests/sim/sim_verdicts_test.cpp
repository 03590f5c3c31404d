// Run validity in the simulation (docs/design.md, "Validity"): a healthy run passes every gating
// check; a generator starved of its CPU or stopped misses its schedule, by exactly the send lag
// its pauses caused; a drop, too few connections or too few samples beyond a gated percentile
// make a run invalid; thinly sampled percentiles and send gaps that are not Poisson's only warn.
// Each check's figure is held to what the run's own requests say it is.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/confidence.hpp"
#include "analysis/send_gaps.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_seeds.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::verdicts_cases {
namespace {

using json = nlohmann::ordered_json;
using record::outcome;
using std::chrono::milliseconds;

const json& check_named(const json& doc, const std::string& name) {
  static const json none;
  for (const auto& c : doc["validity"]["checks"]) {
    if (c["name"] == name) return c;
  }
  ADD_FAILURE() << "no check " << name;
  return none;
}

bool has_check(const json& doc, const std::string& name) {
  for (const auto& c : doc["validity"]["checks"]) {
    if (c["name"] == name) return true;
  }
  return false;
}

// What the text report prints before its model line: an invalid run's reasons.
std::string reasons_of(const std::string& text) {
  const std::string all = "\n" + text;
  return all.substr(0, all.find("\nmodel:"));
}

bool holds(double figure, const std::string& relation, double threshold) {
  if (relation == "<=") return figure <= threshold;
  if (relation == ">=") return figure >= threshold;
  ADD_FAILURE() << "relation " << relation;
  return false;
}

// Every check's verdict follows from its own figures; the send-lag checks gate exactly at the
// gated percentiles; `valid` is "every gating check passed"; and an invalid run prints its
// reasons, and only them, before the rest of the text report.
void expect_consistent(const cli_result& r, const std::set<std::string>& gated = {"p99"}) {
  const json& doc = r.doc;
  std::set<std::string> names;
  for (const auto& c : doc["validity"]["checks"]) {
    const auto name = c["name"].get<std::string>();
    EXPECT_TRUE(names.insert(name).second) << name << " listed twice";
    const bool pass = c["pass"].get<bool>();
    // The samples checks compare with a slack (n x 0.01 is inexact in binary): their figures
    // are held to the truth in the cases instead.
    if (name.rfind("samples_beyond_", 0) != 0) {
      EXPECT_EQ(pass, holds(c["figure"], c["relation"], c["threshold"])) << c.dump();
    }
    EXPECT_EQ(pass, c["note"].get<std::string>().empty()) << c.dump();
    if (name.rfind("send_lag_", 0) == 0) {
      EXPECT_EQ(c["level"], gated.count(name.substr(9)) ? "gating" : "warning") << name;
    }
  }
  for (const auto& p : gated) EXPECT_TRUE(names.count("send_lag_" + p)) << p;
  for (const char* g : {"dropped", "schedule_kept", "connection_cap"}) {
    EXPECT_EQ(check_named(doc, g)["level"], "gating") << g;
  }
  const auto failed = failed_gating(doc);
  EXPECT_EQ(doc["validity"]["valid"].get<bool>(), failed.empty());
  const std::string head = reasons_of(r.text);
  EXPECT_EQ(r.text.rfind("INVALID: no verdict", 0) == 0, !failed.empty()) << head;
  for (const auto& c : doc["validity"]["checks"]) {
    const std::string note = c["note"].get<std::string>();
    const bool reason = !note.empty() && head.find("\n  - ") != std::string::npos &&
                        head.find(": " + note + "\n") != std::string::npos;
    EXPECT_EQ(reason, failed.count(c["name"].get<std::string>()) == 1) << c["name"] << " in\n"
                                                                       << head;
  }
}

bool measured(const simulation& sim, const final_outcome& f) {
  return f.t.accounted_at() >= sim.result().measure_start;
}

std::optional<std::int64_t> lag_of(const final_outcome& f) {
  if (f.t.dispatched.count() == 0) return std::nullopt;
  return (f.t.dispatched - f.t.due_time()).count();
}

// When a worker frozen by `pauses` (offsets from the schedule's start) can next run at `at`.
nanoseconds resumed(const std::vector<pause>& pauses, nanoseconds at) {
  for (bool moved = true; moved;) {
    moved = false;
    for (const auto& p : pauses) {
      if (at >= p.from && at < p.from + p.length) {
        at = p.from + p.length;
        moved = true;
      }
    }
  }
  return at;
}

// The generator got to every request the instant it was due, or the instant its pause ended.
void expect_dispatched_on_time(const simulation& sim, const std::vector<pause>& pauses) {
  const nanoseconds start = sim.result().start.mono;
  std::size_t wrong = 0;
  for (const auto& f : sim.finals()) {
    if (f.t.dispatched.count() == 0 || f.t.attempt != 0) continue;
    const nanoseconds expected = start + resumed(pauses, f.t.intended - start);
    if (f.t.dispatched != expected && ++wrong <= 5) {
      ADD_FAILURE() << "request " << f.t.index << " due at " << (f.t.intended - start).count()
                    << " ns was got to at " << (f.t.dispatched - start).count() << " ns, not "
                    << (expected - start).count();
    }
  }
  EXPECT_EQ(wrong, 0u);
}

// Per second of the window, the first attempts the generator got to more than 10 ms after the
// second they were intended in had ended.
std::vector<std::uint64_t> late_by_second(const simulation& sim, std::size_t seconds) {
  std::vector<std::uint64_t> late(seconds, 0);
  const nanoseconds from = sim.result().measure_start;
  for (const auto& f : sim.finals()) {
    if (!measured(sim, f) || f.t.attempt != 0 || f.t.dispatched.count() == 0) continue;
    const auto s = static_cast<std::size_t>((f.t.intended - from) / std::chrono::seconds(1));
    if (s < seconds && f.t.dispatched > from + std::chrono::seconds(s + 1) + milliseconds(10)) {
      ++late[s];
    }
  }
  return late;
}

std::vector<std::uint64_t> reported_late(const json& doc, std::size_t seconds) {
  std::vector<std::uint64_t> out;
  for (std::size_t s = 0; s < seconds; ++s) out.push_back(doc["schedule"]["per_second_late"][s]);
  return out;
}

// -R600 for 2 s against a server of exponential service times (a mean of 1 ms): 1,200 samples,
// so p99 has 12 beyond it but p99.9 only 1.2. No host noise: the generator is never late.
cli_result healthy_run() {
  surroundings around;
  around.server.service = {service_time::kind::exponential, milliseconds(1)};
  return run_judged(command({"-t", "1", "-c", "4", "-R", "600", "-d", "2s"}), around);
}

TEST(sim_verdicts, a_healthy_run_passes_every_gating_check) {
  const cli_result r = healthy_run();
  const simulation& sim = *r.sim;
  EXPECT_EQ(r.exit_code, 0);
  expect_consistent(r);
  EXPECT_EQ(count_of(sim, outcome::ok), 1200u);
  EXPECT_EQ(r.doc["status_counts"]["200"], 1200);
  for (const auto& [kind, n] : r.doc["socket_errors"].items()) EXPECT_EQ(n, 0) << kind;
  expect_dispatched_on_time(sim, {});
  EXPECT_EQ(failed_gating(r.doc), std::set<std::string>{});
  EXPECT_EQ(check_named(r.doc, "send_lag_p99")["figure"], 0.0);
  EXPECT_EQ(check_named(r.doc, "send_lag_p99")["threshold"], 1e6);  // the floor: fast answers
  EXPECT_EQ(check_named(r.doc, "schedule_kept")["figure"], 0.0);
  EXPECT_EQ(check_named(r.doc, "dropped")["figure"], 0.0);
  const json& cap = check_named(r.doc, "connection_cap");
  EXPECT_EQ(cap["figure"], 4.0);
  // No interval is a stall's, so the steady mean is every service time's.
  const double mean = truth(sim, service_of).mean();
  EXPECT_NEAR(cap["threshold"].get<double>(), 1.5 * 600 * mean / 1e9, 1e-9);
  const std::pair<const char*, double> beyond[] = {
      {"50", 600}, {"75", 300}, {"90", 120}, {"99", 12}};
  for (const auto& [p, n] : beyond) {
    const json& c = check_named(r.doc, std::string("samples_beyond_p") + p);
    EXPECT_TRUE(c["pass"].get<bool>()) << c.dump();
    EXPECT_NEAR(c["figure"].get<double>(), n, 1e-9) << p;
  }
  EXPECT_TRUE(has_check(r.doc, "worker_cpu_0"));
  EXPECT_NE(r.text.find("\nvalidity: valid;"), std::string::npos);
  EXPECT_EQ(r.text.rfind("VALID · no SLO · exit 0\n", 0), 0u) << r.text;
}

TEST(sim_verdicts, a_thin_percentile_only_warns_with_the_duration_that_resolves_it) {
  const cli_result r = healthy_run();
  EXPECT_EQ(r.exit_code, 0);  // a warning never invalidates
  const json& c = check_named(r.doc, "samples_beyond_p99.9");
  EXPECT_EQ(c["level"], "warning");
  EXPECT_FALSE(c["pass"].get<bool>());
  EXPECT_NEAR(c["figure"].get<double>(), 1.2, 1e-9);
  // p99.99 is thin too, and the two share one note: 10 samples beyond p99.9 need 10,000
  // samples, 16.7 s at 600 req/s; beyond p99.99, 100,000 and 167 s.
  EXPECT_EQ(check_named(r.doc, "samples_beyond_p99.99")["note"], c["note"]);
  EXPECT_EQ(c["note"].get<std::string>(),
            "p99.9 has 1.2 and p99.99 has 0.12 samples beyond it, fewer than 10 each; runs of "
            "16.7s and 167s at the observed 600 req/s would resolve them");
  EXPECT_EQ(reasons_of(r.text).find(c["note"].get<std::string>()), std::string::npos);
  EXPECT_NE(r.text.find("  warn  too few samples: " + c["note"].get<std::string>()),
            std::string::npos)
      << r.text;
}

// Two seconds are too few intervals for batch means (5): every interval is the binomial one,
// read off the run's own response times.
TEST(sim_verdicts, a_short_healthy_run_has_binomial_intervals) {
  const cli_result r = healthy_run();
  const hdr::histogram h = truth(*r.sim, response_of);
  const json& rt = r.doc["latency"]["response_time"];
  for (const char* p : {"50", "75", "90", "99", "99.9", "99.99", "100"}) {
    const auto expected = analysis::binomial_interval(h, std::stod(p));
    ASSERT_TRUE(expected);
    EXPECT_EQ(rt["percentiles_ci_method"][p], "binomial") << p;
    EXPECT_EQ(rt["percentiles_ci_ns"][p][0], expected->lo) << p;
    EXPECT_EQ(rt["percentiles_ci_ns"][p][1], expected->hi) << p;
    EXPECT_EQ(rt["percentiles_ns"][p], h.value_at_percentile(std::stod(p))) << p;
    EXPECT_LE(rt["percentiles_ci_ns"][p][0], rt["percentiles_ns"][p]) << p;
    EXPECT_LE(rt["percentiles_ns"][p], rt["percentiles_ci_ns"][p][1]) << p;
  }
  EXPECT_GT(rt["percentiles_ci_ns"]["50"][1], rt["percentiles_ci_ns"]["50"][0]);
}

// A generator starved of its CPU runs in slivers: here 1 ms in every 10. Each request waits for
// the next sliver, at most 9 ms, so p99 is far behind its 1 ms allowance, while every second's
// requests still go out within the schedule check's 10 ms grace (the slivers straddle the ends
// of the seconds, so the last requests of each go out 4 ms after it).
TEST(sim_verdicts, a_starved_generator_fails_send_lag_at_p99) {
  surroundings around;
  for (int k = 0; k < 200; ++k) {
    around.pauses.push_back({0, milliseconds(10 * k + 5), milliseconds(9)});
  }
  const cli_result r = run_judged(
      command({"-t", "1", "-c", "20", "-R", "2000", "-d", "2s", "--timeout", "200ms"}), around);
  const simulation& sim = *r.sim;
  EXPECT_EQ(r.exit_code, 4);
  expect_consistent(r);
  expect_dispatched_on_time(sim, around.pauses);
  EXPECT_EQ(failed_gating(r.doc), std::set<std::string>{"send_lag_p99"});
  const json& lag = check_named(r.doc, "send_lag_p99");
  const auto lag_p99 = truth(sim, lag_of).value_at_percentile(99);
  EXPECT_EQ(lag["figure"], static_cast<double>(lag_p99));
  EXPECT_GT(lag_p99, 8'000'000);
  EXPECT_EQ(
      lag["threshold"],
      std::max(1e6, 0.1 * static_cast<double>(truth(sim, response_of).value_at_percentile(99))));
  EXPECT_NE(lag["note"].get<std::string>().find("behind its schedule"), std::string::npos)
      << lag["note"];
  EXPECT_EQ(late_by_second(sim, 2), (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(reported_late(r.doc, 2), (std::vector<std::uint64_t>{0, 0}));
}

// Stopped from 600 ms to 1200 ms: the 400 requests due in the rest of second 0 go out 200 ms
// after it ended, far more than 1% of it; those due in second 1 before the stop ended still go
// out within that second.
TEST(sim_verdicts, a_stopped_generator_misses_its_schedule) {
  surroundings around;
  around.pauses = {{0, milliseconds(600), milliseconds(600)}};
  const cli_result r =
      run_judged(command({"-t", "1", "-c", "4", "-R", "1000", "-d", "2s"}), around);
  const simulation& sim = *r.sim;
  EXPECT_EQ(r.exit_code, 4);
  expect_consistent(r);
  expect_dispatched_on_time(sim, around.pauses);
  EXPECT_EQ(failed_gating(r.doc), (std::set<std::string>{"schedule_kept", "send_lag_p99"}));
  EXPECT_EQ(late_by_second(sim, 2), (std::vector<std::uint64_t>{400, 0}));
  EXPECT_EQ(reported_late(r.doc, 2), (std::vector<std::uint64_t>{400, 0}));
  const json& c = check_named(r.doc, "schedule_kept");
  EXPECT_EQ(c["figure"], 1.0);
  EXPECT_NE(
      c["note"].get<std::string>().find("in 1 of 2 seconds; worst, second 0 of the window: 400 of "
                                        "1000 requests intended in it had not been sent 10ms after "
                                        "it ended (at most 10 allowed)"),
      std::string::npos)
      << c["note"];
}

// At its dispatch, how many requests held a connection and how many waited in the queue: those
// got to before it, not dropped, and not yet ended or (for the queue) given a connection.
std::pair<std::size_t, std::size_t> busy_and_queued(const simulation& sim, nanoseconds d) {
  std::size_t busy = 0, queued = 0;
  for (const auto& g : sim.finals()) {
    if (g.outcome == outcome::dropped || g.t.dispatched.count() == 0 || g.t.dispatched >= d ||
        g.at <= d) {
      continue;
    }
    if (g.t.assigned.count() != 0 && g.t.assigned <= d) {
      ++busy;
    } else {
      ++queued;
    }
  }
  return {busy, queued};
}

// A server stalled for the whole run: 4 requests hold the connections, 10 wait in the queue,
// and every request that finds both full is dropped. The deadline (502 ms, off the 5 ms grid of
// the schedule) frees a connection now and then, so drops and admissions alternate.
TEST(sim_verdicts, drops_make_the_run_invalid) {
  surroundings around;
  around.server.stalls = {{milliseconds(0), milliseconds(5000)}};
  const cli_result r = run_judged(command({"-t", "1", "-c", "4", "-R", "200", "-d", "1s",
                                           "--max-queue", "10", "--timeout", "502ms"}),
                                  around);
  const simulation& sim = *r.sim;
  EXPECT_EQ(r.exit_code, 4);
  expect_consistent(r);
  // 200 requests are too few for p99 as well, but with no SLO that only warns.
  EXPECT_EQ(failed_gating(r.doc), std::set<std::string>{"dropped"});
  EXPECT_EQ(check_named(r.doc, "samples_beyond_p99")["level"], "warning");
  std::uint64_t dropped = 0;
  for (const auto& f : sim.finals()) {
    const auto [busy, queued] = busy_and_queued(sim, f.t.dispatched);
    const bool full = busy == 4 && queued == 10;
    EXPECT_EQ(f.outcome == outcome::dropped, full)
        << "request " << f.t.index << " at " << (f.t.dispatched - sim.result().start.mono).count()
        << " ns found " << busy << " busy and " << queued << " queued";
    if (f.outcome == outcome::dropped) ++dropped;
  }
  EXPECT_GT(dropped, 100u);
  EXPECT_EQ(r.doc["outcomes"]["dropped"], dropped);
  EXPECT_EQ(check_named(r.doc, "dropped")["figure"], static_cast<double>(dropped));
}

// One connection for a 5 ms server planned 1000 requests a second: Little's law with 1.5x
// headroom asks for ceil(1.5 x 1000/s x the mean service time), and the note and the text name
// that -c. A plan without one rate (stages, a trace) is held to its busiest second, which the
// note says: here every second plans 1000, so each plan fails as -R 1000 does.
void expect_one_connection_too_few(const std::vector<std::string>& args, bool busiest_second) {
  surroundings around;
  around.server.service = {service_time::kind::constant, milliseconds(5)};
  const cli_result r = run_judged(args, around);
  EXPECT_EQ(r.exit_code, 4);
  expect_consistent(r);
  EXPECT_EQ(failed_gating(r.doc), std::set<std::string>{"connection_cap"});
  const json& c = check_named(r.doc, "connection_cap");
  EXPECT_EQ(c["figure"], 1.0);
  // Every answer took the same time, so every interval is steady.
  const double mean = truth(*r.sim, service_of).mean();
  EXPECT_GT(mean, 5e6);
  EXPECT_NEAR(c["threshold"].get<double>(), 1.5 * 1000 * mean / 1e9, 1e-9);
  const int needed = static_cast<int>(std::ceil(1.5 * 1000 * mean / 1e9));
  EXPECT_EQ(needed, 8);
  const std::string note = c["note"].get<std::string>();
  const std::string suffices = "-c " + std::to_string(needed) + " would have sufficed";
  EXPECT_NE(note.find(suffices), std::string::npos) << note;
  EXPECT_NE(r.text.find(suffices), std::string::npos);
  EXPECT_EQ(note.find("1000 req/s (the busiest second)") != std::string::npos, busiest_second)
      << note;
}

TEST(sim_verdicts, too_few_connections_make_the_run_invalid_and_name_the_c_that_suffices) {
  expect_one_connection_too_few(
      command({"-t", "1", "-c", "1", "-R", "1000", "-d", "1500ms", "--timeout", "500ms"}), false);
}

TEST(sim_verdicts, too_few_connections_for_stages_make_the_run_invalid) {
  expect_one_connection_too_few(
      command({"-t", "1", "-c", "1", "-R", "1000", "--stages", "2s:1000", "--timeout", "500ms"}),
      true);
}

TEST(sim_verdicts, too_few_connections_for_a_trace_make_the_run_invalid) {
  std::string trace;
  for (int i = 0; i < 2000; ++i) trace += std::to_string(i * 1'000'000) + "\n";
  const scratch_dir dir("cap-trace");
  expect_one_connection_too_few(command({"-t", "1", "-c", "1", "--schedule-in",
                                         dir.write("trace.txt", trace), "--timeout", "500ms"}),
                                true);
}

// A scenario whose users share the -c connections: 100 users a second, 5 steps each with no
// think time, so the connections carry 500 steps a second. Each user holding a connection of
// its own instead leaves only the max_users check.
std::string pooled_scenario(const char* connection) {
  std::string text = std::string("target: http://127.0.0.1:8080\nconnection: ") + connection +
                     "\nmax_users: 400\nphases:\n  - {duration: 2s, arrival_rate: 100}\n"
                     "scenarios:\n  - name: walk\n    steps:\n";
  for (int k = 0; k < 5; ++k) text += "      - {name: s" + std::to_string(k) + ", path: /}\n";
  return text;
}

TEST(sim_verdicts, a_hybrid_pool_short_of_connections_for_its_steps_is_invalid) {
  surroundings around;
  around.server.service = {service_time::kind::constant, milliseconds(5)};
  const scratch_dir dir("cap-pool");
  const cli_result pool = run_judged(
      {"--scenario", dir.write("pool.yaml", pooled_scenario("pool")), "-t1", "-c2"}, around);
  EXPECT_EQ(pool.exit_code, 4);
  EXPECT_EQ(failed_gating(pool.doc), std::set<std::string>{"connection_cap"});
  const json& c = check_named(pool.doc, "connection_cap");
  const double mean = truth(*pool.sim, service_of).mean();
  EXPECT_NEAR(c["threshold"].get<double>(), 1.5 * 500 * mean / 1e9, 1e-9);
  EXPECT_NE(c["note"].get<std::string>().find("-c 2 cannot carry 500 req/s (the busiest second)"),
            std::string::npos)
      << c["note"];
  const cli_result own =
      run_judged({"--scenario", dir.write("own.yaml", pooled_scenario("per_user")), "-t1"}, around);
  EXPECT_FALSE(has_check(own.doc, "connection_cap"));
  EXPECT_TRUE(check_named(own.doc, "user_cap")["pass"].get<bool>());
  EXPECT_EQ(own.exit_code, 0) << own.text;
}

// p99.99 named in an --slo needs 10 samples beyond it, 100,000 samples; 600 leave 0.06.
TEST(sim_verdicts, too_few_samples_beyond_a_gated_percentile_make_the_run_invalid) {
  const cli_result r =
      run_judged(command({"-t", "1", "-c", "4", "-R", "200", "-d", "3s", "--slo", "p99.99<1s"}));
  EXPECT_EQ(r.exit_code, 4);
  expect_consistent(r, {"p99.99"});
  EXPECT_EQ(failed_gating(r.doc), std::set<std::string>{"samples_beyond_p99.99"});
  const json& c = check_named(r.doc, "samples_beyond_p99.99");
  EXPECT_NEAR(c["figure"].get<double>(), 0.06, 1e-9);
  EXPECT_EQ(check_named(r.doc, "samples_beyond_p99.9")["level"], "warning");
  EXPECT_EQ(check_named(r.doc, "samples_beyond_p99")["level"], "warning");  // p99 is not gated now
}

// The gaps between the worker's consecutive first sends of the window, as they went out.
hdr::histogram send_gaps_of(const simulation& sim) {
  hdr::histogram h(record::latency_params());
  nanoseconds last{};
  for (const auto& s : sim.sent()) {
    if (s.t.attempt != 0 || s.t.accounted_at() < sim.result().measure_start) continue;
    if (last.count() != 0) h.record(std::max<std::int64_t>(0, (s.t.sent - last).count()));
    last = s.t.sent;
  }
  return h;
}

// Coarse mode sends what is due once per millisecond: at 5000 req/s some five at once, then
// nothing, which is nothing like exponential gaps.
TEST(sim_verdicts, coarse_ticks_fail_the_poisson_fit) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("a statistic; every Poisson run takes the fit's paths");
  const cli_result r =
      run_judged(command({"--arrival", "poisson", "--seed", "4", "-c", "8", "-t", "1", "-R", "5000",
                          "-d", "2s", "--precision", "coarse"}));
  const hdr::histogram gaps = send_gaps_of(*r.sim);
  const analysis::gap_fit fit = analysis::fit_erlang(gaps, 1, 5000);
  const json& c = check_named(r.doc, "poisson_send_gaps");
  EXPECT_EQ(c["level"], "warning");
  EXPECT_FALSE(c["pass"].get<bool>());
  EXPECT_EQ(c["figure"], fit.ks_distance);
  EXPECT_EQ(c["threshold"], analysis::poisson_ks_threshold(fit.samples));
  EXPECT_GT(fit.ks_distance, 0.3);
  EXPECT_NE(r.text.find("  warn  send gaps: " + c["note"].get<std::string>()), std::string::npos)
      << r.text;
}

// Fine timers with no host noise send each request at its intended instant: the gaps are the
// schedule's own, and only their sampling noise stands between them and the planned process.
TEST(sim_verdicts, fine_timers_keep_the_poisson_gaps) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("a statistic; every Poisson run takes the fit's paths");
  const cli_result r = run_judged(command(
      {"--arrival", "poisson", "--seed", "4", "-c", "8", "-t", "1", "-R", "1000", "-d", "6s"}));
  const simulation& sim = *r.sim;
  for (const auto& s : sim.sent()) ASSERT_EQ(s.t.sent, s.t.intended) << "request " << s.t.index;
  const hdr::histogram gaps = send_gaps_of(sim);
  const auto planned = r.doc["schedule"]["planned"].get<std::int64_t>();
  EXPECT_EQ(gaps.total_count(), planned - 1);
  const analysis::gap_fit fit = analysis::fit_erlang(gaps, 1, 1000);
  const json& c = check_named(r.doc, "poisson_send_gaps");
  EXPECT_TRUE(c["pass"].get<bool>()) << c.dump();
  EXPECT_EQ(c["figure"], fit.ks_distance);
  EXPECT_DOUBLE_EQ(c["threshold"].get<double>(),
                   0.02 + 1.63 / std::sqrt(static_cast<double>(planned - 1)));
  // Constant arrivals are not fitted to Poisson at all.
  const cli_result constant = run_judged(
      command({"-t", "1", "-c", "8", "-R", "5000", "-d", "1s", "--precision", "coarse"}));
  EXPECT_FALSE(has_check(constant.doc, "poisson_send_gaps"));
}

}  // namespace
}  // namespace punctual::sim::verdicts_cases
