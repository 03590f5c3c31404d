#include "record/intended_seconds.hpp"

#include <bit>
#include <tuple>

#include "record/view_set.hpp"

namespace punctual::record {

second_views::second_views()
    : response_time(latency_params()),
      components{hdr::histogram(latency_params()), hdr::histogram(latency_params()),
                 hdr::histogram(latency_params()), hdr::histogram(latency_params())} {}

void second_views::add(const second_views& other) noexcept {
  response_time.add(other.response_time);
  for (std::size_t i = 0; i < component_count; ++i) components[i].add(other.components[i]);
  planned += other.planned;
  sent += other.sent;
  completed += other.completed;
}

void second_views::reset() noexcept {
  response_time.reset_releasing();
  for (auto& h : components) h.reset_releasing();
  planned = sent = completed = 0;
  second = -1;
}

std::size_t second_views::resident_bytes() const noexcept {
  std::size_t bytes = response_time.resident_bytes();
  for (const auto& h : components) bytes += h.resident_bytes();
  return bytes;
}

bool worse_than(const second_views& a, const second_views& b) noexcept {
  const auto key = [](const second_views& s) {
    return std::make_tuple(s.response_time.value_at_percentile(99), s.response_time.max(),
                           -s.second);
  };
  return key(a) > key(b);
}

// A power of two, so the request path finds a second's slot with a mask, not a division.
intended_seconds::intended_seconds(std::size_t slots)
    : slots_(std::make_unique<slot[]>(std::bit_ceil(slots))), size_(std::bit_ceil(slots)) {}

second_views* intended_seconds::at(std::int64_t second) noexcept {
  slot& s = slots_[static_cast<std::size_t>(second) & (size_ - 1)];
  const slot_state state = s.state.load(std::memory_order_acquire);
  if (state == slot_state::recording && s.views.second == second) return &s.views;
  if (state == slot_state::free && second > retired_through_.load(std::memory_order_relaxed)) {
    s.views.second = second;
    s.state.store(slot_state::recording, std::memory_order_relaxed);
    return &s.views;
  }
  ++lost_;
  return nullptr;
}

const second_views* intended_seconds::peek(std::int64_t second) const noexcept {
  const slot& s = slots_[static_cast<std::size_t>(second) & (size_ - 1)];
  const bool recording = s.state.load(std::memory_order_relaxed) == slot_state::recording;
  return recording && s.views.second == second ? &s.views : nullptr;
}

void intended_seconds::retire_through(std::int64_t second) noexcept {
  if (second <= retired_through_.load(std::memory_order_relaxed)) return;
  for (std::size_t i = 0; i < size_; ++i) {
    slot& s = slots_[i];
    if (s.state.load(std::memory_order_relaxed) == slot_state::recording &&
        s.views.second <= second) {
      s.state.store(slot_state::retired, std::memory_order_release);
    }
  }
  retired_through_.store(second, std::memory_order_release);
}

std::size_t intended_seconds::resident_bytes() const noexcept {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < size_; ++i) bytes += slots_[i].views.resident_bytes();
  return bytes;
}

std::size_t worst_second_finder::resident_bytes() const noexcept {
  std::size_t bytes = worst_ ? worst_->resident_bytes() : 0;
  for (const auto& [second, views] : pending_) bytes += views.resident_bytes();
  return bytes;
}

void worst_second_finder::add(const second_views& s) {
  if (s.second < 0 || s.second >= whole_seconds_) return;
  auto [it, inserted] = pending_.try_emplace(s.second);
  if (inserted) it->second.second = s.second;
  it->second.add(s);
}

void worst_second_finder::complete_through(std::int64_t second) {
  while (!pending_.empty() && pending_.begin()->first <= second) {
    auto node = pending_.extract(pending_.begin());
    second_views& s = node.mapped();
    if (s.response_time.total_count() == 0 || s.second >= whole_seconds_) continue;
    if (!worst_ || worse_than(s, *worst_)) worst_ = std::move(s);
  }
}

}  // namespace punctual::record
