#include "engine/request_source.hpp"

#include <algorithm>
#include <utility>

#include "schedule/prng.hpp"

namespace punctual::engine {
namespace {

std::vector<double> weights_of(const std::vector<run::named_request>& entries) {
  std::vector<double> w;
  for (const auto& e : entries) w.push_back(e.weight);
  return w;
}

}  // namespace

weighted_mix::weighted_mix(const std::vector<run::named_request>& entries, std::uint64_t seed,
                           std::shared_ptr<const schedule::trace> trace)
    : entries_(entries), choice_(weights_of(entries)), seed_(seed), trace_(std::move(trace)) {
  if (!trace_) return;
  for (const auto& name : trace_->names()) {
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const run::named_request& e) { return e.name == name; });
    by_trace_name_.push_back(it == entries_.end() ? -1 : static_cast<int>(it - entries_.begin()));
  }
}

std::uint16_t weighted_mix::name_of(std::uint64_t index) const noexcept {
  if (!by_trace_name_.empty() && index < trace_->size()) {
    const int named = by_trace_name_[trace_->name_id(index)];
    if (named >= 0) return static_cast<std::uint16_t>(named);
  }
  const double u = schedule::keyed_unit(seed_, schedule::draw_purpose::request_mix, index);
  return static_cast<std::uint16_t>(choice_.pick(u));
}

}  // namespace punctual::engine
