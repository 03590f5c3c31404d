// The engine runs a run::config (src/run/config.hpp), the one description of a run; these names
// keep the engine's code short.
#pragma once

#include <chrono>

#include "run/config.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;
using run_config = run::config;
using run::model_kind;
using run::precision_mode;
using run::retry_policy;

}  // namespace punctual::engine
