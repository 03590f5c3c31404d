// The run's settings in words, for the report's header and its JSON.
#pragma once

#include <string>

#include "run/config.hpp"

namespace punctual::run {

// "shard 2 of 7": which slice of a distributed run's schedule this process ran.
std::string shard_name(const config& c);

// "open", "closed", "hybrid"; "fine", "spin", "coarse"; "constant", "poisson", "trace": as options
// and reports spell them.
const char* name(model_kind m) noexcept;
const char* name(precision_mode p) noexcept;
const char* name(schedule::arrival_kind a) noexcept;
// "1.1", "2", "auto": as --http takes it.
const char* name(http_version h) noexcept;
// "flag", "cpus_allowed": as the JSON report's generator.threads_from spells them.
const char* name(threads_source t) noexcept;

// "5xx,429,reset": the causes a retry policy's mask names, in record::retry_cause order.
std::string retry_causes(std::uint32_t mask);

// "2s", "uniform:1s..3s", "exp:2s": as scenario files write think times.
std::string describe(const schedule::think_time& t);

// "up to 3 retries on 5xx,429,reset,connect, backoff exp 50ms..2s with full jitter"; "none".
std::string describe(const retry_policy& p);

}  // namespace punctual::run
