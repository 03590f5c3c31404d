// HdrHistogram core: layout (spec 1), indexing (spec 2), recording, statistics.
#include "punctual/histogram/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace punctual::hdr {

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

struct layout {
  std::int32_t unit_magnitude = 0;
  std::int32_t sub_bucket_count_magnitude = 0;
  std::int32_t bucket_count = 0;
  std::int64_t counts_length = 0;
};

int floor_log2(std::uint64_t x) noexcept {
  return 63 - __builtin_clzll(x);
}

// Integer-only so no platform's log() rounding can change the layout.
int sub_bucket_count_magnitude_for(int digits) noexcept {
  std::int64_t largest_single_unit = 2;
  for (int i = 0; i < digits; ++i) largest_single_unit *= 10;
  int m = 0;
  while ((std::int64_t{1} << m) < largest_single_unit) ++m;
  return m;
}

// Returns false when the parameters are out of range or the layout would not fit.
bool compute_layout(const histogram_params& p, layout& out) noexcept {
  if (p.lowest_discernible_value < 1 || p.significant_digits < 1 || p.significant_digits > 5) {
    return false;
  }
  if (p.lowest_discernible_value > int64_max / 2 ||
      p.highest_trackable_value < 2 * p.lowest_discernible_value) {
    return false;
  }
  const int u = floor_log2(static_cast<std::uint64_t>(p.lowest_discernible_value));
  const int m = sub_bucket_count_magnitude_for(p.significant_digits);
  if (u + m > 62) return false;
  // Spec 1.3, including Java's guard against the shift overflowing.
  std::int64_t smallest_untrackable = std::int64_t{1} << (u + m);
  std::int32_t buckets = 1;
  while (smallest_untrackable <= p.highest_trackable_value) {
    if (smallest_untrackable > int64_max / 2) {
      ++buckets;
      break;
    }
    smallest_untrackable <<= 1;
    ++buckets;
  }
  out.unit_magnitude = u;
  out.sub_bucket_count_magnitude = m;
  out.bucket_count = buckets;
  out.counts_length = static_cast<std::int64_t>(buckets + 1) << (m - 1);
  return out.counts_length <= std::numeric_limits<std::int32_t>::max();
}

}  // namespace

bool valid(const histogram_params& params) noexcept {
  layout l;
  return compute_layout(params, l);
}

std::int64_t counts_length_for(const histogram_params& params) noexcept {
  layout l;
  return compute_layout(params, l) ? l.counts_length : 0;
}

histogram::histogram(const histogram_params& params) : params_(params) {
  layout l;
  if (!compute_layout(params, l)) throw std::invalid_argument("invalid histogram parameters");
  unit_magnitude_ = l.unit_magnitude;
  sub_bucket_count_magnitude_ = l.sub_bucket_count_magnitude;
  sub_bucket_count_ = std::int32_t{1} << l.sub_bucket_count_magnitude;
  sub_bucket_half_count_ = sub_bucket_count_ / 2;
  sub_bucket_mask_ = static_cast<std::int64_t>(sub_bucket_count_ - 1) << unit_magnitude_;
  leading_zero_count_base_ = 64 - unit_magnitude_ - sub_bucket_count_magnitude_;
  bucket_count_ = l.bucket_count;
  counts_length_ = static_cast<std::int32_t>(l.counts_length);
  counts_ = zeroed_counts(static_cast<std::size_t>(counts_length_));
  min_index_ = empty_min_index;
  max_index_ = -1;
}

histogram::histogram(const histogram& other) : histogram(other.params_) {
  total_count_ = other.total_count_;
  total_stale_ = other.total_stale_;
  over_range_count_ = other.over_range_count_;
  if (other.max_index_ < 0 || other.counts_.size() == 0) return;  // empty, or moved from
  min_index_ = other.min_index_;
  max_index_ = other.max_index_;
  std::memcpy(&counts_[static_cast<std::size_t>(min_index_)],
              &other.counts_[static_cast<std::size_t>(min_index_)],
              static_cast<std::size_t>(max_index_ - min_index_ + 1) * sizeof(std::int64_t));
}

histogram& histogram::operator=(const histogram& other) {
  if (this != &other) *this = histogram(other);
  return *this;
}

// ---- indexing -------------------------------------------------------------------------------

