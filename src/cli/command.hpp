// How subcommands plug into `punctual`: each one adds itself to the CLI11 app and, when chosen,
// its runner returns the process exit code (docs/design.md, "Exit codes").
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace punctual::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_run_failed = 1,
  exit_usage = 2,
  exit_slo_violated = 3,
  exit_invalid_run = 4,
  exit_interrupted = 130,
};

// Bad input found before anything is sent: main prints "punctual: <what>" on one line, exits 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Could not run (e.g. every connection refused at start): one line, exit 1.
class run_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The process's argv, kept for reports (JSON "command_line").
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

using command_runner = std::function<int()>;

// Each add_* registers a subcommand; the runner is stored in `chosen` when it is selected.
void add_run_command(CLI::App& app, command_runner& chosen);
void add_serve_command(CLI::App& app, command_runner& chosen);
void add_demo_command(CLI::App& app, command_runner& chosen);
void add_report_command(CLI::App& app, command_runner& chosen);
void add_merge_command(CLI::App& app, command_runner& chosen);

}  // namespace punctual::cli
