// Iteration over a histogram's slots, following Java's iterators (spec 5.2). Not a hot path:
// each function returns every step at once.
#pragma once

#include <cstdint>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

struct iteration_step {
  std::int64_t value_iterated_to = 0;    // highest equivalent value of the slot (linear: step end)
  std::int64_t value_iterated_from = 0;  // value_iterated_to of the previous step (0 at first)
  std::int64_t count_at_value_iterated_to = 0;  // count of the slot the step stopped at
  std::int64_t count_added_in_this_step = 0;
  std::int64_t total_count_to_this_value = 0;
  std::int64_t total_value_to_this_value = 0;  // sum of count * highest equivalent value so far
  double percentile = 0.0;                     // exact: 100 * total_count_to_this_value / total
  double percentile_level_iterated_to = 0.0;   // the reporting level (percentile iteration)
};

// Java PercentileIterator: levels 0, then 100/ticks steps where ticks doubles per halving of the
// distance to 100 %; ends with one step at level 100. Empty when the histogram is empty or
// ticks_per_half_distance < 1.
std::vector<iteration_step> percentile_steps(const histogram& h, int ticks_per_half_distance);

// Java RecordedValuesIterator: one step per non-empty slot, in index order.
std::vector<iteration_step> recorded_value_steps(const histogram& h);

// Java LinearIterator: steps ending at k * value_units_per_bucket - 1 until the last non-empty
// slot is passed. Empty when the histogram is empty or value_units_per_bucket < 1.
std::vector<iteration_step> linear_steps(const histogram& h, std::int64_t value_units_per_bucket);

}  // namespace punctual::hdr
