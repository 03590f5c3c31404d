// Layout, indexing, recording and statistics of punctual::hdr::histogram (spec 1, 2, 6).
#include "punctual/histogram/histogram.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "platform/sanitizers.hpp"

namespace punctual::hdr {
namespace {

histogram_params params(std::int64_t ldv, std::int64_t htv, int sig) {
  return {ldv, htv, sig};
}

std::set<std::int64_t> lowest_values_of_non_empty_slots(const histogram& h) {
  std::set<std::int64_t> out;
  for (std::int32_t i = 0; i < h.counts_length(); ++i) {
    if (h.count_at_index(i) != 0) out.insert(h.value_from_index(i));
  }
  return out;
}

struct layout_row {
  std::int64_t ldv, htv;
  int sig;
  std::int32_t sub_buckets, buckets, counts_length;
  std::int64_t largest_recordable;
};

TEST(histogram_layout, matches_spec_table_1_3) {
  const layout_row rows[] = {
      {1, 3'600'000'000, 3, 2048, 22, 23'552, 4'294'967'295},
      {1, 60'000'000, 2, 256, 19, 2'560, 67'108'863},
      {1, 3'600'000'000'000, 3, 2048, 32, 33'792, 4'398'046'511'103},
      {1000, 3'600'000'000'000, 3, 2048, 23, 24'576, 4'398'046'511'103},
      {20000, 3'600'000'000'000, 2, 256, 21, 2'816, 4'398'046'511'103},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.ldv);
    SCOPED_TRACE(r.htv);
    const histogram h(params(r.ldv, r.htv, r.sig));
    EXPECT_EQ(h.sub_bucket_count(), r.sub_buckets);
    EXPECT_EQ(h.bucket_count(), r.buckets);
    EXPECT_EQ(h.counts_length(), r.counts_length);
    EXPECT_EQ(counts_length_for(h.params()), r.counts_length);
    EXPECT_EQ(h.highest_recordable_value(), r.largest_recordable);
  }
}

TEST(histogram_layout, sub_bucket_counts_per_digit_count) {
  const std::int32_t expected[] = {32, 256, 2048, 32768, 262144};
  for (int sig = 1; sig <= 5; ++sig) {
    EXPECT_EQ(histogram(params(1, 1'000'000, sig)).sub_bucket_count(), expected[sig - 1]);
  }
}

TEST(histogram_layout, rejects_bad_parameters) {
  EXPECT_FALSE(valid(params(0, 1000, 3)));
  EXPECT_FALSE(valid(params(-5, 1000, 3)));
  EXPECT_FALSE(valid(params(10, 19, 3)));
  EXPECT_TRUE(valid(params(10, 20, 3)));
  EXPECT_FALSE(valid(params(1, 1000, 0)));
  EXPECT_FALSE(valid(params(1, 1000, 6)));
  EXPECT_FALSE(valid(params(std::int64_t{1} << 61, INT64_MAX, 3)));  // u + m > 62
  EXPECT_TRUE(valid(params(1, INT64_MAX, 5)));
  EXPECT_EQ(counts_length_for(params(0, 1000, 3)), 0);
  EXPECT_THROW(histogram(params(1, 1, 3)), std::invalid_argument);
}

struct index_row {
  std::int64_t v;
  std::int32_t index;
  std::int64_t lowest, highest, median, size;
};

TEST(histogram_indexing, matches_spec_table_2_4) {
  const histogram h(params(1, 3'600'000'000, 3));
  const index_row rows[] = {
      {0, 0, 0, 0, 0, 1},
      {1000, 1000, 1000, 1000, 1000, 1},
      {2047, 2047, 2047, 2047, 2047, 1},
      {2048, 2048, 2048, 2049, 2049, 2},
      {2049, 2048, 2048, 2049, 2049, 2},
      {4096, 3072, 4096, 4099, 4098, 4},
      {5000, 3298, 5000, 5003, 5002, 4},
      {123456, 8073, 123456, 123519, 123488, 64},
      {2500000, 12484, 2498560, 2500607, 2499584, 2048},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.v);
    EXPECT_EQ(h.index_of(r.v), r.index);
    EXPECT_EQ(h.value_from_index(r.index), r.lowest);
    EXPECT_EQ(h.lowest_equivalent_value(r.v), r.lowest);
    EXPECT_EQ(h.highest_equivalent_value(r.v), r.highest);
    EXPECT_EQ(h.median_equivalent_value(r.v), r.median);
    EXPECT_EQ(h.size_of_equivalent_value_range(r.v), r.size);
  }
}

TEST(histogram_indexing, unit_magnitude_from_ldv_1000) {
  const histogram h(params(1000, 3'600'000'000'000, 3));
  EXPECT_EQ(h.index_of(1'000'000), 1953);
  EXPECT_EQ(h.lowest_equivalent_value(1'000'000), 999'936);
  EXPECT_EQ(h.highest_equivalent_value(1'000'000), 1'000'447);
  EXPECT_EQ(h.index_of(511), 0);  // ldv 1000 behaves like 512
  EXPECT_EQ(h.index_of(512), 1);
}

TEST(histogram_indexing, every_slot_round_trips_and_slots_are_contiguous) {
  const histogram h(params(1, 3'600'000'000'000, 3));
  for (std::int32_t i = 0; i < h.counts_length(); ++i) {
    const std::int64_t low = h.value_from_index(i);
    ASSERT_EQ(h.index_of(low), i);
    ASSERT_EQ(h.index_of(h.highest_equivalent_value(low)), i);
    if (i + 1 < h.counts_length()) {
      ASSERT_EQ(h.highest_equivalent_value(low) + 1, h.value_from_index(i + 1));
    }
  }
}

TEST(histogram_record, counts_and_statistics) {
  histogram h(params(1, 3'600'000'000, 3));
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.value_at_percentile(50), 0);
  EXPECT_EQ(h.mean(), 0.0);
  h.record(5000);
  h.record_n(5001, 3);
  h.record(123456);
  EXPECT_EQ(h.total_count(), 5);
  EXPECT_EQ(h.count_at_index(h.index_of(5000)), 4);
  EXPECT_EQ(h.min(), 5000);
  EXPECT_EQ(h.max(), 123519);
  EXPECT_DOUBLE_EQ(h.mean(), (4.0 * 5002 + 123488) / 5);
  h.record(0);
  EXPECT_EQ(h.min(), 0);
  h.reset();
  EXPECT_EQ(h.total_count(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.count_at_index(h.index_of(5000)), 0);
}

TEST(histogram_record, negative_records_as_zero_and_bad_counts_are_ignored) {
  histogram h(params(1, 1000, 3));
  h.record(-7);
  h.record_n(-1, 2);
  h.record_n(10, 0);
  h.record_n(10, -3);
  EXPECT_EQ(h.total_count(), 3);
  EXPECT_EQ(h.count_at_index(0), 3);
  EXPECT_EQ(h.over_range_count(), 0);
}

TEST(histogram_record, over_range_is_clamped_and_counted) {
  histogram h(params(1, 3'600'000'000, 3));
  h.record(3'600'000'000);  // exactly htv is in range
  EXPECT_EQ(h.over_range_count(), 0);
  h.record(5'000'000'000);
  h.record_n(INT64_MAX, 4);
  EXPECT_EQ(h.over_range_count(), 5);
  EXPECT_EQ(h.total_count(), 6);
  EXPECT_EQ(h.count_at_index(h.index_of(3'600'000'000)), 6);
  EXPECT_EQ(h.max(), h.highest_equivalent_value(3'600'000'000));
}

TEST(histogram_percentile, java_rounding_p94_of_1_to_10_is_10) {
  histogram h(params(1, 3'600'000'000, 3));
  for (int v = 1; v <= 10; ++v) h.record(v);
  EXPECT_EQ(h.value_at_percentile(94), 10);  // HdrHistogram_c would say 9
  EXPECT_EQ(h.value_at_percentile(90), 9);
  EXPECT_EQ(h.value_at_percentile(50), 5);
  EXPECT_EQ(h.value_at_percentile(0), 1);
  EXPECT_EQ(h.value_at_percentile(100), 10);
  EXPECT_EQ(h.value_at_percentile(250), 10);
  EXPECT_EQ(h.value_at_percentile(-3), 1);
}

TEST(histogram_percentile, next_down_absorbs_floating_point_overshoot) {
  // 8.8 * 375 / 100 is exactly 33 but evaluates to 33.000000000000007 in double; Java's
  // nextDown(p) keeps the target at 33.
  histogram h(params(1, 3'600'000'000, 3));
  for (int v = 1; v <= 375; ++v) h.record(v);
  EXPECT_EQ(h.value_at_percentile(8.8), 33);
}

TEST(histogram_percentile, zero_percentile_reports_lowest_equivalent) {
  histogram h(params(1, 3'600'000'000, 3));
  h.record(5001);
  EXPECT_EQ(h.value_at_percentile(0), 5000);
  EXPECT_EQ(h.value_at_percentile(1e-9), 5003);
}

struct corrected_row {
  std::int64_t value, interval;
  std::vector<std::int64_t> recorded;
};

TEST(histogram_coordinated_omission, record_time_correction_matches_spec_6_1) {
  const corrected_row rows[] = {
      {10000, 1000, {10000, 9000, 8000, 7000, 6000, 5000, 4000, 3000, 2000, 1000}},
      {250000, 50000, {250000, 200000, 150000, 100000, 50000}},
      {999, 1000, {999}},
      {1000, 1000, {1000}},
      {1999, 1000, {1999}},
      {2000, 1000, {2000, 1000}},
      {5000, 0, {5000}},
      {5000, -10, {5000}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.value);
    histogram corrected(params(1, 3'600'000'000, 3));
    histogram expected(params(1, 3'600'000'000, 3));
    corrected.record_corrected(r.value, r.interval);
    for (const std::int64_t v : r.recorded) expected.record(v);
    EXPECT_EQ(corrected.total_count(), static_cast<std::int64_t>(r.recorded.size()));
    for (std::int32_t i = 0; i < expected.counts_length(); ++i) {
      ASSERT_EQ(corrected.count_at_index(i), expected.count_at_index(i)) << i;
    }
  }
}

TEST(histogram_coordinated_omission, dense_correction_equals_value_by_value) {
  // Many corrected values share wide slots; the batched path must equal recording one by one.
  histogram batched(params(1, 3'600'000'000'000, 3));
  histogram single(params(1, 3'600'000'000'000, 3));
  batched.record_corrected(50'000'000, 997);
  single.record(50'000'000);
  for (std::int64_t v = 50'000'000 - 997; v >= 997; v -= 997) single.record(v);
  EXPECT_EQ(batched.total_count(), single.total_count());
  for (std::int32_t i = 0; i < single.counts_length(); ++i)
    ASSERT_EQ(batched.count_at_index(i), single.count_at_index(i));
}

TEST(histogram_coordinated_omission, spec_6_2_example_record_time_vs_post_hoc) {
  histogram at_record(params(1, 3'600'000'000, 3));
  at_record.record_corrected(5001, 1000);
  EXPECT_EQ(lowest_values_of_non_empty_slots(at_record),
            (std::set<std::int64_t>{1001, 2001, 3000, 4000, 5000}));

  histogram plain(params(1, 3'600'000'000, 3));
  plain.record(5001);
  const histogram post_hoc = plain.copy_corrected_for_coordinated_omission(1000);
  EXPECT_EQ(lowest_values_of_non_empty_slots(post_hoc),
            (std::set<std::int64_t>{1003, 2003, 3002, 4002, 5000}));
  EXPECT_EQ(post_hoc.total_count(), 5);
  EXPECT_EQ(post_hoc.params(), plain.params());
  EXPECT_EQ(plain.total_count(), 1);  // the source is untouched
}

TEST(histogram_coordinated_omission, post_hoc_top_slot_is_not_over_range) {
  histogram h(params(1, 3'600'000'000, 3));
  h.record(3'600'000'000);
  const histogram c = h.copy_corrected_for_coordinated_omission(0);
  EXPECT_EQ(c.total_count(), 1);
  EXPECT_EQ(c.over_range_count(), 0);
  EXPECT_EQ(c.max(), h.max());
}

TEST(histogram_add, merged_percentiles_equal_recording_everything_into_one) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> exponent(0.0, 9.0);
  histogram a(params(1, 3'600'000'000'000, 3));
  histogram b(params(1, 3'600'000'000'000, 3));
  histogram all(params(1, 3'600'000'000'000, 3));
  for (int i = 0; i < 20000; ++i) {
    const auto v = static_cast<std::int64_t>(std::pow(10.0, exponent(rng)));
    (i % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  a.add(b);
  EXPECT_EQ(a.total_count(), all.total_count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  for (const double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    EXPECT_EQ(a.value_at_percentile(p), all.value_at_percentile(p)) << p;
  }
}

TEST(histogram_add, different_layouts_rerecord_and_clamp) {
  histogram small(params(1, 10'000, 3));
  histogram big(params(1, 3'600'000'000, 3));
  big.record(5000);
  big.record_n(1'000'000, 2);
  small.add(big);
  EXPECT_EQ(small.total_count(), 3);
  EXPECT_EQ(small.over_range_count(), 2);
  EXPECT_EQ(small.count_at_index(small.index_of(5000)), 1);
  EXPECT_EQ(small.count_at_index(small.index_of(10'000)), 2);
}

TEST(histogram_set_count, keeps_totals_min_and_max_consistent) {
  histogram h(params(1, 3'600'000'000, 3));
  h.set_count_at_index(h.index_of(100), 5);
  h.set_count_at_index(h.index_of(5000), 2);
  EXPECT_EQ(h.total_count(), 7);
  EXPECT_EQ(h.min(), 100);
  EXPECT_EQ(h.max(), 5003);
  h.set_count_at_index(h.index_of(5000), 0);
  EXPECT_EQ(h.total_count(), 5);
  EXPECT_EQ(h.max(), 100);
  h.set_count_at_index(h.index_of(100), 0);
  EXPECT_EQ(h.total_count(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.min(), 0);
}

TEST(histogram_statistics, stddev_is_population_deviation_of_medians) {
  histogram h(params(1, 3'600'000'000, 3));
  h.record(2);
  h.record(4);
  h.record(4);
  h.record(4);
  h.record(5);
  h.record(5);
  h.record(7);
  h.record(9);
  EXPECT_DOUBLE_EQ(h.mean(), 5.0);
  EXPECT_DOUBLE_EQ(h.stddev(), 2.0);
}

// reset() zeroes only the slots between the lowest and highest recorded ones (nothing outside
// them was ever touched), and leaves a histogram that records like a new one.
TEST(histogram, reset_then_record_is_like_new) {
  histogram h;
  for (const std::int64_t v :
       {std::int64_t{1}, std::int64_t{999}, std::int64_t{1'000'000}, std::int64_t{3'000'000'000}})
    h.record(v);
  h.reset();
  EXPECT_EQ(h.total_count(), 0);
  for (std::int32_t i = 0; i < h.counts_length(); ++i) ASSERT_EQ(h.count_at_index(i), 0) << i;
  h.record(42);
  histogram fresh;
  fresh.record(42);
  EXPECT_EQ(h.total_count(), 1);
  EXPECT_EQ(h.min(), fresh.min());
  EXPECT_EQ(h.max(), fresh.max());
}

TEST(histogram, copies_are_deep_and_moves_leave_nothing_shared) {
  histogram a;
  a.record(5);
  histogram b = a;
  b.record(7);
  EXPECT_EQ(a.total_count(), 1);
  EXPECT_EQ(b.total_count(), 2);
  histogram c = std::move(b);
  EXPECT_EQ(c.total_count(), 2);
  c = a;
  EXPECT_EQ(c.total_count(), 1);
  EXPECT_EQ(c.count_at_index(c.index_of(5)), 1);
}

TEST(zeroed_counts, clear_zeroes_the_closed_range_only) {
  zeroed_counts z(8);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(z[i], 0);
  for (std::size_t i = 0; i < 8; ++i) z[i] = static_cast<std::int64_t>(i + 1);
  z.clear(2, 5);
  EXPECT_EQ(z[1], 2);
  EXPECT_EQ(z[2], 0);
  EXPECT_EQ(z[5], 0);
  EXPECT_EQ(z[6], 7);
  z.clear(6, 100);  // out of range: nothing happens
  EXPECT_EQ(z[6], 7);
  zeroed_counts empty;
  EXPECT_EQ(empty.size(), 0u);
  zeroed_counts moved = std::move(z);
  EXPECT_EQ(moved[7], 8);
  EXPECT_EQ(z.size(), 0u);
}

// A copy writes the slots between its lowest and highest sample, not its whole layout: it takes
// memory for its values as the original does (a whole copy made all 66 pages resident).
TEST(zeroed_counts, a_copy_takes_memory_only_for_its_values) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  histogram a;
  a.record(1'000'000);
  a.record(1'001'000);
  a.record_n(1'002'000, 3);
  histogram b;
  b = a;
  const histogram c(a);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (const histogram* h : std::initializer_list<const histogram*>{&b, &c}) {
    EXPECT_LE(h->resident_bytes(), 2 * page);
    EXPECT_EQ(h->total_count(), 5);
    EXPECT_EQ(h->min(), a.min());
    EXPECT_EQ(h->max(), a.max());
    EXPECT_EQ(h->value_at_percentile(50), a.value_at_percentile(50));
    for (std::int32_t i = 0; i < h->counts_length(); i += 97)
      ASSERT_EQ(h->count_at_index(i), a.count_at_index(i)) << i;
  }
  const histogram empty;
  const histogram empty_copy(empty);
  EXPECT_EQ(empty_copy.total_count(), 0);
  EXPECT_EQ(empty_copy.resident_bytes(), 0u);
}

// This process's resident memory, in bytes (/proc/self/statm counts pages).
std::int64_t resident_bytes_now() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// A histogram of the run's layout costs memory only for the pages its values touch, also in a
// process that has freed blocks of that size before (glibc's calloc then serves them from the
// heap, reusing freed memory whose zeroes it must write: every page at once).
TEST(zeroed_counts, large_blocks_take_memory_only_where_written_after_others_were_freed) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  const auto slots = static_cast<std::size_t>(counts_length_for(histogram_params{}));
  const std::int64_t block_bytes = static_cast<std::int64_t>(slots * sizeof(std::int64_t));
  constexpr int blocks = 40;
  std::vector<zeroed_counts> kept;
  kept.reserve(blocks);
  std::vector<char> fence;
  {
    std::vector<zeroed_counts> earlier;
    for (int i = 0; i < blocks; ++i) earlier.emplace_back(slots);
    fence.resize(4096);  // allocated after them, so their memory is not simply given back
  }
  const std::int64_t before = resident_bytes_now();
  for (int i = 0; i < blocks; ++i) {
    kept.emplace_back(slots);
    kept.back()[slots / 2] = 1;  // one page of each
  }
  const std::int64_t grown = resident_bytes_now() - before;
  EXPECT_LT(grown, blocks * block_bytes / 8)
      << "grew by " << grown << " bytes for " << blocks << " blocks of " << block_bytes;
  for (const auto& k : kept) EXPECT_EQ(k[slots / 2], 1);
}

// reset_releasing() empties a histogram and gives its written pages back; resident_bytes()
// counts only written pages (not the kernel's zero page under pages only read).
TEST(zeroed_counts, reset_releasing_gives_written_pages_back) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  histogram h;
  EXPECT_EQ(h.resident_bytes(), 0u);
  EXPECT_EQ(h.value_at_percentile(100), 0);  // reads slots, writes none
  EXPECT_EQ(h.resident_bytes(), 0u);
  for (std::int64_t v = 1; v < 3'600'000'000'000; v *= 2) h.record(v);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  EXPECT_GE(h.resident_bytes(), 30 * page);
  h.reset();
  EXPECT_GE(h.resident_bytes(), 30 * page);  // a plain reset keeps them
  h.record(5);
  h.reset_releasing();
  EXPECT_EQ(h.resident_bytes(), 0u);
  EXPECT_EQ(h.total_count(), 0);
  h.record(1'000'000);
  EXPECT_EQ(h.total_count(), 1);
  EXPECT_EQ(h.resident_bytes(), page);
  EXPECT_EQ(h.value_at_percentile(50), h.highest_equivalent_value(1'000'000));
}

}  // namespace
}  // namespace punctual::hdr
