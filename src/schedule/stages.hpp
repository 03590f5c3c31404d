// The stages text of the command line, "10s:100,30s:5000,10s:5000", and its inverse. Parsing is
// local to this unit (src/schedule depends on nothing above it); the syntax matches the CLI's
// duration and rate values.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/plan.hpp"

namespace punctual::schedule {

// Comma-separated DURATION:RATE pairs. On failure returns nothing and sets `error` to one line,
// e.g. `stage 2 "30x:5000": bad duration "30x" (expected e.g. 30s, 500ms, 2m)`.
std::optional<std::vector<stage>> parse_stages(std::string_view text, std::string& error);

// "100ns", "250us", "500ms", "1.5s", "30s", "2m", "1h"; a bare number means seconds. Decimal
// text is converted exactly (rounded to the nearest ns). Must be >= 0 and below 2^62 ns.
std::optional<std::chrono::nanoseconds> parse_stage_duration(std::string_view text) noexcept;

// "100", "2.5k", "1M": requests per second, >= 0, finite, at most max_rate_per_s. The suffix
// scales the decimal text before rounding ("0.1k" is exactly 100).
std::optional<double> parse_stage_rate(std::string_view text) noexcept;

// The inverse of parse_stages: "10s:100,30s:5000".
std::string format_stages(const std::vector<stage>& stages);
// The largest unit that divides exactly: "10s", "1500ms", "2m", "7ns".
std::string format_duration(std::chrono::nanoseconds d);
// The shortest fixed-point text that reads back as the same double: "2000", "1.5", "0.000001".
std::string format_rate(double rate_per_s);

std::chrono::nanoseconds stages_length(const std::vector<stage>& stages) noexcept;

}  // namespace punctual::schedule
