// Run validity: the checks that make a run invalid, and those that only warn. Pure:
// everything comes in through validity_input, so each check can be driven by synthetic numbers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/interval_series.hpp"
#include "analysis/slo.hpp"
#include "record/counters.hpp"
#include "record/intended_seconds.hpp"
#include "record/recorder.hpp"
#include "record/view_set.hpp"

namespace punctual::analysis {

enum class check_level { gating, warning };

struct check {
  std::string name;           // stable identifier, e.g. "send_lag_p99", "samples_beyond_p99.99"
  double figure = 0;          // what was measured, in `unit`
  double threshold = 0;       // what it is compared with, in `unit`
  std::string_view relation;  // "<=" or ">=": pass means `figure relation threshold`
  std::string_view unit;      // "ns", "requests", "connections", "samples", "share"
  bool pass = true;
  check_level level = check_level::gating;  // gating: a failure makes the run invalid
  std::string note;  // why it failed and what would fix it; empty when it passed
};

struct validity_input {
  const record::view_set& views;     // the measured window's views
  const record::counters& counts;    // the measured window's counts
  std::optional<double> rate_per_s;  // the planned rate; nullopt for the closed model
  std::uint32_t connections = 0;     // -c
  std::uint32_t streams = 1;  // requests each connection carries at once (HTTP/2: --max-streams)
  std::vector<double> worker_cpu_shares;  // per worker: CPU time / wall time it ran, 0..1+
  const interval_series& intervals;
  std::vector<double> slo_percentiles;  // every percentile named in an --slo (send lag's gate)
  // The tails the SLOs judge; only these can make a run invalid for too few samples. Without
  // --slo there is no verdict to withhold, and too few samples only warn.
  std::vector<slo_tail> slo_tails;
  std::chrono::nanoseconds window{};  // the measured window actually run
  // Poisson runs at a fixed rate only: each worker's gaps between sends, and the worker count
  // (their gaps should be Erlang(threads, rate)).
  const hdr::histogram* poisson_send_gaps = nullptr;
  std::uint32_t threads = 1;
  // Models with a schedule only: per second of the measured window (from its start), the first
  // attempts intended in it, and those of them the generator had not got to by schedule_grace
  // after the second ended. Null without a schedule (the closed model).
  const record::per_second_load* load = nullptr;
  // Whether -c carries the planned load when the plan has no one rate (stages, a trace, a hybrid
  // run whose users share the connections): then -c is judged against the busiest whole second
  // of `load`'s planned steps. False in the closed model, for a hybrid run whose users each
  // hold their own connection (user_cap judges those), and in a merge (the shards judged it).
  bool connections_carry_load = false;
  // The hybrid model with a max_users cap: the cap, and the measured sessions' mean session
  // time. Little's law, with the connection check's headroom, against the busiest second's
  // arrivals (`load`).
  std::uint32_t max_users = 0;
  double mean_session_ns = 0;
  // The worst second by intended time (record/intended_seconds.hpp), if the run had one.
  const record::second_views* worst_second = nullptr;
  // A run started at a shared wall-clock instant (--start-at): how late it began its schedule,
  // and which shard it is ("shard 2 of 7"), for the note.
  std::optional<std::chrono::nanoseconds> start_lag{};
  std::string shard{};
  // A distributed run (--shard I/N): this process carries 1/shards of rate_per_s on its own
  // connections, and each of its workers sends every (shards x threads)-th request.
  std::uint32_t shards = 1;
  // --precision coarse: what is due is sent on ticks this far apart, so send lag reaches a tick
  // by design, and neither more threads nor a lower rate lowers it. Zero in the other modes.
  std::chrono::nanoseconds send_tick{};
  // Connections the run opened (before the start too) and the requests it planned (the warm-up
  // too). Zero when not known (a merge carries each shard's own check).
  std::uint64_t connections_opened = 0;
  std::uint64_t planned_all = 0;
};

struct validity_report {
  std::vector<check> checks;    // gating checks first, then warnings, in a fixed order
  bool valid() const noexcept;  // every gating check passed
  std::vector<const check*> failures() const;  // failed gating checks (the reasons, in order)
  std::vector<const check*> warnings() const;  // failed warnings
};

inline constexpr double cpu_share_warning = 0.90;
// Connections opened beyond -c, per planned request, past which the run warns.
inline constexpr double reopened_per_planned_warning = 1.5;
inline constexpr std::int64_t min_samples_beyond = 10;
// A shard that began its schedule later than this after --start-at fails the run.
inline constexpr std::chrono::nanoseconds max_start_lag{100'000'000};
// The schedule check allows a second this many late first attempts: max(1% of P(s), 2).
inline constexpr double schedule_late_share = 0.01;
inline constexpr std::uint64_t schedule_late_floor = 2;

// The percentiles a run is judged on: those its --slo expressions name (100 for p100 or max),
// else p99 alone. Sorted, without repeats.
std::vector<double> gated_percentiles(const std::vector<double>& slo_percentiles);

// A run is invalid only when the generator's own failure could have moved a figure the user
// relies on, or the server did not get the planned load (docs/design.md, "Validity"). Gating:
// any drop; the schedule kept second by second; send lag at each gated percentile within the
// larger of 1 ms and 10% of the response time there; 10 samples beyond each percentile below
// 100 that an SLO judges, in the view it judges; enough connections for the planned rate, or for
// the busiest second of a plan without one rate (open model, hybrid pool); a max_users for the
// busiest second's arrivals (hybrid). Everything else only warns, and says what it means for the
// figures: send lag at the other summary percentiles, thinly sampled summary percentiles, a
// worker's CPU share, Poisson send gaps that fit poorly.
validity_report check_validity(const validity_input& in);

// The schedule check on its own: how many whole seconds of `window` (a trailing partial second
// is not judged, nor is the one an interruption cut short) left more first attempts behind than
// allowed. Pure, for the edge cases' tests.
check schedule_check(const record::per_second_load& load, std::chrono::nanoseconds window);

// The start-lag check of one shard (validity_input::start_lag).
check start_lag_check(std::chrono::nanoseconds lag, const std::string& shard);

// The -c that Little's law with 1.5x headroom asks for: ceil(1.5 * rate * mean service time).
std::uint32_t connections_needed(double rate_per_s, double mean_service_ns) noexcept;

// The planned steps of the busiest whole second of `window`, per second: the rate the
// connections must carry when the plan has no one rate. Only whole seconds count, as in the
// schedule check, unless the window is shorter than one; then its steps are scaled to a second.
double busiest_second_rate(const record::per_second_load& load, std::chrono::nanoseconds window);

// Mean service time over the intervals whose service-time p50 was at most 10x the run's median
// service time (so a server stall, whose queue drains at normal speed, is excluded). Falls back
// to the whole-run mean when the series has no such interval.
double steady_mean_service_ns(const record::view_set& views,
                              const interval_series& intervals) noexcept;

}  // namespace punctual::analysis
