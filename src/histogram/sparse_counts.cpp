#include "punctual/histogram/sparse_counts.hpp"

namespace punctual::hdr {

void sparse_counts::add(const histogram& h, const histogram_params& layout) {
  if (h.total_count() == 0) return;
  if (h.params() != layout) {
    histogram same(layout);
    same.add(h);
    return add(same, layout);
  }
  std::vector<std::pair<std::int32_t, std::int64_t>> merged;
  merged.reserve(slots_.size() + 64);
  auto mine = slots_.begin();
  for (std::int32_t i = h.index_of(h.min()); i <= h.index_of(h.max()); ++i) {
    const std::int64_t c = h.count_at_index(i);
    if (c == 0) continue;
    while (mine != slots_.end() && mine->first < i) merged.push_back(*mine++);
    merged.emplace_back(i, mine != slots_.end() && mine->first == i ? c + (mine++)->second : c);
  }
  merged.insert(merged.end(), mine, slots_.end());
  slots_ = std::move(merged);
}

void sparse_counts::add_to(histogram& h) const {
  for (const auto& [index, count] : slots_) h.record_n(h.value_from_index(index), count);
}

}  // namespace punctual::hdr