std::int32_t histogram::index_of(std::int64_t value) const noexcept {
  return index_of_non_negative(std::max<std::int64_t>(value, 0));
}

std::int64_t histogram::value_from_index(std::int32_t index) const noexcept {
  index = std::clamp(index, 0, counts_length_ - 1);  // out-of-range shifts would be UB
  std::int32_t bucket = (index >> (sub_bucket_count_magnitude_ - 1)) - 1;
  std::int64_t sub_bucket = (index & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket < 0) {
    sub_bucket -= sub_bucket_half_count_;
    bucket = 0;
  }
  return sub_bucket << (bucket + unit_magnitude_);
}

std::int64_t histogram::size_of_equivalent_value_range(std::int64_t value) const noexcept {
  value = std::max<std::int64_t>(value, 0);
  return std::int64_t{1} << (unit_magnitude_ + bucket_index_of(value));
}

std::int64_t histogram::lowest_equivalent_value(std::int64_t value) const noexcept {
  value = std::max<std::int64_t>(value, 0);
  const std::int32_t shift = bucket_index_of(value) + unit_magnitude_;
  return (value >> shift) << shift;
}

std::int64_t histogram::highest_equivalent_value(std::int64_t value) const noexcept {
  // Unsigned so the top slot of the int64 range (lowest + size == 2^63) does not overflow.
  const auto next = static_cast<std::uint64_t>(lowest_equivalent_value(value)) +
                    static_cast<std::uint64_t>(size_of_equivalent_value_range(value));
  return static_cast<std::int64_t>(next - 1);
}

std::int64_t histogram::median_equivalent_value(std::int64_t value) const noexcept {
  return lowest_equivalent_value(value) + (size_of_equivalent_value_range(value) >> 1);
}

std::int64_t histogram::highest_recordable_value() const noexcept {
  return highest_equivalent_value(value_from_index(counts_length_ - 1));
}

// ---- recording ------------------------------------------------------------------------------

void histogram::record_n(std::int64_t value, std::int64_t count) noexcept {
  if (count <= 0) return;  // a negative count would corrupt totals; zero changes nothing
  add_at_index(index_of(clamp_value(value, count)), count);
}

// Records value, value - I, value - 2I, ... (>= I) with `count` each. Values sharing a slot are
// added in one step, so a small interval against a large value costs O(slots), not O(value / I).
void histogram::record_series(std::int64_t value, std::int64_t count,
                              std::int64_t interval) noexcept {
  add_at_index(index_of(value), count);
  if (interval <= 0 || value - interval < interval) return;  // no 2*I: it may overflow
  std::int64_t v = value - interval;
  while (v >= interval) {
    const std::int64_t low = std::max(lowest_equivalent_value(v), interval);
    const std::int64_t in_slot = (v - low) / interval + 1;
    add_at_index(index_of(v), count * in_slot);
    v -= in_slot * interval;
  }
}

void histogram::record_corrected(std::int64_t value, std::int64_t expected_interval) noexcept {
  record_series(clamp_value(value, 1), 1, expected_interval);
}

void histogram::add(const histogram& other) noexcept {
  over_range_count_ += other.over_range_count_;
  if (other.max_index_ < 0) return;
  const bool same_layout = other.unit_magnitude_ == unit_magnitude_ &&
                           other.sub_bucket_count_ == sub_bucket_count_ &&
                           other.max_index_ < counts_length_;
  for (std::int32_t i = other.min_index_; i <= other.max_index_; ++i) {
    const std::int64_t c = other.counts_[static_cast<std::size_t>(i)];
    if (c == 0) continue;
    if (same_layout) {
      add_at_index(i, c);
    } else {
      // Java re-records each slot's lowest value when the layouts differ.
      record_n(other.value_from_index(i), c);
    }
  }
}

void histogram::refresh_total() const noexcept {
  std::int64_t sum = 0;
  for (std::int32_t i = min_index_; i <= max_index_; ++i)
    sum += counts_[static_cast<std::size_t>(i)];
  total_count_ = sum;
  total_stale_ = false;
}

void histogram::reset() noexcept {
  // Every non-zero slot lies in [min_index_, max_index_]; the slots outside were never touched.
  if (max_index_ >= 0) {
    counts_.clear(static_cast<std::size_t>(min_index_), static_cast<std::size_t>(max_index_));
  }
  total_count_ = 0;
  total_stale_ = false;
  over_range_count_ = 0;
  min_index_ = empty_min_index;
  max_index_ = -1;
}

