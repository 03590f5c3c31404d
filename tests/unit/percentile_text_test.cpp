#include "punctual/histogram/percentile_text.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "punctual/histogram/interval_log.hpp"
#include "test_files.hpp"

namespace {

using namespace punctual::hdr;

using punctual::test::read_file;

histogram merged_golden(const char* file) {
  const auto read = read_interval_log_file(punctual::test::golden_dir + file);
  EXPECT_TRUE(read) << read.error;
  histogram merged({1, 3'600'000'000, 3});
  if (read) {
    for (const auto& iv : read.log->intervals) merged.add(iv.value);
  }
  return merged;
}

TEST(percentile_text, merged_golden_log_gives_the_golden_hgrm) {
  const std::string expected = read_file(punctual::test::golden_dir + "three-intervals.hgrm");
  ASSERT_FALSE(expected.empty());
  for (const char* file : {"three-intervals.hlog", "three-intervals.canonical.hlog"}) {
    const histogram h = merged_golden(file);
    EXPECT_EQ(percentile_distribution_text(h, {5, 1000.0, false}), expected) << file;
    std::ostringstream out;
    write_percentile_distribution(out, h, {5, 1000.0, false});
    EXPECT_EQ(out.str(), expected) << file;
  }
}

TEST(percentile_text, csv_variant) {
  const histogram h = merged_golden("three-intervals.hlog");
  const std::string text = percentile_distribution_text(h, {5, 1000.0, true});
  EXPECT_EQ(text.rfind("\"Value\",\"Percentile\",\"TotalCount\",\"1/(1-Percentile)\"\n"
                       "0.001,0.000000000000,1,1.00\n"
                       "0.113,0.100000000000,113,1.11\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\n2500.607,1.000000000000,1126,Infinity\n"), std::string::npos);
  EXPECT_EQ(text.find("#["), std::string::npos);
}

TEST(percentile_text, default_ratio_prints_milliseconds_from_nanoseconds) {
  histogram h;  // ns
  h.record(1'500'000);
  const std::string text = percentile_distribution_text(h);
  EXPECT_NE(text.find("       1.500 0.000000000000          1           1.00\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("       1.500 1.000000000000          1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#[Buckets =           32, SubBuckets     =         2048]\n"),
            std::string::npos);
}

TEST(percentile_text, empty_histogram_has_header_and_footer_only) {
  const histogram h({1, 3'600'000'000, 3});
  EXPECT_EQ(percentile_distribution_text(h, {5, 1000.0, false}),
            "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
            "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
            "#[Max     =        0.000, Total count    =            0]\n"
            "#[Buckets =           22, SubBuckets     =         2048]\n");
}

TEST(percentile_text, java_fixed_rounds_the_shortest_digits_half_up) {
  EXPECT_EQ(java_fixed(0.125, 2), "0.13");  // printf: 0.12 (exact tie, half-even)
  EXPECT_EQ(java_fixed(0.15, 1), "0.2");    // printf: 0.1 (binary value is below the tie)
  EXPECT_EQ(java_fixed(1.0005, 3), "1.001");
  EXPECT_EQ(java_fixed(2500.607, 3), "2500.607");
  EXPECT_EQ(java_fixed(0.0, 3), "0.000");
  EXPECT_EQ(java_fixed(0.0004, 3), "0.000");
  EXPECT_EQ(java_fixed(0.0005, 3), "0.001");
  EXPECT_EQ(java_fixed(9.9996, 3), "10.000");
  EXPECT_EQ(java_fixed(1700000000.0, 3), "1700000000.000");
  EXPECT_EQ(java_fixed(1e20, 1), "100000000000000000000.0");
  EXPECT_EQ(java_fixed(0.99912109375, 12), "0.999121093750");
  EXPECT_EQ(java_fixed(1137.7777777777778, 2), "1137.78");
  EXPECT_EQ(java_fixed(42.0, 0), "42");
  EXPECT_EQ(java_fixed(-1.5, 1), "-1.5");
  EXPECT_EQ(java_fixed(std::numeric_limits<double>::infinity(), 2), "Infinity");
}

}  // namespace
