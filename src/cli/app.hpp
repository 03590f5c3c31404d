// The `punctual` program: parses the command line and runs the chosen subcommand.
#pragma once

#include <string>
#include <vector>

#include "cli/run_options.hpp"
#include "cli/search_command.hpp"

namespace punctual::cli {

// The options of `punctual run` from its arguments (those after "run"), as the command line
// parses them; throws usage_error with one line. For the simulation's tests, which run the
// engine on what a user would type.
run_options parse_run_options(const std::vector<std::string>& args);
// `punctual search ARGS...` parsed as the binary parses it (the simulation builds searches so).
search_options parse_search_options(const std::vector<std::string>& args);

// Returns the process exit code (docs/design.md, "Exit codes").
int run_app(int argc, char** argv);

}  // namespace punctual::cli
