// A simulated `punctual search`: the arguments a user would type, built by the CLI's own
// parsing (cli::build_search), each step and recovery probe a simulated run (simulate_setup)
// judged as the binary judges it, on a virtual clock that adds up over the steps. The server's
// backlog (scripted_server::cpu_free_at) carries from one run to the next, as a real server's
// queue would.
#pragma once

#include <string>
#include <vector>

#include "cli/search_command.hpp"
#include "cli_run.hpp"

namespace punctual::sim {

struct search_result {
  cli::search_setup setup;
  search::outcome outcome;
  int exit_code = 0;
  std::string text;
  nlohmann::ordered_json doc;
  // Per step and probe, in order: the rules of checks.hpp it broke (empty: none), and the
  // server's backlog when it began.
  std::vector<std::string> broken;
  std::vector<nanoseconds> backlog_before_step;
  std::size_t probes = 0;
};

search_result search_cli(const std::vector<std::string>& args, const surroundings& around = {});

}  // namespace punctual::sim
