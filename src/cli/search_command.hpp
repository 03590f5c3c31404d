// `punctual search`: the highest constant arrival rate at which every SLO passes. Each step is a
// `punctual run` built from the run options given (build_run), judged by run's validity and SLO
// rules on the upper confidence bound; the procedure itself is search/procedure.hpp.
#pragma once

#include <string>
#include <vector>

#include "analysis/interval_series.hpp"
#include "cli/run_options.hpp"
#include "engine/run.hpp"
#include "search/procedure.hpp"
#include "search/search_report.hpp"

namespace punctual::cli {

// The options of `search` as typed: run's own, and the procedure's.
struct search_options {
  run_options run;
  std::string from;  // empty: 100 req/s, or a scenario's scale 1
  double factor = 2;
  std::string resolution = "5%";
  std::uint32_t max_steps = 20;
  std::string max_time = "15m";
  std::string to;
  std::string step_warmup = "2s";
  std::string step_duration = "10s";
  std::string cooldown = "30s";
  std::uint32_t max_connections = 10'000;
  bool slo_bound_given = false;
  // Run options that have no meaning beside search and were given (refused, exit 2).
  std::vector<std::string> refused_given;
};

// Options search refuses: a step's rate, length and model are the search's.
inline constexpr const char* search_refused[] = {
    "--rate",         "--stages",   "--duration",  "--warmup",   "--schedule-in",
    "--shard",        "--hlog",     "--max-queue", "--start-at", "--out-dir",
    "--schedule-out", "--timeline", "--hgrm"};

struct search_setup {
  search::settings settings;
  run_options step;  // the run options every step starts from
  search::context context;
  std::string json_out;
  std::string html_out;
  std::string junit_out;
  bool quiet = false;
};

// Checks every option (usage_error, one line) and builds what each step starts from.
search_setup build_search(const search_options& o, const std::vector<std::string>& command_line);
// The run of one step, and of the recovery probe (a few requests at a low rate).
run_setup step_setup(const search_setup& s, const search::step_plan& plan);
run_setup probe_setup(const search_setup& s);
// Judges a finished step as run does, on the search's bound and on the point estimate.
search::step_facts judge_step(const run_setup& setup, const engine::run_result& r,
                              const analysis::interval_series& series);
// Writes the text report (stdout, or stderr with --json -), --json, --html and --junit; the exit
// code.
int report_search(const search_setup& s, const search::outcome& o);

int search_command(const search_options& o, const std::vector<std::string>& command_line);

}  // namespace punctual::cli
