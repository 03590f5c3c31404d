// Walking the schedule: each worker yields only its own requests, in order, allocating nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>

#include "schedule/grid.hpp"
#include "schedule/plan.hpp"
#include "schedule/prng.hpp"
#include "schedule/profile.hpp"
#include "schedule/trace.hpp"

namespace punctual::schedule {

// The (global index, intended offset) pairs of one worker of this shard: global request i
// belongs to shard i mod S and, within it, to worker (i div S) mod T (docs/design.md, "Workers and
// connections"). Constant arrivals compute each offset directly from its index; Poisson arrivals
// draw the whole global sequence and skip the other workers' entries, so every worker and every
// shard sees the identical sequence and the union over workers and shards is exactly the 1-process
// schedule. Conventions: constant arrivals start with t_0 = 0 (t_i = floor(i * 1e9 / rate));
// Poisson arrivals start one gap in (t_0 = g_0, t_i = t_{i-1} + g_i, each gap rounded to the
// nearest ns and summed as integers). Under stages, constant request i is where the rate's integral
// first exceeds i, and Poisson requests are unit-exponential sums mapped back through that
// integral. A trace replay yields entry i of the trace as global request i, under the same
// ownership rule.
class worker_stream {
 public:
  // Throws std::invalid_argument (with validate()'s message) for a bad plan or worker.
  worker_stream(const plan& p, std::uint32_t worker);
  // Every request of this shard, whichever worker owns it.
  static worker_stream whole_shard(const plan& p);

  // The next request with offset < warmup + duration; false once past it (and from then on).
  // Constant arrivals: a few integer operations. Poisson: one draw per global request, i.e.
  // S * T draws per request yielded. Trace: one array read.
  bool next(entry& out) noexcept;

 private:
  worker_stream(const plan& p, std::uint64_t first, std::uint64_t stride);
  enum class mode : std::uint8_t { grid, poisson, ramp, ramp_poisson, trace };
  bool emit(std::int64_t offset, entry& out) noexcept;
  bool next_grid(entry& out) noexcept;
  bool next_poisson(entry& out) noexcept;
  bool next_ramp(entry& out) noexcept;
  bool next_trace(entry& out) noexcept;

  mode mode_;
  bool done_ = false;
  std::uint64_t index_;   // the next global index this stream yields
  std::uint64_t stride_;  // S * T for a worker, S for a whole shard
  std::int64_t warmup_end_;
  std::int64_t end_;
  // grid: offset(index_) = grid_whole_ + grid_remainder_ / grid_denominator_
  unsigned __int128 grid_whole_ = 0;
  std::uint64_t grid_remainder_ = 0;
  std::uint64_t grid_denominator_ = 1;
  constant_grid::step grid_step_{0, 0};
  // poisson: the global sequence drawn so far
  xoshiro256ss prng_;
  std::uint64_t drawn_ = 0;   // how many global requests have been drawn
  std::int64_t last_ns_ = 0;  // offset of global request drawn_ - 1
  double ns_per_unit_ = 0;    // 1e9 / rate: a unit exponential -> a gap in ns
  double last_integral_ = 0;  // ramp_poisson: L(t) of global request drawn_ - 1
  std::optional<rate_profile> profile_;
  std::size_t cursor_ = 0;
  std::shared_ptr<const trace> trace_;  // trace: the plan's, shared
};

struct counts {
  std::uint64_t warmup = 0;
  std::uint64_t planned = 0;
};

// How many requests of this shard (or of one worker of it) fall in the warm-up and in the
// measured window. Exact closed form for constant arrivals without stages and for a trace, else
// enumeration.
// Throws std::invalid_argument for a bad plan or worker.
counts count_requests(const plan& p, std::optional<std::uint32_t> worker = {});

// --schedule-out: '#' comment lines (describe(), the plan's parameters, the column names),
// then one line per request of this shard in global order: "index offset_ns worker phase",
// phase being "warmup" or "measured", then the request name when the plan replays a trace with
// names. Offsets are from the run start (the start of warm-up). parse_trace reads it back.
void write_schedule(std::ostream& out, const plan& p);

}  // namespace punctual::schedule
