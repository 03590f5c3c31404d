// Java's AbstractHistogramIterator and its percentile / recorded-values / linear variants.
#include "punctual/histogram/iteration.hpp"

#include <cmath>
#include <limits>
#include <optional>

namespace punctual::hdr {

namespace {

// State of Java's AbstractHistogramIterator. The policy decides where steps end.
struct walker {
  const histogram& h;
  std::int64_t array_total = h.total_count();
  std::int32_t current_index = 0;
  std::int64_t current_value_at_index = 0;
  std::int64_t next_value_at_index = h.size_of_equivalent_value_range(0);
  std::int64_t prev_value_iterated_to = 0;
  std::int64_t total_count_to_prev_index = 0;
  std::int64_t total_count_to_current_index = 0;
  std::int64_t total_value_to_current_index = 0;
  std::int64_t count_at_this_value = 0;
  bool fresh_sub_bucket = true;

  bool base_has_next() const { return total_count_to_current_index < array_total; }

  template <typename Policy>
  std::optional<iteration_step> next(Policy& policy) {
    while (current_index < h.counts_length()) {
      count_at_this_value = h.count_at_index(current_index);
      if (fresh_sub_bucket) {  // a slot revisited by a later step adds nothing more
        total_count_to_current_index += count_at_this_value;
        total_value_to_current_index +=
            count_at_this_value * h.highest_equivalent_value(current_value_at_index);
        fresh_sub_bucket = false;
      }
      if (policy.reached(*this)) return emit(policy);
      fresh_sub_bucket = true;
      ++current_index;
      current_value_at_index = next_value_at_index;  // slots are contiguous
      next_value_at_index = h.highest_equivalent_value(current_value_at_index) + 1;
    }
    return std::nullopt;
  }

  template <typename Policy>
  iteration_step emit(Policy& policy) {
    iteration_step s;
    s.value_iterated_to = policy.value_iterated_to(*this);
    s.value_iterated_from = prev_value_iterated_to;
    s.count_at_value_iterated_to = count_at_this_value;
    s.count_added_in_this_step = total_count_to_current_index - total_count_to_prev_index;
    s.total_count_to_this_value = total_count_to_current_index;
    s.total_value_to_this_value = total_value_to_current_index;
    s.percentile = (100.0 * static_cast<double>(total_count_to_current_index)) /
                   static_cast<double>(array_total);
    s.percentile_level_iterated_to = policy.level_iterated_to(*this);
    prev_value_iterated_to = s.value_iterated_to;
    total_count_to_prev_index = total_count_to_current_index;
    policy.increment(*this);
    return s;
  }
};

template <typename Policy>
std::vector<iteration_step> run(walker& w, Policy& policy) {
  std::vector<iteration_step> out;
  while (policy.has_next(w)) {
    std::optional<iteration_step> s = w.next(policy);
    if (!s) break;  // Java throws here; only reachable on inconsistent counts
    out.push_back(*s);
  }
  return out;
}

double step_percentile(const walker& w) {
  return (100.0 * static_cast<double>(w.total_count_to_current_index)) /
         static_cast<double>(w.array_total);
}

struct percentile_policy {
  int ticks_per_half_distance;
  double level_to = 0.0;
  bool reached_last = false;

  bool has_next(const walker& w) {
    if (w.base_has_next()) return true;
    if (!reached_last && w.array_total > 0) {  // one extra step at exactly 100 %
      level_to = 100.0;
      reached_last = true;
      return true;
    }
    return false;
  }
  bool reached(const walker& w) const {
    return w.count_at_this_value != 0 && step_percentile(w) >= level_to;
  }
  std::int64_t value_iterated_to(const walker& w) const {
    return w.h.highest_equivalent_value(w.current_value_at_index);
  }
  double level_iterated_to(const walker&) const { return level_to; }
  void increment(const walker&) {
    // Same expression as Java so the levels (exact binary fractions) match bit for bit.
    const double half_distances = std::log(100.0 / (100.0 - level_to)) / std::log(2.0);
    if (!(half_distances < 60.0)) {  // at or astronomically near 100 %: Java would overflow
      level_to = 100.0;
      return;
    }
    // T * 2^(k+1) as a double: exact (a power of two times an int) and cannot overflow.
    const double ticks = static_cast<double>(ticks_per_half_distance) *
                         std::ldexp(1.0, static_cast<int>(half_distances) + 1);
    const double next = level_to + 100.0 / ticks;
    level_to = next > level_to ? next : 100.0;  // a stalled level would repeat forever
  }
};

struct recorded_policy {
  std::int32_t visited_index = -1;

  bool has_next(const walker& w) const { return w.base_has_next(); }
  bool reached(const walker& w) const {
    return w.count_at_this_value != 0 && visited_index != w.current_index;
  }
  std::int64_t value_iterated_to(const walker& w) const {
    return w.h.highest_equivalent_value(w.current_value_at_index);
  }
  double level_iterated_to(const walker& w) const { return step_percentile(w); }
  void increment(const walker& w) { visited_index = w.current_index; }
};

struct linear_policy {
  std::int64_t units;
  std::int64_t highest_level;
  std::int64_t lowest_level;

  bool exhausted = false;  // the next step end would overflow int64

  bool has_next(const walker& w) const {
    if (exhausted) return false;
    // Keep stepping until the step passes the end of the last non-empty slot.
    return w.base_has_next() || highest_level + 1 < w.next_value_at_index;
  }
  bool reached(const walker& w) const {
    return w.current_value_at_index >= lowest_level || w.current_index >= w.h.counts_length() - 1;
  }
  std::int64_t value_iterated_to(const walker&) const { return highest_level; }
  double level_iterated_to(const walker& w) const { return step_percentile(w); }
  void increment(const walker& w) {
    if (highest_level > std::numeric_limits<std::int64_t>::max() - units - 1) {
      exhausted = true;
      return;
    }
    highest_level += units;
    lowest_level = w.h.lowest_equivalent_value(highest_level);
  }
};

}  // namespace

std::vector<iteration_step> percentile_steps(const histogram& h, int ticks_per_half_distance) {
  if (h.total_count() <= 0 || ticks_per_half_distance < 1) return {};
  walker w{h};
  percentile_policy policy{ticks_per_half_distance};
  return run(w, policy);
}

std::vector<iteration_step> recorded_value_steps(const histogram& h) {
  if (h.total_count() <= 0) return {};
  walker w{h};
  recorded_policy policy;
  return run(w, policy);
}

std::vector<iteration_step> linear_steps(const histogram& h, std::int64_t value_units_per_bucket) {
  if (h.total_count() <= 0 || value_units_per_bucket < 1) return {};
  walker w{h};
  linear_policy policy{value_units_per_bucket, value_units_per_bucket - 1,
                       h.lowest_equivalent_value(value_units_per_bucket - 1)};
  return run(w, policy);
}

}  // namespace punctual::hdr
