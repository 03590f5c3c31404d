// Run validity (issue 4): the checks that make a run invalid, and those that only warn. Pure:
// everything comes in through validity_input, so each check can be driven by synthetic numbers.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/interval_series.hpp"
#include "record/counters.hpp"
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
  std::string note;           // why it failed and what would fix it; empty when it passed
};

struct validity_input {
  const record::view_set& views;       // the measured window's views
  const record::counters& counts;      // the measured window's counts
  std::optional<double> rate_per_s;    // the planned rate; nullopt for the closed model
  std::uint32_t connections = 0;       // -c
  std::vector<double> worker_cpu_shares;  // per worker: CPU time / wall time it ran, 0..1+
  const interval_series& intervals;
  std::vector<double> slo_percentiles;  // every percentile named in an --slo
  std::chrono::nanoseconds window{};    // the measured window actually run
  // Poisson runs at a fixed rate only: each worker's gaps between sends, and the worker count
  // (their gaps should be Erlang(threads, rate)).
  const hdr::histogram* poisson_send_gaps = nullptr;
  std::uint32_t threads = 1;
};

struct validity_report {
  std::vector<check> checks;  // gating checks first, then warnings, in a fixed order
  bool valid() const noexcept;            // every gating check passed
  std::vector<const check*> failures() const;  // failed gating checks (the reasons, in order)
  std::vector<const check*> warnings() const;  // failed warnings
};

inline constexpr double cpu_share_warning = 0.90;
inline constexpr std::int64_t min_samples_beyond = 10;

// The gating checks (send lag at p99, p99.9 and max; drops; connection cap, open model only;
// samples beyond each SLO percentile below 100) and the warnings (thinly sampled summary
// percentiles not gated on; worker CPU share; Poisson send gaps that fit poorly). The maximum (p100) is exempt from the sample
// checks: it is an observed fact, not an estimate, and nothing can ever lie beyond it.
validity_report check_validity(const validity_input& in);

// The -c that Little's law with 1.5x headroom asks for: ceil(1.5 * rate * mean service time).
std::uint32_t connections_needed(double rate_per_s, double mean_service_ns) noexcept;

// Mean service time over the intervals whose service-time p50 was at most 10x the run's median
// service time (so a server stall, whose queue drains at normal speed, is excluded). Falls back
// to the whole-run mean when the series has no such interval.
double steady_mean_service_ns(const record::view_set& views, const interval_series& intervals) noexcept;

}  // namespace punctual::analysis
