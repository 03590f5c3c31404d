// HdrHistogram (integer, 64-bit counts), following the published format.
// Public API of punctual's histogram library: it depends on nothing else in punctual.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace punctual::hdr {

struct histogram_params {
  std::int64_t lowest_discernible_value = 1;
  std::int64_t highest_trackable_value = 3'600'000'000'000;  // 1 h in ns
  int significant_digits = 3;

  friend bool operator==(const histogram_params&, const histogram_params&) = default;
};

// True when the parameters are accepted (ldv >= 1, htv >= 2*ldv, digits 1..5, layout fits).
bool valid(const histogram_params& params) noexcept;
// countsArrayLength (spec 1.3) the parameters imply, without allocating; 0 when !valid(params).
std::int64_t counts_length_for(const histogram_params& params) noexcept;

// What happens to a histogram's pages once their values are no longer needed, process-wide.
// give_back (the default): release() hands them to the kernel and a freed block is unmapped, so
// that a run's resident memory follows the values of the spans in flight (docs/design.md,
// "Memory"); the next values fault their pages in again. keep_and_zero: release() zeroes the
// pages that hold data instead, and a freed block waits, its pages zeroed when it is taken, for
// the next histogram of its size (up to `pooled_blocks` of them). For the simulation, whose
// virtual seconds pass hundreds of times faster than real ones: there, giving pages back and
// faulting them in again took a third of its CPU time. Set it while no histogram is in use.
enum class page_policy { give_back, keep_and_zero };
void set_page_policy(page_policy policy, std::size_t pooled_blocks = 1024);
page_policy current_page_policy() noexcept;

// A histogram's slots. They start as pages the kernel has zeroed and maps only when first written
// (large blocks are mapped by hand, small ones come from calloc), so slots nothing was recorded
// into are never touched: a histogram occupies memory for the range of values it saw,
// not for the ~270 KB its layout spans. That is what lets a run keep a histogram per request name.
class zeroed_counts {
 public:
  zeroed_counts() = default;
  explicit zeroed_counts(std::size_t size);            // throws std::bad_alloc
  zeroed_counts(const zeroed_counts& other) = delete;  // histogram copies the slots in use
  zeroed_counts(zeroed_counts&& other) noexcept;
  zeroed_counts& operator=(zeroed_counts other) noexcept;
  ~zeroed_counts();

  std::int64_t& operator[](std::size_t i) noexcept { return data_[i]; }
  const std::int64_t& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::size_t size() const noexcept { return size_; }
  // Zeroes slots [first, last].
  void clear(std::size_t first, std::size_t last) noexcept;
  // Hands a mapped block's pages back to the kernel: every slot reads zero again and costs
  // memory only once written. False, and nothing done, for a calloc'd block (its owner zeroes
  // the slots it used: zeroing all of it would write every page).
  bool release() noexcept;
  // Bytes of the slots' memory that is resident now (calloc'd blocks: all of it).
  std::size_t resident_bytes() const noexcept;

 private:
  std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

class histogram {
 public:
  // Throws std::invalid_argument when !valid(params).
  explicit histogram(const histogram_params& params = {});
  // A copy writes only the slots between the lowest and highest sample: it takes memory for the
  // values it holds, as the original does, not for its whole layout.
  histogram(const histogram& other);
  histogram(histogram&& other) noexcept = default;
  histogram& operator=(const histogram& other);
  histogram& operator=(histogram&& other) noexcept = default;
  ~histogram() = default;

  const histogram_params& params() const noexcept { return params_; }

  // Recording never throws and never loses a sample: a negative value records as 0, and a value
  // above highest_trackable_value is clamped to it and counted in over_range_count().
  void record(std::int64_t value) noexcept;
  // A hint that value is recorded soon: its slot's memory is fetched now, so that several
  // histograms' cache misses overlap instead of each stalling its record() in turn.
  void prefetch(std::int64_t value) const noexcept;
  void record_n(std::int64_t value, std::int64_t count) noexcept;
  // Records value, then value - I, value - 2I, ... while >= I (spec 6.1). I <= 0: plain record.
  void record_corrected(std::int64_t value, std::int64_t expected_interval) noexcept;

  // Adds every count of other; slots beyond this layout clamp and count as over range.
  void add(const histogram& other) noexcept;
  void reset() noexcept;
  // reset() that also gives the slots' pages back (zeroed_counts::release): for a histogram that
  // is reused for one short span after another, so that its memory follows the values of the
  // current span rather than every value any span ever saw.
  void reset_releasing() noexcept;
  // Resident bytes of the slots (zeroed_counts::resident_bytes), for memory accounting.
  std::size_t resident_bytes() const noexcept { return counts_.resident_bytes(); }
  // Java's post-hoc correction (spec 6.2): uses each slot's highest equivalent value.
  histogram copy_corrected_for_coordinated_omission(std::int64_t expected_interval) const;

  std::int64_t total_count() const noexcept {
    if (total_stale_) refresh_total();
    return total_count_;
  }
  std::int64_t over_range_count() const noexcept { return over_range_count_; }
  std::int64_t min() const noexcept;  // Java getMinValue
  std::int64_t max() const noexcept;  // Java getMaxValue (highest equivalent value)
  double mean() const noexcept;
  double stddev() const noexcept;
  // Java's valueAtPercentile (spec 2.5): percentile in [0, 100].
  std::int64_t value_at_percentile(double percentile) const noexcept;

