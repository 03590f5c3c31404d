// A simulated `punctual run`: the arguments a user would type, built into a run by the CLI's own
// option parsing (cli::build_run), run in the simulation, then judged and reported as the
// binary would: validity, SLOs, the exit code, the JSON, the text report and the .hlog. The
// target URL must be a numeric address (it is resolved, never reached).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/run_options.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"
#include "simulation.hpp"

namespace punctual::sim {

// What the simulation around the run is: everything of a setup but the config.
struct surroundings {
  server_script server;
  link up;
  link down;
  std::vector<pause> pauses;
  std::optional<nanoseconds> interrupt_at;
  std::uint64_t seed = 1;
  std::size_t max_events = 256;
  // --start-at on the virtual wall clock (the CLI checks --start-at against the real one). The
  // engine waits for it in real time until 2 s before it, so it must lie within 2 s of the
  // world's start (world::clock().unix_now() of a new world).
  std::optional<nanoseconds> start_at;
  // Called with the simulation before it runs (e.g. to set a poll hook), and with each interval
  // the collector emits, after the CLI's own use of it (the live metrics' registry).
  std::function<void(simulation&)> before_run;
  std::function<void(const record::view_set&)> on_interval;
};

struct cli_result {
  cli::run_setup setup;
  std::unique_ptr<analysis::interval_series> series;  // what judged it
  std::unique_ptr<simulation> sim;
  report::verdicts verdicts;
  int exit_code = 0;
  std::string json;
  nlohmann::ordered_json doc;
  std::string text;
  std::string hlog;
};

// Throws cli::usage_error (exit 2) as the binary would refuse the arguments.
cli_result run_cli(const std::vector<std::string>& args, const surroundings& around = {});
// The same for a run already built (a search's step).
cli_result simulate_setup(cli::run_setup built, const surroundings& around,
                          const report::text_options& text_options = {});

// The names of the gating validity checks a report's run failed (its doc["validity"]).
std::set<std::string> failed_gating(const nlohmann::ordered_json& doc);

}  // namespace punctual::sim
