#include "cli/search_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "analysis/text.hpp"
#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/run_command.hpp"
#include "cli/scenario_options.hpp"
#include "cli/units.hpp"
#include "metrics/remote_write.hpp"
#include "report/junit.hpp"
#include "run/workload_identity.hpp"
#include "search/step_facts.hpp"

namespace punctual::cli {

namespace {

using std::chrono::nanoseconds;

// The recovery probe: a few requests at a low rate.
constexpr const char* probe_rate = "20";
constexpr const char* probe_duration = "250ms";

std::string ns_text(nanoseconds d) {
  return std::to_string(d.count()) + "ns";
}

nanoseconds positive_duration(const char* option, const std::string& text) {
  const nanoseconds d = parse_duration(option, text);
  if (d.count() <= 0) throw usage_error(std::string(option) + ": must be > 0, got '" + text + "'");
  return d;
}

// "5%" or "0.05".
double parse_resolution(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  const double share = percent ? v / 100 : v;
  if (number.empty() || *end != '\0' || !(share > 0 && share < 1)) {
    throw usage_error("--resolution: expected a share such as 5% or 0.05 (between 0 and 1), got '" +
                      text + "'");
  }
  return share;
}

void refuse(const search_options& o) {
  if (!o.refused_given.empty()) {
    throw usage_error(o.refused_given.front() +
                      ": search sets each step's rate, length and schedule itself (not "
                      "available with search)");
  }
  if (o.run.model != "open") {
    throw usage_error("--model " + o.run.model +
                      ": search needs the open model (a rate to search over)");
  }
  if (o.run.slos.empty()) {
    throw usage_error(
        "search: give at least one --slo (e.g. --slo 'p99<=50ms'), the objective "
        "every step is judged on");
  }
}

search::settings build_settings(const search_options& o) {
  search::settings s;
  const bool hybrid = !o.run.scenario_file.empty();
  s.from = o.from.empty() ? (hybrid ? 1.0 : 100.0) : parse_rate("--from", o.from);
  // A scenario's rate is the factor its phases are scaled by, in hundredths.
  if (hybrid) s.granularity = 0.01;
  if (!o.to.empty()) {
    s.to = parse_rate("--to", o.to);
    if (*s.to < s.from) throw usage_error("--to " + o.to + " is below --from " + o.from);
  }
  if (!(o.factor > 1)) throw usage_error("--factor: must be more than 1");
  s.factor = o.factor;
  s.resolution = parse_resolution(o.resolution);
  if (o.max_steps < 1) throw usage_error("--max-steps: must be at least 1");
  s.max_steps = o.max_steps;
  s.max_time = positive_duration("--max-time", o.max_time);
  s.step_warmup = parse_duration("--step-warmup", o.step_warmup);
  s.step_duration = positive_duration("--step-duration", o.step_duration);
  s.cooldown = parse_duration("--cooldown", o.cooldown);
  if (o.max_connections < o.run.threads)
    throw usage_error("--max-connections: must be at least -t");
  s.max_connections = o.max_connections;
  // A scenario's file says how its users connect; a step never sizes -c for it.
  if (o.run.connections_given || hybrid) s.connections = o.run.connections;
  s.threads = o.run.threads;
  return s;
}

// Unless an SLO on the whole run's error share was given, search adds errors<=1%: a server that
// answers 503 fast would otherwise "sustain" any rate.
std::string added_slo(const run_options& o) {
  for (const auto& e : parse_slo_options(o.slos)) {
    if (e.metric == analysis::slo_metric::errors && e.scope.empty()) return {};
  }
  return "errors<=1%";
}

// The busiest phase's arrival rate at scale 1, in users per second.
double peak_users_per_s(const run_options& o) {
  double peak = 0;
  for (const auto& ph : load_scenario_options(o).phases)
    peak = std::max({peak, ph.arrival_rate, ph.ramp_to.value_or(0.0)});
  return peak;
}

}  // namespace

search_setup build_search(const search_options& o, const std::vector<std::string>& command_line) {
  refuse(o);
  search_setup s;
  s.settings = build_settings(o);
  s.step = o.run;
  s.context.added_slo = added_slo(o.run);
  if (!s.context.added_slo.empty()) s.step.slos.push_back(s.context.added_slo);
  s.context.slos = s.step.slos;
  if (!o.slo_bound_given) s.step.slo_bound = "upper";
  s.context.bound = s.step.slo_bound;
  s.context.command_line = command_line;
  s.context.target = o.run.url;
  if (!o.run.scenario_file.empty()) {
    s.context.hybrid = true;
    s.context.hybrid_peak_per_s = peak_users_per_s(o.run);
    s.context.target = http::to_string(scenario_target(load_scenario_options(o.run)));
  }
  s.json_out = o.run.json_out;
  s.html_out = o.run.html_out;
  s.junit_out = o.run.junit_out;
  s.quiet = o.run.quiet;
  s.step.quiet = true;
  s.step.progress = false;
  // Every step's options are checked now, before anything is sent; the output paths with them,
  // before the steps lose them (the search writes its own files).
  const std::uint32_t c = s.settings.connections.value_or(s.settings.threads);
  step_setup(s, {s.settings.from, c, s.settings.step_warmup, s.settings.step_duration, "check"});
  s.step.json_out.clear();
  s.step.html_out.clear();
  s.step.junit_out.clear();
  probe_setup(s);
  return s;
}

run_setup step_setup(const search_setup& s, const search::step_plan& plan) {
  run_options o = s.step;
  if (s.context.hybrid) {
    // The file's phases set the length (a re-run stretches them); the step scales their
    // arrivals.
    o.scenario_scale = plan.rate_per_s;
    o.scenario_stretch = std::max(1.0, std::chrono::duration<double>(plan.duration) /
                                           std::chrono::duration<double>(s.settings.step_duration));
    return build_run(o, s.context.command_line);
  }
  o.rate = fmt::format("{}", plan.rate_per_s);
  o.duration = ns_text(plan.duration);
  o.warmup = ns_text(plan.warmup);
  o.connections = plan.connections;
  o.connections_given = true;
  return build_run(o, s.context.command_line);
}

run_setup probe_setup(const search_setup& s) {
  run_options o = s.step;
  if (s.context.hybrid) {
    // A scenario's probe asks its target, as an open run would.
    o = run_options{};
    o.url = s.context.target;
    o.threads = s.step.threads;
    o.threads_from_cpus = s.step.threads_from_cpus;
    o.timeout = s.step.timeout;
    o.quiet = true;
  }
  o.rate = probe_rate;
  o.duration = probe_duration;
  o.warmup = "0s";
  o.connections = o.threads;
  o.connections_given = true;
  o.slos.clear();
  o.retry = {};
  return build_run(o, s.context.command_line);
}

search::step_facts judge_step(const run_setup& setup, const engine::run_result& r,
                              const analysis::interval_series& series) {
  const report::verdicts judged = judge(setup, r, series);
  analysis::slo_evaluation point;
  if (!setup.slos.empty()) point = evaluate_slos_on(setup, r, series, analysis::bound_mode::point);
  return search::facts_of(setup.config, r, judged, point, setup.slos, series);
}

int report_search(const search_setup& s, const search::outcome& o) {
  std::ostream& text_out = s.json_out == "-" ? std::cerr : std::cout;
  search::write_text(text_out, o, s.context);
  if (!s.json_out.empty() || !s.html_out.empty() || !s.junit_out.empty()) {
    const auto doc = search::to_json(o, s.context);
    if (s.json_out == "-") {
      std::cout << doc.dump(2) << '\n' << std::flush;
    } else if (!s.json_out.empty()) {
      write_file_atomically(s.json_out, doc.dump(2) + "\n");
    }
    if (!s.html_out.empty()) write_file_atomically(s.html_out, search::html_page(doc));
    if (!s.junit_out.empty()) {
      write_file_atomically(s.junit_out,
                            report::junit_xml("punctual search", report::search_junit_cases(doc)));
    }
  }
  return search::exit_code_of(o);
}

namespace {

// Each step and probe a `punctual run` on real sockets; the wall clock measures the search.
class socket_runner final : public search::step_runner {
 public:
  socket_runner(const search_setup& s, live_metrics* metrics)
      : s_(s), metrics_(metrics), start_(std::chrono::steady_clock::now()) {}