  // Layout (spec 1-2).
  std::int32_t counts_length() const noexcept { return counts_length_; }
  std::int32_t bucket_count() const noexcept { return bucket_count_; }
  std::int32_t sub_bucket_count() const noexcept { return sub_bucket_count_; }
  std::int64_t highest_recordable_value() const noexcept;
  std::int32_t index_of(std::int64_t value) const noexcept;
  std::int64_t value_from_index(std::int32_t index) const noexcept;
  std::int64_t lowest_equivalent_value(std::int64_t value) const noexcept;
  std::int64_t highest_equivalent_value(std::int64_t value) const noexcept;
  std::int64_t median_equivalent_value(std::int64_t value) const noexcept;
  std::int64_t size_of_equivalent_value_range(std::int64_t value) const noexcept;

  std::int64_t count_at_index(std::int32_t index) const noexcept { return counts_[index]; }
  // For decoders: sets a slot's count and keeps totals, min and max consistent.
  void set_count_at_index(std::int32_t index, std::int64_t count) noexcept;

 private:
  // (implementation detail; see src/histogram/histogram.cpp)
  histogram_params params_;
  std::int32_t unit_magnitude_ = 0;
  std::int32_t sub_bucket_count_magnitude_ = 0;
  std::int32_t sub_bucket_half_count_ = 0;
  std::int32_t sub_bucket_count_ = 0;
  std::int64_t sub_bucket_mask_ = 0;
  std::int32_t bucket_count_ = 0;
  std::int32_t counts_length_ = 0;
  // The total is summed on demand: keeping it current in record() would chain every call to
  // the previous one through a load and a store (~2 ns of the ~3 ns budget).
  mutable std::int64_t total_count_ = 0;
  mutable bool total_stale_ = false;
  std::int64_t over_range_count_ = 0;
  std::int32_t min_index_ = -1;  // lowest non-empty slot (empty_min_index when empty)
  std::int32_t max_index_ = -1;  // highest non-empty slot
  zeroed_counts counts_;

  // Private helpers (added by the histogram implementation; not part of the public contract).
  static constexpr std::int32_t empty_min_index = 0x7fffffff;  // min_index_ while empty
  std::int32_t leading_zero_count_base_ = 0;                   // 64 - unit_magnitude - m
  std::int32_t bucket_index_of(std::int64_t value) const noexcept;
  std::int32_t index_of_non_negative(std::int64_t value) const noexcept;
  std::int64_t clamp_value(std::int64_t value, std::int64_t count) noexcept;
  void add_at_index(std::int32_t index, std::int64_t count) noexcept;
  void record_series(std::int64_t value, std::int64_t count, std::int64_t interval) noexcept;
  void rescan_min_max() noexcept;
  void refresh_total() const noexcept;
};

// record() is the per-response hot path: defined here so callers inline it (no call, no
// allocation, one predictable branch for the over-range case).
inline std::int32_t histogram::bucket_index_of(std::int64_t value) const noexcept {
  return leading_zero_count_base_ -
         __builtin_clzll(static_cast<std::uint64_t>(value | sub_bucket_mask_));
}

inline std::int32_t histogram::index_of_non_negative(std::int64_t value) const noexcept {
  const std::int32_t bucket = bucket_index_of(value);
  const auto sub_bucket = static_cast<std::int32_t>(value >> (bucket + unit_magnitude_));
  return ((bucket + 1) << (sub_bucket_count_magnitude_ - 1)) +
         (sub_bucket - sub_bucket_half_count_);
}

inline std::int64_t histogram::clamp_value(std::int64_t value, std::int64_t count) noexcept {
  value = value < 0 ? 0 : value;
  if (value > params_.highest_trackable_value) [[unlikely]] {
    over_range_count_ += count;
    value = params_.highest_trackable_value;
  }
  return value;
}

inline void histogram::add_at_index(std::int32_t index, std::int64_t count) noexcept {
  counts_[static_cast<std::size_t>(index)] += count;
  total_stale_ = true;
  // Branches, not conditional moves: they are almost never taken once the range is known, and
  // an unconditional store would chain every record() to the previous one through memory.
  if (index < min_index_) [[unlikely]]
    min_index_ = index;
  if (index > max_index_) [[unlikely]]
    max_index_ = index;
}

inline void histogram::prefetch(std::int64_t value) const noexcept {
  value = value < 0                                 ? 0
          : value > params_.highest_trackable_value ? params_.highest_trackable_value
                                                    : value;
  const std::int64_t* slot = &counts_[static_cast<std::size_t>(index_of_non_negative(value))];
#if defined(__x86_64__)
  // GCC 12 at -O2 drops a __builtin_prefetch of this address (it keeps it at -O0).
  asm volatile("prefetcht0 %0" : : "m"(*slot));
#else
  __builtin_prefetch(slot, 0, 3);
#endif
}

inline void histogram::record(std::int64_t value) noexcept {
  add_at_index(index_of_non_negative(clamp_value(value, 1)), 1);
}

}  // namespace punctual::hdr
