// What the simulation's cases share: ready setups (a run config against the simulated target, a
// server that answers everything), running a setup or a command line held to every rule, and a
// few helpers several files need.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "http/request.hpp"
#include "record/view_set.hpp"
#include "simulation.hpp"

namespace punctual::sim {

// GET / from a target that answers 200 after 100 us; -t1 -c4, no warm-up, a 10 s timeout.
inline setup base_setup() {
  setup s;
  engine::run_config& c = s.config;
  c.target.text = "sim:80";
  c.target_url = "http://sim/";
  http::request_spec spec;
  spec.host = "sim";
  c.request = http::encode_request(spec);
  for (int code = 200; code < 400; ++code) c.expected_status.set(static_cast<std::size_t>(code));
  c.threads = 1;
  c.connections = 4;
  c.timeout = std::chrono::seconds(10);
  c.connect_timeout = std::chrono::seconds(1);
  return s;
}

inline setup open_setup(double rate, std::chrono::nanoseconds duration) {
  setup s = base_setup();
  s.config.duration = duration;
  schedule::plan p;
  p.rate_per_s = rate;
  p.duration = duration;
  p.workers = s.config.threads;
  s.config.model = run::open_model{p, {}};
  return s;
}

// Runs `s` and holds it to every rule (checks.hpp); the simulation stays for more checks.
inline std::unique_ptr<simulation> run_checked(const setup& s) {
  auto sim = std::make_unique<simulation>(s);
  const bool ran = sim->run();
  EXPECT_TRUE(ran) << sim->failure().value_or("");
  if (ran) {
    const auto problems = check_run(*sim);
    EXPECT_TRUE(problems.empty()) << describe(problems);
  }
  return sim;
}

inline std::uint64_t count_of(const simulation& sim, record::outcome o) {
  return sim.result().measured.counts.outcomes[record::index(o)];
}

// Runs a simulation that was set up (probes, sinks), holding it to every rule; false when it
// could not start.
inline bool ran_judged(simulation& sim) {
  const bool ok = sim.run();
  EXPECT_TRUE(ok) << sim.failure().value_or("");
  if (ok) {
    const auto problems = check_run(sim);
    EXPECT_TRUE(problems.empty()) << describe(problems);
  }
  return ok;
}

// The simulated target, for run_cli's command lines (resolved, never reached).
inline constexpr const char* target = "http://127.0.0.1:8080/";

// A command line: `args`, then the target.
inline std::vector<std::string> command(std::initializer_list<std::string> args) {
  std::vector<std::string> out(args);
  out.emplace_back(target);
  return out;
}

// run_cli, held to every rule.
inline cli_result run_judged(const std::vector<std::string>& args,
                             const surroundings& around = {}) {
  cli_result r = run_cli(args, around);
  if (r.sim && r.sim->failure()) return r;
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  EXPECT_FALSE(r.doc.is_null()) << "no report";
  return r;
}

// A histogram of `value` over the measured requests that have one (the truth a report's view
// must hold exactly), with the values of a few views.
inline hdr::histogram truth(
    const simulation& sim,
    const std::function<std::optional<std::int64_t>(const final_outcome&)>& value) {
  hdr::histogram h(record::latency_params());
  for (const auto& f : sim.finals()) {
    if (f.t.accounted_at() < sim.result().measure_start) continue;
    if (const auto v = value(f)) h.record(*v);
  }
  return h;
}

inline std::optional<std::int64_t> response_of(const final_outcome& f) {
  if (f.outcome == record::outcome::dropped || f.outcome == record::outcome::skipped)
    return std::nullopt;
  return (f.at - f.t.intended).count();
}

inline std::optional<std::int64_t> service_of(const final_outcome& f) {
  if (f.outcome != record::outcome::ok && f.outcome != record::outcome::http_error)
    return std::nullopt;
  return (f.at - f.t.sent).count();
}

// The JSON's percentile keys and the percentiles they stand for.
inline const std::vector<std::pair<const char*, double>> percentiles{
    {"50", 50}, {"75", 75}, {"90", 90}, {"99", 99}, {"99.9", 99.9}, {"99.99", 99.99}, {"100", 100}};

// What the report's histograms give at percentile `p` for these values.
inline std::int64_t percentile_of(const std::vector<std::int64_t>& values, double p) {
  hdr::histogram h(record::latency_params());
  for (const auto v : values) h.record(v);
  return h.value_at_percentile(p);
}

// The most of `intervals` ([from, to)) that overlap at one instant.
inline std::size_t most_at_once(std::vector<std::pair<nanoseconds, nanoseconds>> intervals) {
  std::vector<std::pair<nanoseconds, int>> events;
  for (const auto& [from, to] : intervals) {
    events.emplace_back(from, 1);
    events.emplace_back(to, -1);
  }
  std::sort(events.begin(), events.end());  // at one instant an end (-1) sorts before a start
  std::size_t most = 0;
  int now = 0;
  for (const auto& e : events) {
    now += e.second;
    most = std::max(most, static_cast<std::size_t>(now));
  }
  return most;
}

// A folder of its own for a test's files (scenarios, traces, reports), removed with it.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / fmt::format("sim-{}-{}", name, getpid())) {
    std::filesystem::create_directories(path_);
  }
  ~scratch_dir() { std::filesystem::remove_all(path_); }
  std::string write(const std::string& file, const std::string& text) const {
    const auto path = path_ / file;
    std::ofstream(path) << text;
    return path.string();
  }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace punctual::sim
