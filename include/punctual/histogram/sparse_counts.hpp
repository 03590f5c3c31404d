// A histogram's non-empty slots, (index, count) in index order, in one layout: what a merge
// keeps of each of thousands of intervals, where a whole histogram is ~270 KB in punctual's
// layout and an interval's is mostly empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {

class sparse_counts {
 public:
  // Adds h's counts, in `layout` (h is re-recorded into it first when its own differs). An
  // over-range count is not kept: decoded intervals have none (the V2 format carries none).
  void add(const histogram& h, const histogram_params& layout);
  // Adds the counts into h, which must have the layout they were added in.
  void add_to(histogram& h) const;
  std::size_t size() const noexcept { return slots_.size(); }

 private:
  std::vector<std::pair<std::int32_t, std::int64_t>> slots_;
};

}  // namespace punctual::hdr
