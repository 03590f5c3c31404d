// --scenario FILE.yaml: the hybrid model's description. Users arrive by an open process (the
// phases); each arriving user draws a scenario by weight and runs its steps one after the other,
// each after the previous one's completion plus its think time (docs/scenario.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/load_error.hpp"
#include "schedule/think.hpp"

namespace punctual::scenario {

using nanoseconds = std::chrono::nanoseconds;

// A think time: fixed `2s`, `uniform:1s..3s` or `exp:2s` (exponential with that mean). The
// schedule unit draws them (schedule/think.hpp).
using think_time = schedule::think_time;

// Parses a think-time text; nothing when it is not one. Durations as the CLI takes them
// (a decimal number and ns, us, ms, s, m or h), never negative; uniform needs a <= b.
std::optional<think_time> parse_think(std::string_view text);
// "2s", "uniform:1s..3s", "exp:2s".
std::string describe(const think_time& t);

struct step {
  std::string name;      // [A-Za-z0-9_-]+, unique within its scenario
  std::string method = "GET";
  std::string target;    // a path starting with '/', or a full URL (the CLI checks the origin)
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::vector<int> expect_status;  // pairs of (low, high) inclusive ranges; empty: the run's
  std::string expect_body;         // expect_body_contains: text the body must hold; empty: none
  think_time think;      // after this step (0 by default)
  int line = 0;
};

struct scenario_def {
  std::string name;  // [A-Za-z0-9_-]+, unique, not "session"
  double weight = 1;
  std::vector<step> steps;  // at least one
  int line = 0;
};

// One phase of user arrivals: `duration` at `arrival_rate` users/s, or a linear ramp from
// `arrival_rate` to `ramp_to` over it.
struct phase {
  nanoseconds duration{};
  double arrival_rate = 0;
  std::optional<double> ramp_to;
};

enum class overload_policy : std::uint8_t { queue, drop };
enum class error_policy : std::uint8_t { abort, continue_ };
enum class connection_policy : std::uint8_t { pool, per_user };

struct scenario_file {
  std::string file;
  std::string target;  // the base URL
  std::vector<phase> phases;
  bool poisson = false;           // arrival: constant (default) or poisson
  std::optional<std::uint64_t> seed;  // --seed overrides it
  std::uint32_t max_users = 0;    // 0: as many as arrive (bounded by --timeout in practice)
  overload_policy on_overload = overload_policy::queue;
  error_policy on_error = error_policy::abort;
  nanoseconds graceful_stop{std::chrono::seconds(30)};
  connection_policy connection = connection_policy::pool;
  std::vector<scenario_def> scenarios;

  // Total steps over all scenarios (each step is a name: SCENARIO.STEP).
  std::size_t step_count() const noexcept;
};

// Parses a scenario file; `file` names it in errors. Throws load_error ("FILE:LINE: KEY: what")
// for anything it does not accept, including the keys this version does not build yet (capture,
// cookies, csv, expect_body_contains, connection: per_user), which are named as such.
scenario_file parse_scenario(std::string_view text, const std::string& file);
scenario_file load_scenario(const std::string& file);

}  // namespace punctual::scenario
