// --scenario FILE.yaml: the hybrid model, built into the run's configuration once, before
// anything is sent (docs/scenario.md).
#pragma once

#include <string>

#include "cli/run_options.hpp"
#include "http/url.hpp"
#include "run/config.hpp"
#include "scenario/scenario.hpp"

namespace punctual::cli {

// Loads o.scenario_file and refuses the options the file replaces (a URL, -R, -d, --stages,
// --arrival, --requests, --schedule-in, --model). Throws usage_error naming file, line and key.
scenario::scenario_file load_scenario_options(const run_options& o);

// The file's base URL; its errors name the file.
http::url scenario_target(const scenario::scenario_file& f);

// Makes c the hybrid model of `f`: the arrival plan from the phases (the measured window is
// their total less --warmup), one name per step (SCENARIO.STEP) and per scenario
// (SCENARIO.session), and the scenarios with their think times and policies.
void apply_scenario(const run_options& o, const scenario::scenario_file& f, const http::url& target,
                    const run::retry_policy& retry, run::config& c);

}  // namespace punctual::cli
