// Stages: the text syntax, piecewise-linear ramps for constant and Poisson arrivals, and their
// validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "schedule/stages.hpp"
#include "schedule/stream.hpp"

namespace {

using namespace std::chrono_literals;
using namespace punctual::schedule;

std::vector<stage> parse_stages_ok(std::string_view text) {
  std::string error;
  auto stages = parse_stages(text, error);
  EXPECT_TRUE(stages.has_value()) << text << ": " << error;
  return stages.value_or(std::vector<stage>{});
}

std::string parse_error(std::string_view text) {
  std::string error;
  EXPECT_FALSE(parse_stages(text, error).has_value()) << text;
  return error;
}

TEST(ParseStages, ReadsDurationRatePairs) {
  const auto s = parse_stages_ok("10s:100,30s:5000,10s:5000");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].length, 10s);
  EXPECT_EQ(s[0].rate_per_s, 100);
  EXPECT_EQ(s[1].length, 30s);
  EXPECT_EQ(s[1].rate_per_s, 5000);
  EXPECT_EQ(s[2].length, 10s);
  const auto t = parse_stages_ok(" 500ms : 1.5k , 2m:1M,1h:0, 1.5:0.1k ");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].length, 500ms);
  EXPECT_EQ(t[0].rate_per_s, 1500);
  EXPECT_EQ(t[1].length, 2min);
  EXPECT_EQ(t[1].rate_per_s, 1e6);
  EXPECT_EQ(t[2].length, 1h);
  EXPECT_EQ(t[2].rate_per_s, 0);
  EXPECT_EQ(t[3].length, 1500ms);
  EXPECT_EQ(t[3].rate_per_s, 100);  // exactly, not 0.1 * 1000 in binary
}

TEST(ParseStages, OneLineErrors) {
  EXPECT_EQ(parse_error(""), "stages: empty (expected e.g. 10s:100,30s:5000)");
  EXPECT_EQ(parse_error("10s"), "stage 1 \"10s\": expected DURATION:RATE, e.g. 10s:100");
  EXPECT_EQ(parse_error("10s:100,30x:5000"),
            "stage 2 \"30x:5000\": bad duration \"30x\" (expected e.g. 30s, 500ms, 2m)");
  EXPECT_EQ(parse_error("0s:100"), "stage 1 \"0s:100\": the duration must be > 0");
  EXPECT_EQ(parse_error("10s:-5"),
            "stage 1 \"10s:-5\": bad rate \"-5\" (expected requests per second >= 0 and <= 1e9, "
            "e.g. 100, 2.5k, 1M)");
  EXPECT_NE(parse_error("10s:abc").find("bad rate \"abc\""), std::string::npos);
  EXPECT_NE(parse_error("10s:2e3").find("bad rate"), std::string::npos);
  EXPECT_NE(parse_error("10s:inf").find("bad rate"), std::string::npos);
  EXPECT_NE(parse_error("10s:2000M").find("bad rate"), std::string::npos);
  EXPECT_NE(parse_error("10s:100,").find("stage 2 \"\""), std::string::npos);
  for (const auto& e : {parse_error("1s:1,,"), parse_error(":5"), parse_error("5s:")}) {
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
}

TEST(ParseStageDuration, ExactDecimal) {
  EXPECT_EQ(parse_stage_duration("1.5s"), 1500ms);
  EXPECT_EQ(parse_stage_duration("250us"), 250us);
  EXPECT_EQ(parse_stage_duration("100ns"), 100ns);
  EXPECT_EQ(parse_stage_duration("2m"), 2min);
  EXPECT_EQ(parse_stage_duration("1h"), 1h);
  EXPECT_EQ(parse_stage_duration("30"), 30s);
  EXPECT_EQ(parse_stage_duration("0.000000001"), 1ns);
  EXPECT_EQ(parse_stage_duration("0.1s"), 100ms);
  for (const char* bad : {"", "s", "1.2.3s", "-1s", "1 s x", "1e3s", "99999999999999999999h"}) {
    EXPECT_FALSE(parse_stage_duration(bad).has_value()) << bad;
  }
}

TEST(FormatStages, RoundTrips) {
  const std::string text = "10s:100,30s:5000,1500ms:2.5,2m:0,7ns:1000000";
  EXPECT_EQ(format_stages(parse_stages_ok(text)), text);
  EXPECT_EQ(format_duration(90s), "90s");
  EXPECT_EQ(format_duration(2h), "2h");
  EXPECT_EQ(stages_length(parse_stages_ok(text)).count(), 10e9 + 30e9 + 1.5e9 + 120e9 + 7);
}

plan ramp_plan(arrival_kind kind, std::string_view stages, std::chrono::nanoseconds duration,
               double start_rate = 0) {
  plan p;
  p.arrival = kind;
  p.stages = parse_stages_ok(stages);
  p.start_rate_per_s = start_rate;
  p.duration = duration;
  return p;
}

std::vector<entry> drain(const plan& p, std::uint32_t worker = 0) {
  std::vector<entry> out;
  worker_stream s(p, worker);
  entry e;
  while (s.next(e)) out.push_back(e);
  return out;
}

TEST(Ramps, FlatStageEqualsTheConstantFormula) {
  for (const double rate : {100.0, 2000.0, 3.0, 7.0}) {
    const plan p = ramp_plan(arrival_kind::constant, "10s:" + format_rate(rate), 10s, rate);
    const auto all = drain(p);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(rate * 10)) << rate;
    for (const auto& e : all) {
      const auto exact = static_cast<std::int64_t>(static_cast<unsigned __int128>(e.index) *
                                                   1000000000 / static_cast<std::uint64_t>(rate));
      ASSERT_EQ(e.offset.count(), exact) << rate << " i=" << e.index;
    }
  }
}

