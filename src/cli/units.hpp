// Parsers for the values users type on the command line. Each throwing variant raises
// usage_error with one line naming the option, the offending value and what was expected;
// each try_ variant is noexcept and is what the fuzzers drive.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

namespace punctual::cli {

// "100ns", "250us", "500ms", "1.5s", "30s", "2m", "1h"; a bare number means seconds (as wrk).
std::optional<std::chrono::nanoseconds> try_parse_duration(std::string_view text) noexcept;
std::chrono::nanoseconds parse_duration(std::string_view option, std::string_view text);
// The same, but a bare number is refused: for options where seconds are rarely meant (a
// timeout, a think time), "--timeout 500" is far more likely 500 ms than 500 s.
std::chrono::nanoseconds parse_duration_with_unit(std::string_view option, std::string_view text);

// Requests per second: "2000", "2k", "1.5k", "1M". Must be > 0 and finite.
std::optional<double> try_parse_rate(std::string_view text) noexcept;
double parse_rate(std::string_view option, std::string_view text);

// Status ranges: "200-399", "200,204,300-399". Each code 100..599.
struct status_range {
  int low = 200;
  int high = 399;
};
std::optional<std::vector<status_range>> try_parse_status_ranges(std::string_view text);
std::vector<status_range> parse_status_ranges(std::string_view option, std::string_view text);

}  // namespace punctual::cli
