#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cli/command.hpp"
#include "cli/run_options.hpp"
#include "cli/shard_options.hpp"

namespace {

using namespace std::chrono_literals;
using punctual::cli::try_parse_shard;
using punctual::cli::try_parse_start_at;

std::string shard_refusal(const char* text, const char* job_index) {
  try {
    punctual::cli::parse_shard(text, job_index);
  } catch (const punctual::cli::usage_error& e) {
    return e.what();
  }
  return "";
}

punctual::cli::run_setup built(punctual::cli::run_options o) {
  o.url = "http://127.0.0.1:1/";
  return punctual::cli::build_run(o, {"punctual", "run"});
}

TEST(shard_option, takes_i_of_n_and_the_job_index) {
  const auto s = try_parse_shard("2/7", nullptr);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2U);
  EXPECT_EQ(s->count, 7U);
  const auto env = try_parse_shard("env/3", "2");
  ASSERT_TRUE(env);
  EXPECT_EQ(env->index, 2U);
  EXPECT_EQ(env->count, 3U);
  EXPECT_TRUE(try_parse_shard("0/1", nullptr));
}

TEST(shard_option, refuses_slices_that_do_not_exist) {
  for (const char* bad : {"3/2", "2/2", "0/0", "x/2", "1", "/2", "1/", "-1/2", "1/2/3", "1 /2"}) {
    EXPECT_FALSE(try_parse_shard(bad, nullptr)) << bad;
  }
  EXPECT_FALSE(try_parse_shard("env/3", nullptr));
  EXPECT_FALSE(try_parse_shard("env/3", "3"));
  EXPECT_NE(shard_refusal("env/3", nullptr).find("JOB_COMPLETION_INDEX is not set"),
            std::string::npos);
  EXPECT_NE(shard_refusal("env/3", "7").find("'7'"), std::string::npos);
  EXPECT_NE(shard_refusal("3/2", nullptr).find("expected I/N"), std::string::npos);
}

TEST(start_at_option, reads_rfc3339_and_unix_seconds_as_the_same_instant) {
  const auto unix = try_parse_start_at("1796101200.25");
  ASSERT_TRUE(unix);
  EXPECT_EQ(unix->count(), 1796101200'250000000);
  EXPECT_EQ(try_parse_start_at("2026-12-01T05:00:00.25Z"), unix);
  EXPECT_EQ(try_parse_start_at("2026-12-01T06:00:00.250+01:00"), unix);
  EXPECT_EQ(try_parse_start_at("2026-12-01t00:30:00.25-04:30"), unix);
  EXPECT_EQ(try_parse_start_at("1796101200"), std::chrono::nanoseconds{1796101200'000000000});
}

TEST(start_at_option, refuses_what_is_not_an_instant) {
  for (const char* bad :
       {"", "now", "+5m", "2026-12-01", "2026-12-01T05:00:00", "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T05:00:00+1:00", "1796101200.",
        ".5", "1796101200.1234567891", "99999999999", "-5", "2026-12-01T05:00:00.Z"}) {
    EXPECT_FALSE(try_parse_start_at(bad)) << bad;
  }
}

TEST(plan_digest_rule, names_the_global_plan_and_ignores_per_shard_options) {
  punctual::cli::run_options o;
  o.rate = "1000";
  o.duration = "2s";
  const std::string plan = built(o).config.plan_sha256;
  EXPECT_EQ(plan.size(), 64U);
  auto per_shard = o;
  per_shard.connections = 40;
  per_shard.threads = 1;
  per_shard.max_queue = 9;
  per_shard.shard = "1/4";
  EXPECT_EQ(built(per_shard).config.plan_sha256, plan);
  for (auto change : {+[](punctual::cli::run_options& x) { x.seed = 2; },
                      +[](punctual::cli::run_options& x) { x.rate = "1001"; },
                      +[](punctual::cli::run_options& x) { x.duration = "3s"; },
                      +[](punctual::cli::run_options& x) { x.warmup = "1s"; },
                      +[](punctual::cli::run_options& x) { x.timeout = "2s"; },
                      +[](punctual::cli::run_options& x) { x.arrival = "poisson"; }}) {
    auto other = o;
    change(other);
    EXPECT_NE(built(other).config.plan_sha256, plan);
  }
}

TEST(shard_option, slices_the_plan_and_refuses_the_closed_model) {
  punctual::cli::run_options o;
  o.rate = "1000";
  o.shard = "2/5";
  const auto c = built(o).config;
  EXPECT_EQ(c.shards(), 5U);
  EXPECT_EQ(c.shard_index(), 2U);
  punctual::cli::run_options closed;
  closed.model = "closed";
  closed.shard = "0/2";
  EXPECT_THROW(built(closed), punctual::cli::usage_error);
}

TEST(start_at_option, refuses_a_start_past_by_more_than_the_window) {
  punctual::cli::run_options o;
  o.rate = "1000";
  o.duration = "10s";
  o.start_at = "1000000000";  // 2001
  EXPECT_THROW(built(o), punctual::cli::usage_error);
  o.start_at = "4000000000";  // 2096: more than a day ahead
  EXPECT_THROW(built(o), punctual::cli::usage_error);
  const auto soon = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch()) +
                    60s;
  o.start_at = std::to_string(soon.count());
  EXPECT_EQ(built(o).config.start_at, std::chrono::nanoseconds{soon});
}

}  // namespace
