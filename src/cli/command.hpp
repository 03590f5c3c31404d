// What every subcommand shares: the exit codes and the two errors that end a command early. Each
// subcommand returns the process exit code (docs/design.md, "Exit codes").
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

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

}  // namespace punctual::cli
