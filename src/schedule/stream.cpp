#include "schedule/stream.hpp"

#include <cmath>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "schedule/exp_gap.hpp"
#include "schedule/stages.hpp"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF  // see exp_gap.cpp: fused operations would differ by CPU
#endif

namespace punctual::schedule {
namespace {

void require_valid(const plan& p) {
  if (auto error = validate(p)) throw std::invalid_argument(*error);
}

const plan& checked(const plan& p, std::uint32_t worker) {
  require_valid(p);
  if (worker >= p.workers) {
    throw std::invalid_argument("worker " + std::to_string(worker) + " does not exist (" +
                                std::to_string(p.workers) + " workers)");
  }
  return p;
}

// Global indices first, first + stride, ... below n.
std::uint64_t count_in_class(std::uint64_t n, std::uint64_t first, std::uint64_t stride) noexcept {
  return n > first ? (n - 1 - first) / stride + 1 : 0;
}

// The counts of one class of indices, from how many global requests precede the window's start
// and its end.
counts class_counts(std::uint64_t before_window, std::uint64_t before_end, std::uint64_t first,
                    std::uint64_t stride) noexcept {
  counts c;
  c.warmup = count_in_class(before_window, first, stride);
  c.planned = count_in_class(before_end, first, stride) - c.warmup;
  return c;
}

}  // namespace

worker_stream::worker_stream(const plan& p, std::uint64_t first, std::uint64_t stride)
    : mode_(mode::grid),
      index_(first),
      stride_(stride),
      warmup_end_(p.warmup.count()),
      end_(p.warmup.count() + p.duration.count()),
      prng_(p.seed) {
  if (p.arrival == arrival_kind::trace) {
    mode_ = mode::trace;
    trace_ = p.replay;
  } else if (!p.stages.empty()) {
    mode_ = p.arrival == arrival_kind::poisson ? mode::ramp_poisson : mode::ramp;
    profile_.emplace(p.stages, p.start_rate_per_s);
  } else if (p.arrival == arrival_kind::poisson) {
    mode_ = mode::poisson;
    ns_per_unit_ = 1e9 / p.rate_per_s;
  } else {
    const constant_grid grid(p.rate_per_s);
    const auto start = grid.position(first);
    grid_whole_ = start.whole;
    grid_remainder_ = start.remainder;
    grid_denominator_ = grid.period_denominator();
    grid_step_ = grid.stride_step(stride);
  }
}

worker_stream::worker_stream(const plan& p, std::uint32_t worker)
    : worker_stream(checked(p, worker), p.shard_index + std::uint64_t{p.shards} * worker,
                    std::uint64_t{p.shards} * p.workers) {}

worker_stream worker_stream::whole_shard(const plan& p) {
  require_valid(p);
  return worker_stream(p, p.shard_index, p.shards);
}

bool worker_stream::emit(std::int64_t offset, entry& out) noexcept {
  if (offset >= end_) {
    done_ = true;
    return false;
  }
  out.index = index_;
  out.offset = std::chrono::nanoseconds{offset};
  out.warmup = offset < warmup_end_;
  if (index_ > std::numeric_limits<std::uint64_t>::max() - stride_) done_ = true;
  index_ += stride_;
  return true;
}

bool worker_stream::next_grid(entry& out) noexcept {
  if (grid_whole_ >= static_cast<unsigned __int128>(end_)) {
    done_ = true;
    return false;
  }
  const auto offset = static_cast<std::int64_t>(grid_whole_);
  grid_whole_ += grid_step_.whole;
  grid_remainder_ += grid_step_.remainder;  // both < denominator < 2^57: no overflow
  if (grid_remainder_ >= grid_denominator_) {
    grid_remainder_ -= grid_denominator_;
    ++grid_whole_;
  }
  return emit(offset, out);
}

bool worker_stream::next_poisson(entry& out) noexcept {
  while (drawn_ <= index_) {
    // Round each gap to the nearest ns and sum integers: no drift however long the run.
    const double gap = unit_exponential(prng_.next_unit()) * ns_per_unit_;
    last_ns_ += static_cast<std::int64_t>(std::floor(gap + 0.5));
    ++drawn_;
    if (last_ns_ >= end_) {  // offsets only grow: nothing later can be in the window
      done_ = true;
      return false;
    }
  }
  return emit(last_ns_, out);
}

bool worker_stream::next_ramp(entry& out) noexcept {
  double x = static_cast<double>(index_);
  if (mode_ == mode::ramp_poisson) {
    while (drawn_ <= index_) {
      last_integral_ += unit_exponential(prng_.next_unit());
      ++drawn_;
    }
    x = last_integral_;
  }
  const std::int64_t offset = profile_->time_of(x, cursor_);
  if (offset < 0) {
    done_ = true;
    return false;
  }
  return emit(offset, out);
}

bool worker_stream::next_trace(entry& out) noexcept {
  if (index_ >= trace_->size()) {
    done_ = true;
    return false;
  }
  return emit(trace_->offset(index_).count(), out);
}

bool worker_stream::next(entry& out) noexcept {
  if (done_) return false;
  switch (mode_) {
    case mode::grid:
      return next_grid(out);
    case mode::poisson:
      return next_poisson(out);
    case mode::ramp:
    case mode::ramp_poisson:
      return next_ramp(out);
    case mode::trace:
      return next_trace(out);
  }
  return false;
}

counts count_requests(const plan& p, std::optional<std::uint32_t> worker) {
  if (worker) {
    checked(p, *worker);
  } else {
    require_valid(p);
  }
  const std::uint64_t first = p.shard_index + (worker ? std::uint64_t{p.shards} * *worker : 0);
  const std::uint64_t stride = std::uint64_t{p.shards} * (worker ? p.workers : 1);
  const auto end = p.warmup + p.duration;
  if (p.arrival == arrival_kind::trace) {
    return class_counts(p.replay->count_before(p.warmup), p.replay->count_before(end), first,
                        stride);
  }
  if (p.arrival == arrival_kind::constant && p.stages.empty()) {
    const constant_grid grid(p.rate_per_s);
    return class_counts(grid.count_before(p.warmup), grid.count_before(end), first, stride);
  }
  counts c;
  worker_stream s = worker ? worker_stream(p, *worker) : worker_stream::whole_shard(p);
  entry e;
  while (s.next(e)) ++(e.warmup ? c.warmup : c.planned);
  return c;
}

void write_schedule(std::ostream& out, const plan& p) {
  worker_stream s = worker_stream::whole_shard(p);
  const bool named = p.arrival == arrival_kind::trace && p.replay->has_names();
  out << "# punctual schedule: " << describe(p) << '\n'
      << "# seed " << p.seed << ", shard " << p.shard_index << " of " << p.shards << ", "
      << p.workers << " workers, warm-up " << p.warmup.count() << " ns, duration "
      << p.duration.count() << " ns\n"
      << "# index offset_ns worker phase" << (named ? " name\n" : "\n");
  entry e;
  while (s.next(e)) {
    out << e.index << ' ' << e.offset.count() << ' ' << worker_of(e.index, p.shards, p.workers)
        << (e.warmup ? " warmup" : " measured");
    if (named && !p.replay->name(e.index).empty()) out << ' ' << p.replay->name(e.index);
    out << '\n';
  }
}

}  // namespace punctual::schedule