void histogram::reset_releasing() noexcept {
  if (counts_.release()) max_index_ = -1;  // nothing left for reset() to clear
  reset();
}

histogram histogram::copy_corrected_for_coordinated_omission(std::int64_t expected_interval) const {
  histogram out(params_);
  out.over_range_count_ = over_range_count_;
  if (max_index_ < 0) return out;
  for (std::int32_t i = min_index_; i <= max_index_; ++i) {
    const std::int64_t c = counts_[static_cast<std::size_t>(i)];
    if (c == 0) continue;
    // The slot's highest equivalent value stays in this slot, so no clamping is needed.
    out.record_series(highest_equivalent_value(value_from_index(i)), c, expected_interval);
  }
  return out;
}

void histogram::set_count_at_index(std::int32_t index, std::int64_t count) noexcept {
  if (index < 0 || index >= counts_length_ || count < 0) return;
  auto& slot = counts_[static_cast<std::size_t>(index)];
  total_stale_ = true;
  slot = count;
  if (count > 0) {
    min_index_ = std::min(min_index_, index);
    max_index_ = std::max(max_index_, index);
  } else if (index == min_index_ || index == max_index_) {
    rescan_min_max();
  }
}

void histogram::rescan_min_max() noexcept {
  min_index_ = empty_min_index;
  max_index_ = -1;
  for (std::int32_t i = 0; i < counts_length_; ++i) {
    if (counts_[static_cast<std::size_t>(i)] != 0) {
      min_index_ = std::min(min_index_, i);
      max_index_ = i;
    }
  }
}

// ---- statistics -----------------------------------------------------------------------------

std::int64_t histogram::min() const noexcept {
  // min_index_ is the lowest non-empty slot, so slot 0 being used yields 0 as Java does.
  return max_index_ < 0 ? 0 : value_from_index(min_index_);
}

std::int64_t histogram::max() const noexcept {
  return max_index_ < 0 ? 0 : highest_equivalent_value(value_from_index(max_index_));
}

double histogram::mean() const noexcept {
  const std::int64_t total = total_count();
  if (total == 0) return 0.0;
  double sum = 0.0;  // Java sums in double in ascending slot order; keep the same rounding
  for (std::int32_t i = min_index_; i <= max_index_; ++i) {
    const std::int64_t c = counts_[static_cast<std::size_t>(i)];
    if (c == 0) continue;
    sum +=
        static_cast<double>(median_equivalent_value(value_from_index(i))) * static_cast<double>(c);
  }
  return sum / static_cast<double>(total);
}

double histogram::stddev() const noexcept {
  const std::int64_t total = total_count();
  if (total == 0) return 0.0;
  const double m = mean();
  double sum = 0.0;
  for (std::int32_t i = min_index_; i <= max_index_; ++i) {
    const std::int64_t c = counts_[static_cast<std::size_t>(i)];
    if (c == 0) continue;
    const double deviation = static_cast<double>(median_equivalent_value(value_from_index(i))) - m;
    sum += deviation * deviation * static_cast<double>(c);
  }
  return std::sqrt(sum / static_cast<double>(total));
}

std::int64_t histogram::value_at_percentile(double percentile) const noexcept {
  const std::int64_t total = total_count();
  if (total == 0) return 0;
  // One ulp below p absorbs rounding before the ceil (Java's getValueAtPercentile).
  double q = std::nextafter(percentile, -std::numeric_limits<double>::infinity());
  q = std::isnan(q) ? 0.0 : std::min(std::max(q, 0.0), 100.0);
  const double fp_count = (q * static_cast<double>(total)) / 100.0;
  const auto target = std::max<std::int64_t>(static_cast<std::int64_t>(std::ceil(fp_count)), 1);
  std::int64_t running = 0;
  for (std::int32_t i = min_index_; i <= max_index_; ++i) {
    running += counts_[static_cast<std::size_t>(i)];
    if (running >= target) {
      const std::int64_t v = value_from_index(i);
      return percentile == 0.0 ? lowest_equivalent_value(v) : highest_equivalent_value(v);
    }
  }
  return 0;
}

}  // namespace punctual::hdr
