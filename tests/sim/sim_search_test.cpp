// punctual search in the simulation: a server of known capacity (serve --cpu-per-request on one
// thread), the answer, the exits, and the server's backlog carried from step to step.
#include <gtest/gtest.h>

#include "cli/command.hpp"
#include "cli_search.hpp"
#include "report/junit.hpp"
#include "sim_seeds.hpp"
#include "sim_setups.hpp"

namespace punctual::sim {
namespace {

using namespace std::chrono_literals;

// A server that answers 1 / cpu requests per second at most, one at a time.
surroundings capacity_server(nanoseconds cpu) {
  surroundings around;
  around.server.cpu_per_request = cpu;
  around.server.service.a = 0ns;
  return around;
}

using junit_state = report::junit_case::state;

// The --junit cases of a search whose deciding step is `step` (1-based): the answer's case, then
// that step's, each named "stepN." before run's classname.
void expect_junit_of_step(const search_result& r, std::size_t step, junit_state answer) {
  const auto cases = report::search_junit_cases(r.doc);
  ASSERT_GE(cases.size(), 2u);
  EXPECT_EQ(cases[0].classname, "search");
  EXPECT_EQ(cases[0].result, answer) << cases[0].message;
  if (answer == junit_state::failed) {
    EXPECT_EQ(cases[0].message, r.doc["search"]["answer"]);
  }
  std::vector<std::string> slos;
  for (std::size_t i = 1; i < cases.size(); ++i) {
    EXPECT_EQ(cases[i].classname.rfind("step" + std::to_string(step) + ".", 0), 0u)
        << cases[i].classname;
    if (cases[i].classname.ends_with(".slo")) slos.push_back(cases[i].name);
    if (answer == junit_state::passed) {
      EXPECT_EQ(cases[i].result, junit_state::passed) << cases[i].name;
    }
  }
  EXPECT_EQ(slos, r.setup.context.slos);
}

bool junit_failed(const search_result& r, const std::string& classname, const std::string& name) {
  for (const auto& c : report::search_junit_cases(r.doc)) {
    if (c.classname == classname && c.name.find(name) == 0) return c.result == junit_state::failed;
  }
  return false;
}

const std::vector<std::string> short_steps{
    "--step-duration", "2s", "--step-warmup", "500ms", "-t", "1", "--timeout", "2s"};

std::vector<std::string> args_with(std::vector<std::string> extra) {
  std::vector<std::string> args = short_steps;
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back("http://127.0.0.1:8080/");
  return args;
}

TEST(sim_search, finds_the_capacity_of_a_server_within_a_tenth) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("an accuracy; the other searches grow and bisect too");
  constexpr double capacity = 500;  // 2 ms of CPU a request
  const search_result r = search_cli(args_with({"--slo", "p99<=50ms"}), capacity_server(2ms));
  EXPECT_EQ(r.exit_code, 0) << r.text;
  ASSERT_TRUE(r.outcome.sustained) << r.text;
  EXPECT_GE(*r.outcome.sustained, 0.9 * capacity) << r.text;
  EXPECT_LE(*r.outcome.sustained, capacity) << r.text;
  ASSERT_TRUE(r.outcome.failed);
  EXPECT_LE(*r.outcome.failed - *r.outcome.sustained, 0.05 * *r.outcome.sustained) << r.text;
  EXPECT_EQ(r.outcome.why, search::limit::server);
  EXPECT_TRUE(r.broken.empty()) << r.broken.front();
  EXPECT_NE(r.text.find("sustains " + std::to_string(static_cast<int>(*r.outcome.sustained)) +
                        " req/s under p99<=50ms, errors<=1%"),
            std::string::npos)
      << r.text;
  EXPECT_EQ(r.doc["search"]["added_slo"], "errors<=1%");
  // --junit: the answer passes; the cases are those of the last step at the sustained rate.
  std::size_t deciding = 0;
  for (std::size_t i = 0; i < r.outcome.steps.size(); ++i) {
    if (r.outcome.steps[i].plan.rate_per_s == *r.outcome.sustained &&
        r.outcome.steps[i].counted == search::verdict::pass)
      deciding = i + 1;
  }
  ASSERT_GT(deciding, 0u);
  expect_junit_of_step(r, deciding, junit_state::passed);
}

TEST(sim_search, a_server_that_fails_every_rate_exits_3_after_one_step) {
  surroundings around;
  around.server.service.a = 100ms;
  const search_result r = search_cli(args_with({"--slo", "p99<=50ms"}), around);
  EXPECT_EQ(r.exit_code, 3) << r.text;
  EXPECT_EQ(r.outcome.steps.size(), 1u);
  EXPECT_FALSE(r.outcome.sustained);
  EXPECT_NE(r.text.find("fails even at --from 100 req/s"), std::string::npos) << r.text;
  expect_junit_of_step(r, 1, junit_state::failed);
  EXPECT_TRUE(junit_failed(r, "step1.slo", "p99<=50ms"));
}

TEST(sim_search, a_paused_generator_is_its_own_limit_exit_4_naming_the_check) {
  surroundings around;
  around.pauses = {{0, 300ms, 400ms}};  // in every step: the generator, not the server
  const search_result r = search_cli(args_with({"--slo", "p99<=50ms"}), around);
  EXPECT_EQ(r.exit_code, 4) << r.text;
  EXPECT_EQ(r.outcome.why, search::limit::generator);
  ASSERT_EQ(r.outcome.steps.size(), 2u);  // the step and its one re-run
  EXPECT_EQ(r.outcome.steps[1].plan.why, "re-run: generator");
  EXPECT_FALSE(r.outcome.sustained);
  EXPECT_NE(r.outcome.generator_check.find("send_lag_p99"), std::string::npos)
      << r.outcome.generator_check;
  EXPECT_NE(r.text.find("the generator, not the server, is the limit"), std::string::npos)
      << r.text;
  EXPECT_EQ(r.doc["search"]["limit"], "generator");
  expect_junit_of_step(r, 2, junit_state::failed);
  EXPECT_TRUE(junit_failed(r, "step2.validity", "send_lag_p99"));
}

// A failing step leaves a queue in the server (with -c 400, the requests wait in the server, not
// in the generator): 1,600 req/s for 2.5 s against 500 leaves seconds of work after the drain.
// The next step starts only once a probe at a low rate is answered within twice the first
// step's median, and the wait is reported.
const std::vector<std::string> overload{"-c", "400",   "--from",    "400",         "--factor",
                                        "4",  "--slo", "p90<=50ms", "--max-steps", "3"};

TEST(sim_search, the_next_step_waits_for_the_server_to_work_off_the_last_ones_backlog) {
  const search_result r = search_cli(args_with(overload), capacity_server(2ms));
  ASSERT_EQ(r.outcome.steps.size(), 3u) << r.text;
  EXPECT_EQ(r.outcome.steps[0].counted, search::verdict::pass) << r.text;
  EXPECT_EQ(r.outcome.steps[1].counted, search::verdict::fail) << r.text;
  EXPECT_LT(r.outcome.steps[1].cooldown, 1s) << r.text;  // step 1 left nothing
  const auto& next = r.outcome.steps[2];
  EXPECT_TRUE(next.recovered);
  EXPECT_GT(next.cooldown, 1s) << r.text;
  EXPECT_LT(next.cooldown, 30s);
  EXPECT_LT(r.backlog_before_step[2], 5ms) << r.text;
  EXPECT_TRUE(r.broken.empty()) << r.broken.front();
}

// --cooldown bounds the wait: a backlog longer than it is not waited out, and the report says
// the server had not recovered.
TEST(sim_search, a_backlog_longer_than_the_cooldown_is_reported_not_waited_out) {
  auto args = overload;
  args.insert(args.end(), {"--cooldown", "200ms"});
  const search_result r = search_cli(args_with(args), capacity_server(2ms));
  ASSERT_EQ(r.outcome.steps.size(), 3u) << r.text;
  EXPECT_FALSE(r.outcome.steps[2].recovered) << r.text;
  EXPECT_GT(r.backlog_before_step[2], 100ms);
  EXPECT_NE(r.text.find("(not recovered)"), std::string::npos) << r.text;
}

// Each step's -c is Little's law with 2x headroom on the previous step's service time (its p99
// when longer than its mean).
TEST(sim_search, connections_are_sized_from_the_previous_step) {
  surroundings around;
  around.server.service.a = 20ms;
  const search_result r =
      search_cli(args_with({"--slo", "p90<=50ms", "--from", "200", "--to", "800"}), around);
  ASSERT_EQ(r.outcome.steps.size(), 3u) << r.text;
  EXPECT_EQ(r.outcome.steps[0].plan.connections, 40u);  // 2 x 200 x a guess of 100 ms
  for (std::size_t i = 1; i < r.outcome.steps.size(); ++i) {
    const auto& prev = r.outcome.steps[i - 1].facts;
    const auto& step = r.outcome.steps[i].plan;
    const double expected = std::ceil(2 * step.rate_per_s * search::sizing_service_ns(prev) / 1e9);
    EXPECT_GE(prev.p99_service_ns, 20e6);
    EXPECT_EQ(step.connections, static_cast<std::uint32_t>(expected)) << "step " << i + 1;
    EXPECT_TRUE(r.outcome.steps[i].facts.valid) << r.text;
  }
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.outcome.why, search::limit::to);
}