TEST(Ramps, LinearRampFollowsTheInverseIntegral) {
  // Rate r(t) = 1000 t / 10 from 0: L(t) = 50 t^2, so t_i = sqrt(i / 50) s.
  const plan p = ramp_plan(arrival_kind::constant, "10s:1000", 10s);
  const auto all = drain(p);
  ASSERT_EQ(all.size(), 5000u);
  for (const auto& e : all) {
    const long double t = std::sqrt(static_cast<long double>(e.index) / 50.0L) * 1e9L;
    ASSERT_NEAR(static_cast<double>(e.offset.count()), static_cast<double>(std::floor(t)), 1.0)
        << e.index;
  }
  // A falling ramp: 1000 -> 0 over 10 s, L(t) = 1000 t - 50 t^2.
  const plan down = ramp_plan(arrival_kind::constant, "10s:0", 20s, 1000);
  const auto falling = drain(down);
  EXPECT_NEAR(static_cast<double>(falling.size()), 5000, 1);
  for (const auto& e : falling) {
    const long double i = e.index;
    const long double t = (1000.0L - std::sqrt(1000.0L * 1000.0L - 200.0L * i)) / 100.0L * 1e9L;
    ASSERT_NEAR(static_cast<double>(e.offset.count()), static_cast<double>(std::floor(t)), 1.0)
        << e.index;
  }
  EXPECT_LT(falling.back().offset, 10s);
}

TEST(Ramps, CountIsTheIntegralOfTheRate) {
  struct example {
    const char* stages;
    double start;
    std::chrono::nanoseconds duration;
    double integral;
  };
  const example examples[] = {
      {"10s:100,30s:5000,10s:5000", 0, 50s, 10 * 50 + 30 * 2550 + 10 * 5000},
      {"10s:100,30s:5000,10s:5000", 100, 50s, 10 * 100 + 30 * 2550 + 10 * 5000},
      {"1s:333,2s:7", 0, 3s, 166.5 + 340},
      {"10s:100", 0, 15s, 500 + 500},      // the last rate holds after the stages
      {"5s:0,5s:100", 0, 10s, 250},        // a pause, then a ramp
      {"2s:100,2s:0", 0, 10s, 100 + 100},  // nothing after the rate returns to 0
  };
  for (const auto& ex : examples) {
    const plan p = ramp_plan(arrival_kind::constant, ex.stages, ex.duration, ex.start);
    const auto n = static_cast<double>(count_requests(p).planned);
    EXPECT_NEAR(n, ex.integral, 1.0) << ex.stages;
    EXPECT_EQ(drain(p).size(), static_cast<std::size_t>(n));
  }
}

