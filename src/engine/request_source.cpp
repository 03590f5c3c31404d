#include "engine/request_source.hpp"

#include <algorithm>

#include "schedule/prng.hpp"

namespace punctual::engine {

weighted_mix::weighted_mix(const std::vector<run::named_request>& entries, std::uint64_t seed)
    : entries_(entries), seed_(seed) {
  double total = 0;
  for (const auto& e : entries_) total += e.weight;
  double sum = 0;
  for (const auto& e : entries_) {
    sum += e.weight;
    cumulative_.push_back(sum / total);
  }
  // The last entry that can be drawn owns everything up to 1, whatever the sums rounded to;
  // zero-weight entries after it share its edge, and upper_bound stops at it first.
  std::size_t last = entries_.size();
  while (last > 0 && entries_[last - 1].weight <= 0) --last;
  if (last > 0)
    std::fill(cumulative_.begin() + static_cast<std::ptrdiff_t>(last - 1), cumulative_.end(), 2.0);
}

std::uint16_t weighted_mix::name_of(std::uint64_t index) const noexcept {
  const double u = schedule::keyed_unit(seed_, schedule::draw_purpose::request_mix, index);
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return static_cast<std::uint16_t>(it - cumulative_.begin());
}

}  // namespace punctual::engine
