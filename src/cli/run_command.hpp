#pragma once

#include <string>

#include "cli/atomic_file.hpp"
#include "cli/run_options.hpp"
#include "engine/run.hpp"

namespace punctual::cli {

// Runs the load with SIGINT/SIGTERM ending the window early; writes the interval log to
// `hlog_path` (if not empty) as the run goes. Throws run_error if nothing could connect.
engine::run_result perform_run(const run_setup& setup, const std::string& hlog_path);


}  // namespace punctual::cli
