#include "cli/retry_options.hpp"

#include <gtest/gtest.h>

#include "cli/command.hpp"

namespace punctual::cli {
namespace {

using record::retry_cause;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(retry_options, retry_on_lists) {
  const auto all = try_parse_retry_on("5xx,429,timeout,reset,connect");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, 0b11111u);
  EXPECT_EQ(try_parse_retry_on("reset"), 1u << record::index(retry_cause::reset));
  for (const char* bad :
       {"", ",", "5xx,", ",5xx", "5xx,,429", "5xx,5xx", "500", "Reset", "5xx 429"}) {
    EXPECT_FALSE(try_parse_retry_on(bad)) << bad;
  }
}

TEST(retry_options, backoff_ranges) {
  const auto r = try_parse_backoff("exp:50ms..2s");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->base, milliseconds(50));
  EXPECT_EQ(r->cap, seconds(2));
  EXPECT_TRUE(try_parse_backoff("exp:10ms..10ms"));
  for (const char* bad : {"", "exp:", "exp:50ms", "exp:2s..50ms", "exp:0s..1s", "lin:1ms..2ms",
                          "exp:1ms...2ms", "exp:..1s", "exp:1s.."}) {
    EXPECT_FALSE(try_parse_backoff(bad)) << bad;
  }
}

TEST(retry_options, percentages) {
  EXPECT_DOUBLE_EQ(*try_parse_percent("10%"), 0.1);
  EXPECT_DOUBLE_EQ(*try_parse_percent("2.5%"), 0.025);
  EXPECT_DOUBLE_EQ(*try_parse_percent("100%"), 1.0);
  for (const char* bad :
       {"", "%", "10", "0%", "-5%", "101%", "nan%", "inf%", " 5%", "5 %", "1e400%"}) {
    EXPECT_FALSE(try_parse_percent(bad)) << bad;
  }
}

TEST(retry_options, policy_defaults_and_combinations) {
  retry_texts t;
  EXPECT_FALSE(build_retry_policy(t, seconds(10), 1, true).enabled());
  t.retries = 3;
  const auto p = build_retry_policy(t, seconds(10), 9, true);
  EXPECT_EQ(p.retries, 3u);
  EXPECT_EQ(p.seed, 9u);
  EXPECT_TRUE(p.retries_on(retry_cause::status_5xx));
  EXPECT_TRUE(p.retries_on(retry_cause::connect));
  EXPECT_FALSE(p.retries_on(retry_cause::timeout));
  EXPECT_EQ(p.backoff_base, milliseconds(50));
  EXPECT_EQ(p.backoff_cap, seconds(2));
  EXPECT_LT(p.budget, 0);
  EXPECT_EQ(describe(p),
            "up to 3 retries on 5xx,429,reset,connect, backoff exp 50ms..2s with full jitter");
}

TEST(retry_options, refuses_inconsistent_policies) {
  const auto refused = [](retry_texts t, bool open = true) {
    try {
      build_retry_policy(t, seconds(10), 1, open);
    } catch (const usage_error&) {
      return true;
    }
    return false;
  };
  retry_texts no_retries;
  no_retries.on = "5xx";
  EXPECT_TRUE(refused(no_retries));
  retry_texts timeout_without_attempt_timeout;
  timeout_without_attempt_timeout.retries = 1;
  timeout_without_attempt_timeout.on = "timeout";
  EXPECT_TRUE(refused(timeout_without_attempt_timeout));
  retry_texts long_attempt = timeout_without_attempt_timeout;
  long_attempt.attempt_timeout = "10s";
  EXPECT_TRUE(refused(long_attempt));
  long_attempt.attempt_timeout = "1s";
  EXPECT_FALSE(refused(long_attempt));
  retry_texts closed;
  closed.retries = 1;
  EXPECT_TRUE(refused(closed, false));
  retry_texts too_many;
  too_many.retries = 101;
  EXPECT_TRUE(refused(too_many));
  retry_texts bad_budget;
  bad_budget.retries = 1;
  bad_budget.budget = "0%";
  EXPECT_TRUE(refused(bad_budget));
}

}  // namespace
}  // namespace punctual::cli
