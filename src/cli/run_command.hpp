#pragma once

#include <string>

#include "cli/run_options.hpp"
#include "engine/run.hpp"

namespace punctual::cli {

// Runs the load with SIGINT/SIGTERM ending the window early; writes the interval log to
// `hlog_path` (if not empty) as the run goes. Throws run_error if nothing could connect.
engine::run_result perform_run(const run_setup& setup, const std::string& hlog_path);

// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half a
// file and nothing is left behind on failure.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace punctual::cli
