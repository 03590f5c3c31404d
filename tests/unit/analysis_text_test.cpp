// The program's one duration formatter, as people read it in every report and message.
#include <gtest/gtest.h>

#include "analysis/text.hpp"

namespace punctual::analysis {
namespace {

using namespace std::chrono_literals;

TEST(duration_text, three_significant_digits_in_the_largest_readable_unit) {
  EXPECT_EQ(duration_text(850ns), "850ns");
  EXPECT_EQ(duration_text(1250ns), "1.25us");
  EXPECT_EQ(duration_text(1234567ns), "1.23ms");
  EXPECT_EQ(duration_text(12500ms), "12.5s");
  // A value that rounds up to the next unit is written in it, never with an exponent.
  EXPECT_EQ(duration_text(999'700'000ns), "1s");
  EXPECT_EQ(duration_text(999'600ns), "1ms");
  EXPECT_EQ(duration_text(999.7), "1us");
  EXPECT_EQ(duration_text(999'400ns), "999us");
  EXPECT_EQ(duration_text(100s), "100s");
}

TEST(duration_text, long_durations_in_minutes_and_hours_never_in_exponent_form) {
  EXPECT_EQ(duration_text(30min), "30m");
  EXPECT_EQ(duration_text(10min), "10m");
  EXPECT_EQ(duration_text(12h), "12h");
  for (auto d : {1800s, 599s, 3599s, 40000s}) {
    EXPECT_EQ(duration_text(d).find('e'), std::string::npos) << duration_text(d);
  }
}

TEST(duration_text, the_double_and_the_typed_forms_agree) {
  EXPECT_EQ(duration_text(1.8e12), duration_text(1800s));
  EXPECT_EQ(duration_text(0.0), "0ns");
}

}  // namespace
}  // namespace punctual::analysis