TEST(Ramps, PauseDelaysTheFirstRequest) {
  const auto all = drain(ramp_plan(arrival_kind::constant, "5s:0,5s:100", 10s));
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().offset, 5s);
  for (std::size_t i = 1; i < all.size(); ++i) ASSERT_LE(all[i - 1].offset, all[i].offset);
}

TEST(Ramps, PoissonCountIsTheIntegralWithinNoise) {
  plan p = ramp_plan(arrival_kind::poisson, "10s:100,30s:5000,10s:5000", 50s);
  const double integral = 127000;
  double total = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    p.seed = seed;
    const auto all = drain(p);
    for (std::size_t i = 1; i < all.size(); ++i) ASSERT_LE(all[i - 1].offset, all[i].offset);
    EXPECT_NEAR(static_cast<double>(all.size()), integral, 5 * std::sqrt(integral));
    total += static_cast<double>(all.size());
    // Arrivals thin out where the rate is low: the first 10 s hold ~500 of them.
    const auto early =
        std::count_if(all.begin(), all.end(), [](const entry& e) { return e.offset < 10s; });
    EXPECT_NEAR(static_cast<double>(early), 500, 5 * std::sqrt(500.0));
  }
  EXPECT_NEAR(total / 3, integral, 5 * std::sqrt(integral / 3));
}

TEST(Ramps, UnionOverShardsAndWorkersIsTheSingleSchedule) {
  for (const auto kind : {arrival_kind::constant, arrival_kind::poisson}) {
    plan p = ramp_plan(kind, "1s:100,2s:2000,1s:0", 5s);
    p.warmup = 1s;
    p.seed = 77;
    const auto single = drain(p);
    ASSERT_GT(single.size(), 1000u);
    for (std::uint32_t shards = 1; shards <= 3; ++shards) {
      for (std::uint32_t workers = 1; workers <= 4; ++workers) {
        std::vector<entry> all;
        plan q = p;
        q.shards = shards;
        q.workers = workers;
        for (q.shard_index = 0; q.shard_index < shards; ++q.shard_index) {
          for (std::uint32_t w = 0; w < workers; ++w) {
            const auto mine = drain(q, w);
            all.insert(all.end(), mine.begin(), mine.end());
          }
        }
        std::sort(all.begin(), all.end(),
                  [](const entry& a, const entry& b) { return a.index < b.index; });
        ASSERT_EQ(all.size(), single.size()) << shards << "x" << workers;
        for (std::size_t i = 0; i < all.size(); ++i) {
          ASSERT_EQ(all[i].index, single[i].index);
          ASSERT_EQ(all[i].offset, single[i].offset);
          ASSERT_EQ(all[i].warmup, single[i].warmup);
        }
      }
    }
  }
}

TEST(Ramps, DescribeAndValidate) {
  plan p = ramp_plan(arrival_kind::poisson, "10s:100,30s:5000", 40s);
  EXPECT_EQ(describe(p), "poisson arrivals (seed 1), stages 10s:100,30s:5000");
  p.arrival = arrival_kind::constant;
  p.start_rate_per_s = 50;
  EXPECT_EQ(describe(p), "constant arrivals, stages from 50 req/s 10s:100,30s:5000");
  EXPECT_FALSE(validate(p));

  auto message = [](const plan& q) { return validate(q).value_or("<ok>"); };
  EXPECT_EQ(message(ramp_plan(arrival_kind::constant, "10s:0,5s:0", 20s)),
            "stages: the rate is 0 throughout warm-up and duration, so no request would be sent");
  EXPECT_EQ(message(ramp_plan(arrival_kind::constant, "10s:0,5s:100", 10s)),
            "stages: the rate is 0 throughout warm-up and duration, so no request would be sent");
  plan bad = ramp_plan(arrival_kind::constant, "10s:100", 10s);
  bad.stages.push_back(stage{-1s, 5});
  EXPECT_EQ(message(bad), "stage 2: the duration must be > 0");
  bad.stages.back() = stage{1s, -5};
  EXPECT_EQ(message(bad), "stage 2: the rate must be >= 0 and finite, got -5");
  bad.stages.back() = stage{1s, 5};
  bad.start_rate_per_s = NAN;
  EXPECT_EQ(message(bad).rfind("start rate must be >= 0 and finite", 0), 0u);
}

}  // namespace
