#include "schedule/plan.hpp"

#include <cmath>

#include "schedule/profile.hpp"
#include "schedule/stages.hpp"
#include "schedule/trace.hpp"

namespace punctual::schedule {
namespace {

std::optional<std::string> check_rate(const char* what, double rate, bool zero_allowed) {
  if (!std::isfinite(rate) || rate < 0 || (!zero_allowed && rate == 0)) {
    return std::string(what) + " must be " + (zero_allowed ? ">= 0" : "> 0") + " and finite, got " +
           format_rate(rate);
  }
  if (rate > max_rate_per_s) {
    return std::string(what) + " must be at most 1e9 req/s (one per ns), got " + format_rate(rate);
  }
  if (!zero_allowed && rate < min_rate_per_s) {
    return std::string(what) + " must be at least 1e-06 req/s, got " + format_rate(rate);
  }
  return std::nullopt;
}

std::optional<std::string> check_stages(const plan& p) {
  if (auto e = check_rate("start rate", p.start_rate_per_s, true)) return e;
  std::size_t number = 0;
  for (const auto& s : p.stages) {
    ++number;
    const std::string where = "stage " + std::to_string(number) + ": ";
    if (s.length.count() <= 0) return where + "the duration must be > 0";
    if (auto e = check_rate("the rate", s.rate_per_s, true)) return where + *e;
  }
  if (stages_length(p.stages).count() >= max_window_ns)
    return "stages: the total duration is too long";
  const rate_profile profile(p.stages, p.start_rate_per_s);
  if (!(profile.integral((p.warmup + p.duration).count()) > 0)) {
    return "stages: the rate is 0 throughout warm-up and duration, so no request would be sent";
  }
  return std::nullopt;
}

std::optional<std::string> check_replay(const plan& p) {
  if (!p.replay || p.replay->size() == 0) return "trace replay without a trace";
  if (!p.stages.empty()) return "a trace replay has no stages";
  const auto end = p.warmup + p.duration;
  if (p.replay->count_before(end) == 0) {
    return "the trace's first offset, " + format_duration(p.replay->offset(0)) +
           ", is at or after warm-up + duration (" + format_duration(end) +
           "), so no request would be sent";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> validate(const plan& p) {
  if (p.workers < 1) return "workers must be >= 1";
  if (p.shards < 1) return "shards must be >= 1";
  if (p.shard_index >= p.shards) {
    return "shard index " + std::to_string(p.shard_index) + " must be below the shard count " +
           std::to_string(p.shards);
  }
  if (p.duration.count() <= 0) return "duration must be > 0";
  if (p.warmup.count() < 0) return "warm-up must be >= 0";
  if (p.duration.count() >= max_window_ns ||
      p.warmup.count() >= max_window_ns - p.duration.count()) {
    return "warm-up + duration is too long (at most 2^62 ns, ~146 years)";
  }
  if (p.arrival == arrival_kind::trace) return check_replay(p);
  if (p.arrival != arrival_kind::constant && p.arrival != arrival_kind::poisson) {
    return "unknown arrival process";
  }
  if (p.replay) return "a trace is set but the arrival process is not trace replay";
  if (p.stages.empty()) return check_rate("rate", p.rate_per_s, false);
  return check_stages(p);
}

std::string describe(const plan& p, std::string_view unit) {
  if (p.arrival == arrival_kind::trace) return describe_replay(*p.replay, p.warmup + p.duration);
  std::string out = p.arrival == arrival_kind::poisson
                        ? "poisson arrivals (seed " + std::to_string(p.seed) + "), "
                        : std::string("constant arrivals, ");
  if (p.stages.empty()) return out + format_rate(p.rate_per_s) + " " + std::string(unit);
  out += "stages ";
  if (p.start_rate_per_s != 0) {
    out += "from " + format_rate(p.start_rate_per_s) + " " + std::string(unit) + " ";
  }
  return out + format_stages(p.stages);
}

}  // namespace punctual::schedule