  search::step_facts run_step(const search::step_plan& plan) override {
    const run_setup setup = step_setup(s_, plan);
    analysis::interval_series series(analysis::slo_percentiles(setup.slos));
    const engine::run_result r = perform_run(setup, "", &series, nullptr, metrics_);
    interrupted_ = interrupted_ || r.interrupted;
    search::step_facts f = judge_step(setup, r, series);
    if (!s_.quiet) {
      std::fprintf(stderr, "punctual: step %zu: %s req/s, -c %u: %s\n", ++steps_,
                   analysis::number_text(plan.rate_per_s).c_str(), plan.connections,
                   std::string(search::verdict_name(search::classify(f))).c_str());
    }
    return f;
  }

  search::probe_result probe() override {
    const run_setup setup = probe_setup(s_);
    const engine::run_result r = perform_run(setup, "", nullptr, nullptr);
    interrupted_ = interrupted_ || r.interrupted;
    return search::probe_of(r);
  }

  nanoseconds elapsed() override { return std::chrono::steady_clock::now() - start_; }
  bool interrupted() override { return interrupted_ || interrupt_requested(); }

 private:
  const search_setup& s_;
  live_metrics* metrics_;  // each step's live metrics (the probe's are not served)
  std::chrono::steady_clock::time_point start_;
  bool interrupted_ = false;
  std::size_t steps_ = 0;
};

}  // namespace

int search_command(const search_options& o, const std::vector<std::string>& command_line) {
  const search_setup s = build_search(o, command_line);
  if (!s.context.added_slo.empty() && !s.quiet) {
    std::fprintf(stderr,
                 "punctual: note: search adds --slo '%s' (no SLO on the error share was "
                 "given)\n",
                 s.context.added_slo.c_str());
  }
  std::unique_ptr<live_metrics> metrics = live_metrics::from_options(o.run);
  // One remote-write sink for the whole search: each step's series go on under one run_id.
  auto* const remote =
      attach_remote_write(parse_remote_write(o.run.remote_write, o.run.remote_write_headers),
                          o.run.run_id.empty() ? run::random_run_id() : o.run.run_id, 0, metrics);
  socket_runner runner(s, metrics.get());
  const search::outcome out = search::run_search(s.settings, runner);
  if (remote) {
    const auto pushed = remote->close();
    if (!s.quiet) std::fprintf(stderr, "punctual: %s\n", report::remote_write_line(pushed).c_str());
  }
  const int code = report_search(s, out);
  if (metrics) {
    const int seen = signals_received();
    metrics->linger([seen] { return signals_received() > seen; });
  }
  return code;
}

}  // namespace punctual::cli
