#include "record/view_set.hpp"

#include <algorithm>
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

view_set::view_set(std::size_t names)
    : views_(latency_histograms(std::make_index_sequence<view_count>{})) {
  // Built one by one: a copy of a histogram would touch every page of its counts.
  named_.reserve(names * named_view_count);
  for (std::size_t i = 0; i < names * named_view_count; ++i) named_.emplace_back(latency_params());
}

void interval_counts::add(const interval_counts& o) noexcept {
  planned += o.planned;
  sent += o.sent;
  attempts += o.attempts;
  completed += o.completed;
  ok += o.ok;
  errors += o.errors;
  timeouts += o.timeouts;
  dropped += o.dropped;
  // Workers wait apart: the run's depth at one instant is at most the sum of theirs.
  queue_depth_max += o.queue_depth_max;
}

// Sets with different name counts meet only when one of them has none (the warm-up's): the
// named views then stay apart.
void view_set::add(const view_set& other) noexcept {
  for (std::size_t i = 0; i < view_count; ++i) views_[i].add(other.views_[i]);
  const std::size_t n = std::min(named_.size(), other.named_.size());
  for (std::size_t i = 0; i < n; ++i) named_[i].add(other.named_[i]);
  counts_.add(other.counts_);
}

void view_set::reset() noexcept {
  for (auto& h : views_) h.reset();
  for (auto& h : named_) h.reset();
  counts_ = {};
}

void view_set::reset_releasing() noexcept {
  for (auto& h : views_) h.reset_releasing();
  for (auto& h : named_) h.reset_releasing();
  counts_ = {};
}

std::size_t view_set::resident_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& h : views_) bytes += h.resident_bytes();
  for (const auto& h : named_) bytes += h.resident_bytes();
  return bytes;
}

bool view_set::empty() const noexcept {
  const auto has_counts = [](const hdr::histogram& h) { return h.total_count() != 0; };
  return std::none_of(views_.begin(), views_.end(), has_counts) &&
         std::none_of(named_.begin(), named_.end(), has_counts) && counts_ == interval_counts{};
}

latency_summary summarize(const hdr::histogram& h) noexcept {
  if (h.total_count() == 0) return {};
  return {h.total_count(), h.value_at_percentile(50), h.value_at_percentile(99), h.max()};
}

interval_row summarize_interval(std::int64_t index, const view_set& v) noexcept {
  return {.index = index,
          .counts = v.counts(),
          .response_time = summarize(v[view::response_time]),
          .service_time = summarize(v[view::service_time]),
          .send_lag_p99 = v[view::send_lag].value_at_percentile(99),
          .queue_wait_p99 = v[view::queue_wait].value_at_percentile(99)};
}

}  // namespace punctual::record
