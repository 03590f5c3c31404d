// Picking one of several entries in proportion to their weights, from one uniform draw. Used by
// request mixes and by the hybrid model's choice of scenario.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace punctual::schedule {

class weighted_choice {
 public:
  // Weights are >= 0 and add up to more than 0 (the loaders check it).
  explicit weighted_choice(const std::vector<double>& weights) {
    double total = 0;
    for (const double w : weights) total += w;
    double sum = 0;
    for (const double w : weights) {
      sum += w;
      cumulative_.push_back(sum / total);
    }
    // The last entry that can be drawn owns everything up to 1, whatever the sums rounded to;
    // zero-weight entries after it share its edge, and upper_bound stops at it first.
    std::size_t last = weights.size();
    while (last > 0 && weights[last - 1] <= 0) --last;
    if (last > 0) {
      std::fill(cumulative_.begin() + static_cast<std::ptrdiff_t>(last - 1), cumulative_.end(),
                2.0);
    }
  }

  // The entry whose share of [0, 1) holds u: the first whose cumulative share exceeds u.
  std::size_t pick(double u) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), u) -
                                    cumulative_.begin());
  }

 private:
  std::vector<double> cumulative_;
};

}  // namespace punctual::schedule
