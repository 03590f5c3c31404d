#include "record/view_set.hpp"

#include <utility>

namespace punctual::record {

hdr::histogram_params latency_params() noexcept {
  return {.lowest_discernible_value = 1,
          .highest_trackable_value = 3'600'000'000'000,
          .significant_digits = 3};
}

namespace {

template <std::size_t... i>
std::array<hdr::histogram, sizeof...(i)> latency_histograms(std::index_sequence<i...>) {
  return {(static_cast<void>(i), hdr::histogram(latency_params()))...};
}

}  // namespace

view_set::view_set() : views_(latency_histograms(std::make_index_sequence<view_count>{})) {}

void view_set::add(const view_set& other) noexcept {
  for (std::size_t i = 0; i < view_count; ++i) views_[i].add(other.views_[i]);
}

void view_set::reset() noexcept {
  for (auto& h : views_) h.reset();
}

bool view_set::empty() const noexcept {
  for (const auto& h : views_) {
    if (h.total_count() != 0) return false;
  }
  return true;
}

}  // namespace punctual::record
