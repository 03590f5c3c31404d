#include "punctual/histogram/sparse_counts.hpp"

#include <gtest/gtest.h>

namespace {

using punctual::hdr::histogram;
using punctual::hdr::histogram_params;

constexpr histogram_params ns_layout{1, 3'600'000'000'000, 3};

// Sparse counts added from several histograms give back exactly their sum, in few slots.
TEST(sparse_counts, add_up_as_histograms_do) {
  histogram a(ns_layout);
  histogram b(ns_layout);
  for (std::int64_t v = 1000; v < 5'000'000; v = v * 3 / 2 + 7) a.record_n(v, v % 5 + 1);
  for (std::int64_t v = 700; v < 90'000'000; v = v * 2 + 1) b.record(v);
  b.record_n(1000, 4);  // a slot a has too
  punctual::hdr::sparse_counts sparse;
  sparse.add(a, ns_layout);
  sparse.add(b, ns_layout);
  histogram summed(ns_layout);
  sparse.add_to(summed);
  histogram expected = a;
  expected.add(b);
  EXPECT_EQ(summed.total_count(), expected.total_count());
  for (std::int32_t i = 0; i < expected.counts_length(); ++i) {
    ASSERT_EQ(summed.count_at_index(i), expected.count_at_index(i)) << "slot " << i;
  }
  EXPECT_LT(sparse.size(), 200U);  // only the used slots, not the layout's 33,792
}

// A histogram of another layout is re-recorded into the sparse one's, as histogram::add does.
TEST(sparse_counts, take_another_layout_as_add_does) {
  histogram narrow({1000, 1'000'000'000, 2});
  narrow.record_n(5'000'000, 3);
  narrow.record(1500);
  punctual::hdr::sparse_counts sparse;
  sparse.add(narrow, ns_layout);
  histogram summed(ns_layout);
  sparse.add_to(summed);
  histogram expected(ns_layout);
  expected.add(narrow);
  EXPECT_EQ(summed.total_count(), 4);
  EXPECT_EQ(summed.value_at_percentile(50), expected.value_at_percentile(50));
  EXPECT_EQ(summed.max(), expected.max());
  histogram empty(ns_layout);
  sparse.add(empty, ns_layout);
  EXPECT_EQ(sparse.size(), 2U);
}

}  // namespace
