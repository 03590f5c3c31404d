#include "cli/units.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command.hpp"

namespace {

using namespace std::chrono_literals;
using punctual::cli::usage_error;

std::string usage_message(auto&& call) {
  try {
    call();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "<no usage_error thrown>";
}

TEST(units, good_durations) {
  const std::vector<std::pair<std::string, std::chrono::nanoseconds>> cases = {
      {"100ns", 100ns},
      {"250us", 250us},
      {"250\xc2\xb5s", 250us},
      {"500ms", 500ms},
      {"1.5s", 1500ms},
      {"30s", 30s},
      {"30", 30s},
      {"0.25", 250ms},
      {".5s", 500ms},
      {"2m", 120s},
      {"1h", 3600s},
      {"0s", 0ns},
      {"0.1s", 100ms},
      {"1.0000000005s", 1000000001ns},
      {"2400h", 2400h},
      {"8640000000000000ns", std::chrono::nanoseconds{8640000000000000}},
  };
  for (const auto& [text, want] : cases) {
    const auto got = punctual::cli::try_parse_duration(text);
    ASSERT_TRUE(got) << text;
    EXPECT_EQ(*got, want) << text;
    EXPECT_EQ(punctual::cli::parse_duration("--duration", text), want) << text;
  }
}

TEST(units, bad_durations) {
  for (const char* text :
       {"",
        "s",
        "10x",
        "10 s",
        " 10s",
        "10s ",
        "-5s",
        "+5s",
        "1e3s",
        "1e3",
        "inf",
        "nan",
        "infs",
        "0x10s",
        "10S",
        "10sec",
        "1..5s",
        "10ms5",
        "2401h",
        "100.1d",
        "8640000000000001ns",
        "99999999999999999999999999999999999999999999h",
        "1"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "000000000000000000000000000000000000s"}) {
    EXPECT_FALSE(punctual::cli::try_parse_duration(text)) << text;
    EXPECT_THROW(punctual::cli::parse_duration("--duration", text), usage_error) << text;
  }
}

TEST(units, duration_messages) {
  EXPECT_EQ(usage_message([] { punctual::cli::parse_duration("--duration", "10x"); }),
            "--duration: '10x' is not a duration (expected a number with a unit: ns, us, ms, s, m, "
            "h, e.g. 30s)");
  EXPECT_EQ(usage_message([] { punctual::cli::parse_duration("--timeout", ""); }),
            "--timeout: '' is not a duration (expected a number with a unit: ns, us, ms, s, m, h, "
            "e.g. 30s)");
  EXPECT_EQ(
      usage_message([] { punctual::cli::parse_duration("--warmup", "-1s"); }),
      "--warmup: '-1s' is negative (expected a number with a unit: ns, us, ms, s, m, h, e.g. 30s)");
  EXPECT_EQ(usage_message([] { punctual::cli::parse_duration("--duration", "3000h"); }),
            "--duration: '3000h' is too long (at most 100 days, e.g. 2400h)");
}

// A timeout or think time without a unit is refused rather than read as seconds; -d keeps
// wrk's bare seconds.
TEST(units, durations_that_need_a_unit) {
  EXPECT_EQ(usage_message([] { punctual::cli::parse_duration_with_unit("--timeout", "500"); }),
            "--timeout: '500' has no unit: give one, e.g. 500ms");
  EXPECT_EQ(usage_message([] { punctual::cli::parse_duration_with_unit("--think", "1.5"); }),
            "--think: '1.5' has no unit: give one, e.g. 500ms");
  EXPECT_EQ(punctual::cli::parse_duration_with_unit("--timeout", "500ms"),
            std::chrono::milliseconds(500));
  EXPECT_EQ(punctual::cli::parse_duration("-d/--duration", "10"), std::chrono::seconds(10));
}

TEST(units, good_rates) {
  const std::vector<std::pair<std::string, double>> cases = {
      {"2000", 2000}, {"2k", 2000},   {"2K", 2000},     {"1.5k", 1500}, {"1M", 1e6},
      {"0.5", 0.5},   {"100/s", 100}, {"2.5k/s", 2500}, {"1000M", 1e9}, {".001", 0.001},
  };
  for (const auto& [text, want] : cases) {
    const auto got = punctual::cli::try_parse_rate(text);
    ASSERT_TRUE(got) << text;
    EXPECT_DOUBLE_EQ(*got, want) << text;
    EXPECT_DOUBLE_EQ(punctual::cli::parse_rate("--rate", text), want) << text;
  }
}

TEST(units, bad_rates) {
  for (const char* text : {"", "0", "0k", "-5", "+5", "abc", "2x", "2kk", "1m", "1e3", "inf", "nan",
                           "1001M", "2 k", " 2", "k", "/s", "1/m", "0.0"}) {
    EXPECT_FALSE(punctual::cli::try_parse_rate(text)) << text;
    EXPECT_THROW(punctual::cli::parse_rate("--rate", text), usage_error) << text;
  }
  EXPECT_EQ(usage_message([] { punctual::cli::parse_rate("-R", "fast"); }),
            "-R: 'fast' is not a rate (expected requests per second > 0, e.g. 2000, 2k, 1.5k, 1M)");
  EXPECT_EQ(usage_message([] { punctual::cli::parse_rate("-R", "5000M"); }),
            "-R: '5000M' is too high (at most 1000M requests per second)");
}

TEST(units, good_status_ranges) {
  const auto one = punctual::cli::parse_status_ranges("--expect-status", "200-399");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].low, 200);
  EXPECT_EQ(one[0].high, 399);
  const auto many =
      punctual::cli::parse_status_ranges("--expect-status", "200, 204 ,300-399,100-599,404-404");
  ASSERT_EQ(many.size(), 5u);
  const std::vector<std::pair<int, int>> want{
      {200, 200}, {204, 204}, {300, 399}, {100, 599}, {404, 404}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(many[i].low, want[i].first) << i;
    EXPECT_EQ(many[i].high, want[i].second) << i;
  }
}

TEST(units, bad_status_ranges) {
  for (const char* text :
       {"", ",", "200,", ",200", "99", "600", "200-600", "399-200", "2xx", "200-", "-399",
        "200--399", "200-300-399", "+200", "200;204", "1e2", "20O"}) {
    EXPECT_FALSE(punctual::cli::try_parse_status_ranges(text)) << text;
    EXPECT_THROW(punctual::cli::parse_status_ranges("--expect-status", text), usage_error) << text;
  }
  EXPECT_EQ(usage_message([] { punctual::cli::parse_status_ranges("--expect-status", "399-200"); }),
            "--expect-status: '399-200' is not a list of status codes (expected codes or ranges "
            "within 100..599, "
            "e.g. 200-399 or 200,204,300-399)");
}

}  // namespace
