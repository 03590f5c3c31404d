#include "engine/request_source.hpp"

#include <algorithm>
#include <utility>

#include "schedule/prng.hpp"

namespace punctual::engine {

weighted_mix::weighted_mix(const std::vector<run::named_request>& entries, std::uint64_t seed,
                           std::shared_ptr<const schedule::trace> trace)
    : entries_(entries), seed_(seed), trace_(std::move(trace)) {
  if (trace_) {
    for (const auto& name : trace_->names()) {
      const auto it = std::find_if(entries_.begin(), entries_.end(),
                                   [&](const run::named_request& e) { return e.name == name; });
      by_trace_name_.push_back(it == entries_.end() ? -1 : static_cast<int>(it - entries_.begin()));
    }
  }
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
  if (!by_trace_name_.empty() && index < trace_->size()) {
    const int named = by_trace_name_[trace_->name_id(index)];
    if (named >= 0) return static_cast<std::uint16_t>(named);
  }
  const double u = schedule::keyed_unit(seed_, schedule::draw_purpose::request_mix, index);
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return static_cast<std::uint16_t>(it - cumulative_.begin());
}

}  // namespace punctual::engine
