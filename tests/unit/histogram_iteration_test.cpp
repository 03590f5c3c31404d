// Percentile, recorded-value and linear iteration (Java iterator semantics, spec 5.2).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/iteration.hpp"
#include "test_files.hpp"

namespace punctual::hdr {
namespace {

using test::read_text;

histogram merged_golden_log() {
  histogram merged({1, 3'600'000'000, 3});
  std::istringstream in(read_text("three-intervals.canonical.hlog"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '"') continue;
    const decode_result r = decode_compressed_base64(line.substr(line.rfind(',') + 1));
    EXPECT_TRUE(r);
    if (r) merged.add(*r.value);
  }
  return merged;
}

struct hgrm_row {
  double value_ms;
  double fraction;
  std::int64_t total;
};

std::vector<hgrm_row> golden_hgrm_rows() {
  std::vector<hgrm_row> rows;
  std::istringstream in(read_text("three-intervals.hgrm"));
  std::string line;
  std::getline(in, line);  // column titles
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    hgrm_row r{};
    fields >> r.value_ms >> r.fraction >> r.total;
    rows.push_back(r);
  }
  return rows;
}

TEST(histogram_iteration, percentile_steps_reproduce_java_hgrm_rows) {
  const histogram h = merged_golden_log();
  ASSERT_EQ(h.total_count(), 1126);
  const std::vector<iteration_step> steps = percentile_steps(h, 5);
  const std::vector<hgrm_row> rows = golden_hgrm_rows();
  ASSERT_GT(rows.size(), 50u);
  ASSERT_EQ(steps.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(steps[i].value_iterated_to, std::llround(rows[i].value_ms * 1000.0));
    EXPECT_NEAR(steps[i].percentile_level_iterated_to / 100.0, rows[i].fraction, 5e-13);
    EXPECT_EQ(steps[i].total_count_to_this_value, rows[i].total);
  }
  EXPECT_EQ(steps.back().percentile_level_iterated_to, 100.0);
  EXPECT_EQ(steps.back().count_added_in_this_step, 0);
  EXPECT_EQ(steps.back().value_iterated_to, h.max());
}

TEST(histogram_iteration, percentile_levels_with_five_ticks) {
  histogram h({1, 3'600'000'000, 3});
  for (int v = 1; v <= 100'000; ++v) h.record(v);
  const std::vector<iteration_step> steps = percentile_steps(h, 5);
  const double expected[] = {0,    10, 20,   30, 40,   50,    55, 60,    65,   70,    75,
                             77.5, 80, 82.5, 85, 87.5, 88.75, 90, 91.25, 92.5, 93.75, 94.375};
  ASSERT_GT(steps.size(), std::size(expected));
  for (std::size_t i = 0; i < std::size(expected); ++i)
    EXPECT_EQ(steps[i].percentile_level_iterated_to, expected[i]) << i;
  // Each step stops at the first slot whose cumulative percentile reaches the level.
  for (const auto& s : steps) {
    EXPECT_GE(s.percentile, s.percentile_level_iterated_to);
    EXPECT_DOUBLE_EQ(s.percentile,
                     100.0 * static_cast<double>(s.total_count_to_this_value) / 100'000.0);
  }
}

TEST(histogram_iteration, single_slot_repeats_its_value) {
  histogram h({1, 3'600'000'000, 3});
  h.record_n(5000, 10);
  const std::vector<iteration_step> steps = percentile_steps(h, 5);
  ASSERT_EQ(steps.size(), 2u);  // level 0 (already 100 %), then the final 100 % step
  EXPECT_EQ(steps[0].value_iterated_to, 5003);
  EXPECT_EQ(steps[0].count_added_in_this_step, 10);
  EXPECT_EQ(steps[0].percentile_level_iterated_to, 0.0);
  EXPECT_EQ(steps[1].value_iterated_to, 5003);
  EXPECT_EQ(steps[1].percentile_level_iterated_to, 100.0);
  EXPECT_EQ(steps[1].count_at_value_iterated_to, 10);
}

TEST(histogram_iteration, empty_or_bad_arguments_give_no_steps) {
  const histogram empty({1, 3'600'000'000, 3});
  EXPECT_TRUE(percentile_steps(empty, 5).empty());
  EXPECT_TRUE(recorded_value_steps(empty).empty());
  EXPECT_TRUE(linear_steps(empty, 100).empty());
  histogram one({1, 3'600'000'000, 3});
  one.record(1);
  EXPECT_TRUE(percentile_steps(one, 0).empty());
  EXPECT_TRUE(linear_steps(one, 0).empty());
}

TEST(histogram_iteration, recorded_values_visit_each_non_empty_slot) {
  histogram h({1, 3'600'000'000, 3});
  h.record_n(5000, 100);
  h.record_n(123456, 10);
  h.record(0);
  const std::vector<iteration_step> steps = recorded_value_steps(h);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].value_iterated_to, 0);
  EXPECT_EQ(steps[1].value_iterated_to, 5003);
  EXPECT_EQ(steps[1].value_iterated_from, 0);
  EXPECT_EQ(steps[1].count_added_in_this_step, 100);
  EXPECT_EQ(steps[1].total_count_to_this_value, 101);
  EXPECT_EQ(steps[2].value_iterated_to, 123519);
  EXPECT_EQ(steps[2].count_at_value_iterated_to, 10);
  EXPECT_EQ(steps[2].total_value_to_this_value, 0 + 100 * 5003 + 10 * 123519);
  EXPECT_DOUBLE_EQ(steps[2].percentile, 100.0);
}

TEST(histogram_iteration, linear_steps_cover_until_last_slot) {
  histogram h({1, 3'600'000'000, 3});
  for (int v = 1; v <= 1000; ++v) h.record(v);
  const std::vector<iteration_step> steps = linear_steps(h, 1000);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].value_iterated_to, 999);
  EXPECT_EQ(steps[0].count_added_in_this_step, 999);
  EXPECT_EQ(steps[1].value_iterated_to, 1999);
  EXPECT_EQ(steps[1].count_added_in_this_step, 1);
  EXPECT_EQ(steps[1].total_count_to_this_value, 1000);
}

TEST(histogram_iteration, linear_steps_inside_wide_slots) {
  histogram h({1, 3'600'000'000, 3});
  h.record(2048);  // slot [2048, 2049]
  const std::vector<iteration_step> steps = linear_steps(h, 1024);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].value_iterated_to, 1023);
  EXPECT_EQ(steps[1].value_iterated_to, 2047);
  EXPECT_EQ(steps[2].value_iterated_to, 3071);
  EXPECT_EQ(steps[0].count_added_in_this_step + steps[1].count_added_in_this_step, 0);
  EXPECT_EQ(steps[2].count_added_in_this_step, 1);

  // Steps narrower than a slot: the slot's count lands in the first step that reaches it.
  histogram wide({1, 3'600'000'000, 3});
  wide.record(4096);  // slot [4096, 4099]
  const std::vector<iteration_step> fine = linear_steps(wide, 1);
  // Java stops once the next step would reach past the slot's end (4099 + 1 == 4100).
  ASSERT_EQ(fine.size(), 4099u);
  EXPECT_EQ(fine[4096].count_added_in_this_step, 1);
  EXPECT_EQ(fine[4097].count_added_in_this_step, 0);
  EXPECT_EQ(fine[4097].count_at_value_iterated_to, 1);
  EXPECT_EQ(fine.back().value_iterated_to, 4098);
}

TEST(histogram_iteration, linear_steps_stop_before_int64_overflow) {
  histogram h({1, 3'600'000'000, 3});
  h.record(5);
  const std::vector<iteration_step> steps = linear_steps(h, INT64_MAX);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].value_iterated_to, INT64_MAX - 1);
  EXPECT_EQ(steps[0].count_added_in_this_step, 1);
}

}  // namespace
}  // namespace punctual::hdr
