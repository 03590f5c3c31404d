// `punctual search`: the procedure that finds the highest constant arrival rate at which every
// SLO passes. It grows the rate by a factor until a step fails, then bisects the bracket. It
// knows nothing of sockets or of the engine: each step is run, and the server's recovery
// probed, through step_runner, so the same procedure runs on real sockets and in the
// simulation on a virtual clock. docs/design.md ("Search") states the procedure and its
// assumptions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/json.hpp"

namespace punctual::search {

using nanoseconds = std::chrono::nanoseconds;

struct settings {
  double from = 100;         // req/s
  double factor = 2;         // grow by
  double resolution = 0.05;  // stop once hi - lo <= resolution * lo
  std::uint32_t max_steps = 20;
  nanoseconds max_time = std::chrono::minutes(15);
  std::optional<double> to;  // cap on the rate
  nanoseconds step_warmup = std::chrono::seconds(2);
  nanoseconds step_duration = std::chrono::seconds(10);
  nanoseconds cooldown = std::chrono::seconds(30);
  std::uint32_t max_connections = 10'000;
  std::optional<std::uint32_t> connections;  // -c given: every step uses it
  std::uint32_t threads = 1;                 // -c never goes below it
  double granularity = 1;  // rates are multiples of it (1 req/s; a scenario's scale: 0.01)
};

// One step as the procedure asks for it.
struct step_plan {
  double rate_per_s = 0;
  std::uint32_t connections = 0;
  nanoseconds warmup{};
  nanoseconds duration{};
  std::string why;  // "grow", "bisect", "re-run: ..."
};

// How a step's SLOs came out: the figure at its point estimate and at its bound.
struct slo_figure {
  std::string text;
  bool percentile = false;  // a latency SLO (ns), else a share or count
  double point = 0;
  double lo = 0;  // the interval's low end (= point when there is none)
  double bound = 0;
  double threshold = 0;
  bool pass_point = true;
  bool pass_bound = true;
  bool service_time_fails = false;  // the server failed it even before any generator delay
};

// What a finished step says, taken from its run report (step_facts.cpp) or made up by a test.
struct step_facts {
  bool interrupted = false;
  bool valid = true;
  std::vector<std::string> failed_checks;  // gating checks that failed, by name
  std::vector<std::string> check_notes;    // their notes, in the same order
  std::vector<slo_figure> slos;
  double planned_per_s = 0;
  double sent_per_s = 0;
  double completed_per_s = 0;
  double error_share = 0;      // non-ok of planned, 0..1
  double response_p50_ns = 0;  // for the recovery threshold
  double mean_service_ns = 0;  // for sizing the next step's connections
  double p99_service_ns = 0;   // the same: bursts must not queue in the generator
  std::uint64_t planned = 0;
  nlohmann::ordered_json report;  // the step's full run report
};

enum class verdict {
  pass,
  fail,             // an SLO failed on its bound (or on service time alone)
  undecided,        // the point estimate passes, the bound fails
  too_few_samples,  // invalid: too few samples beyond an SLO's percentile
  generator,        // invalid for the generator's own reasons
  connections,      // invalid: too few connections for the rate
  interrupted,
};
std::string_view verdict_name(verdict v) noexcept;

// The verdict of a step's facts (the procedure's first look; re-runs may change what it counts
// as).
verdict classify(const step_facts& f);

// What the cooldown probe saw: the median response time of a few requests at a low rate.
struct probe_result {
  double p50_ns = 0;
  bool answered = false;  // at least half of the probe's requests were answered ok
};

class step_runner {
 public:
  virtual ~step_runner() = default;
  virtual step_facts run_step(const step_plan& plan) = 0;
  // A few requests at a low rate, to see whether the server has recovered from the last step.
  virtual probe_result probe() = 0;
  // Time spent since the search began (the wall clock, or the simulation's).
  virtual nanoseconds elapsed() = 0;
  // The user asked to stop (SIGINT): no step starts after this.
  virtual bool interrupted() { return false; }
};

struct step_record {
  step_plan plan;
  step_facts facts;
  verdict first = verdict::pass;    // as classified
  verdict counted = verdict::pass;  // as the procedure counted it
  nanoseconds cooldown{};           // the recovery taken before it
  bool recovered = true;  // the probe passed within --cooldown (true when none was needed)
  std::string note;       // why it was re-run, or what it meant
};

enum class limit { server, generator, connections, to, time, steps, interrupted };
std::string_view limit_name(limit l) noexcept;

struct outcome {
  std::optional<double> sustained;  // the highest rate that passed (counted)
  std::optional<double> failed;     // the lowest rate that failed (counted)
  limit why = limit::server;
  std::string stopped_by;  // "resolution", "max-steps", "max-time", "--to", ...
  std::vector<step_record> steps;
  std::string generator_check;        // the generator's limit: the check that failed, and advice
  std::vector<std::string> unstable;  // rates that failed below a passing one, after a re-run
  nanoseconds recovery_threshold{};
  nanoseconds total{};
};

outcome run_search(const settings& s, step_runner& runner);

// The exit code: 0 when a rate was sustained, 3 when even --from failed, 4 when the generator's
// (or the connections') limit came first, 130 when interrupted.
int exit_code_of(const outcome& o) noexcept;

// -c for a step at `rate` after a step whose mean service time was `mean_service_ns` (Little's
// law with 2x headroom, above the validity check's 1.5x), within [threads, max_connections].
std::uint32_t size_connections(const settings& s, double rate, double mean_service_ns) noexcept;
// The service time a step after `f` is sized for: its mean, or its p99 when that is longer, so
// that a burst of slow answers does not leave due requests waiting for a connection.
double sizing_service_ns(const step_facts& f) noexcept;

}  // namespace punctual::search
