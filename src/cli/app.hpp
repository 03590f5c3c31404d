// The `punctual` program: parses the command line and runs the chosen subcommand.
#pragma once

namespace punctual::cli {

// Returns the process exit code (docs/design.md, "Exit codes").
int run_app(int argc, char** argv);

}  // namespace punctual::cli
