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

#include "scenario/csv.hpp"
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

// A value a step takes from its response into a {{name}} for the user's later steps: a header's
// value, or a JSON body's value at a JSON Pointer.
struct capture_def {
  std::string name;  // [A-Za-z0-9_-]+
  bool from_header = false;
  std::string key;  // the header's name, or the JSON Pointer ("" is the whole body)
  int line = 0;
};

struct step {
  std::string name;  // [A-Za-z0-9_-]+, unique within its scenario
  std::string method = "GET";
  std::string target;  // a path starting with '/', or a full URL (the CLI checks the origin)
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::vector<int> expect_status;  // pairs of (low, high) inclusive ranges; empty: the run's
  std::string expect_body;         // expect_body_contains: text the body must hold; empty: none
  std::vector<capture_def> captures;
  think_time think;  // after this step (0 by default)
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

// csv: rows of values for users; user i takes row i mod rows (sequential) or a row drawn by
// (seed, csv, i) (random). Its columns are {{name}} variables.
struct csv_feeder {
  std::string file;
  csv_table table;
  bool random = false;
};

struct scenario_file {
  std::string file;
  std::string target;  // the base URL
  std::vector<phase> phases;
  bool poisson = false;               // arrival: constant (default) or poisson
  std::optional<std::uint64_t> seed;  // --seed overrides it
  std::uint32_t max_users = 0;        // 0: as many as arrive (bounded by --timeout in practice)
  overload_policy on_overload = overload_policy::queue;
  error_policy on_error = error_policy::abort;
  nanoseconds graceful_stop{std::chrono::seconds(30)};
  connection_policy connection = connection_policy::per_user;
  std::vector<scenario_def> scenarios;
  std::optional<csv_feeder> csv;
  bool cookies = true;  // a cookie jar per user

  // Total steps over all scenarios (each step is a name: SCENARIO.STEP).
  std::size_t step_count() const noexcept;
  // The names a {{name}} may use: the csv columns, then every capture's name, each once.
  std::vector<std::string> variables() const;
};

// Parses a scenario file; `file` names it in errors. Throws load_error ("FILE:LINE: KEY: what")
// for anything it does not accept. A csv feeder's file is read relative to `file`.
scenario_file parse_scenario(std::string_view text, const std::string& file);
scenario_file load_scenario(const std::string& file);

}  // namespace punctual::scenario