TEST(sim_search, a_connection_limit_at_max_connections_is_named) {
  surroundings around;
  around.server.service.a = 20ms;
  const search_result r = search_cli(
      args_with({"--slo", "p90<=50ms", "--from", "200", "--max-connections", "4"}), around);
  EXPECT_EQ(r.exit_code, 4) << r.text;
  EXPECT_EQ(r.outcome.steps.size(), 1u) << r.text;
  EXPECT_EQ(r.outcome.why, search::limit::connections);
  EXPECT_NE(r.outcome.generator_check.find("connection_cap"), std::string::npos);
  EXPECT_NE(r.text.find("the connection limit (--max-connections)"), std::string::npos) << r.text;
}

// --scenario: every phase's arrival rate is scaled by one factor; 100 users a second, one
// request each, against a server of 500 req/s.
TEST(sim_search, a_scenario_is_scaled_by_one_factor_and_reports_its_peak_users) {
  const scratch_dir dir("search-hybrid");
  const std::string scenario = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 2s, arrival_rate: 100}
scenarios:
  - name: get
    steps:
      - {name: get, path: /}
)";
  const search_result r = search_cli({"--scenario", dir.write("s.yaml", scenario), "-t", "1", "-c",
                                      "400", "--timeout", "2s", "--slo", "p90<=50ms"},
                                     capacity_server(2ms));
  EXPECT_EQ(r.exit_code, 0) << r.text;
  ASSERT_TRUE(r.outcome.sustained) << r.text;
  const double peak = *r.outcome.sustained * 100;
  EXPECT_GE(peak, 450) << r.text;
  EXPECT_LE(peak, 500) << r.text;
  EXPECT_EQ(r.doc["search"]["scale"], "factor");
  EXPECT_NEAR(r.doc["search"]["peak_users_per_s"].get<double>(), peak, 1e-6);
  EXPECT_NE(r.text.find("users/s"), std::string::npos) << r.text;
  EXPECT_TRUE(r.broken.empty()) << r.broken.front();
}

TEST(sim_search, refused_options_and_a_missing_slo_are_usage_errors) {
  for (const auto& bad : std::vector<std::vector<std::string>>{{"-R", "100"},
                                                               {"-d", "10s"},
                                                               {"--stages", "1s:10"},
                                                               {"--warmup", "1s"},
                                                               {"--max-queue", "5"},
                                                               {"--hlog", "x.hlog"},
                                                               {"--shard", "0/2"},
                                                               {"--model", "closed"},
                                                               {"--resolution", "150%"},
                                                               {"--factor", "1"}}) {
    auto args = bad;
    args.insert(args.end(), {"--slo", "p99<=50ms", "http://127.0.0.1:8080/"});
    EXPECT_THROW(search_cli(args), cli::usage_error) << bad.front();
  }
  EXPECT_THROW(search_cli({"http://127.0.0.1:8080/"}), cli::usage_error);
}

}  // namespace
}  // namespace punctual::sim
