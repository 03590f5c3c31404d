#pragma once

#include <string>
#include <vector>

#include "analysis/interval_series.hpp"
#include "cli/atomic_file.hpp"
#include "cli/live_metrics.hpp"
#include "cli/progress.hpp"
#include "cli/run_options.hpp"
#include "engine/run.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "report/run_report.hpp"

namespace punctual::cli {

// `punctual run`: builds the run, runs it, judges it and writes every report; returns the exit
// code.
int run_command(const run_options& o, const std::vector<std::string>& command_line);

// Runs the load with SIGINT/SIGTERM ending the window early; writes the interval log to
// `hlog_path` (if not empty) as the run goes, and feeds every interval to `series` and
// `progress` (if given), and the run's counts and intervals to `metrics` (if given) on the
// collecting thread. Throws run_error if nothing could connect.
engine::run_result perform_run(const run_setup& setup, const std::string& hlog_path,
                               analysis::interval_series* series = nullptr,
                               progress_line* progress = nullptr, live_metrics* metrics = nullptr);

// A SIGINT or SIGTERM arrived since the first run began (between runs too).
bool interrupt_requested() noexcept;
// How many have arrived (a wait after the run ends at the next one).
int signals_received() noexcept;

// One interval of the run's .hlog: the response time untagged, the other views and each name's
// response time tagged.
void write_interval(hdr::interval_log_writer& log, std::int64_t index, const record::view_set& v,
                    const run::config& c);

// The run's SLOs on `bound` (judge() uses the setup's own).
analysis::slo_evaluation evaluate_slos_on(const run_setup& setup, const engine::run_result& r,
                                          const analysis::interval_series& series,
                                          analysis::bound_mode bound);

// Validity checks, confidence intervals and SLO verdicts for a finished run.
report::verdicts judge(const run_setup& setup, const engine::run_result& r,
                       const analysis::interval_series& series);

// the design's precedence (after 2 and 1, which stop a run before it starts).
// The text report's options that --verbose, -L and -U set.
report::text_options text_options_of(const run_options& o);

int exit_code_for(const engine::run_result& r, const report::verdicts& v);

}  // namespace punctual::cli
