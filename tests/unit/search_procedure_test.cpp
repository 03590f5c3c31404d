// The search procedure on scripted steps: no engine, no sockets, no clock but the fake
// runner's. Each rule of docs/design.md ("Search") is driven by the facts a step returns.
#include <gtest/gtest.h>

#include <functional>

#include "search/procedure.hpp"

namespace punctual::search {
namespace {

using namespace std::chrono_literals;

step_facts passing(double p99_ns = 10e6) {
  step_facts f;
  f.slos.push_back(
      {"p99<=50ms", true, p99_ns, p99_ns * 0.9, p99_ns * 1.1, 50e6, true, true, false});
  f.response_p50_ns = 2e6;
  f.mean_service_ns = 2e6;
  f.planned = 1000;
  return f;
}

step_facts failing() {
  step_facts f = passing(80e6);
  f.slos[0].pass_point = f.slos[0].pass_bound = false;
  return f;
}

step_facts undecided() {
  step_facts f = passing(45e6);
  f.slos[0].bound = 60e6;
  f.slos[0].pass_bound = false;
  return f;
}

step_facts invalid(const std::string& check) {
  step_facts f = passing();
  f.valid = false;
  f.failed_checks = {check};
  f.check_notes = {"why " + check};
  return f;
}

// Steps answer by `script(rate, how many times this rate ran before)`; time passes by each
// step's warm-up and duration, and by `probe_time` a probe.
class fake_runner final : public step_runner {
 public:
  using script_fn = std::function<step_facts(double rate, int earlier_runs)>;
  explicit fake_runner(script_fn script) : script_(std::move(script)) {}

  step_facts run_step(const step_plan& plan) override {
    plans.push_back(plan);
    clock_ += plan.warmup + plan.duration;
    int earlier = 0;
    for (std::size_t i = 0; i + 1 < plans.size(); ++i)
      earlier += plans[i].rate_per_s == plan.rate_per_s;
    return script_(plan.rate_per_s, earlier);
  }
  probe_result probe() override {
    clock_ += 250ms;
    ++probes;
    const bool ok = probes > probes_failing;
    return {ok ? 1e6 : 50e6, true};
  }
  nanoseconds elapsed() override { return clock_; }

  std::vector<step_plan> plans;
  int probes = 0;
  int probes_failing = 0;

 private:
  script_fn script_;
  nanoseconds clock_{};
};

fake_runner capacity(double c) {
  return fake_runner([c](double rate, int) { return rate <= c ? passing() : failing(); });
}

std::vector<double> rates_of(const fake_runner& r) {
  std::vector<double> out;
  for (const auto& p : r.plans) out.push_back(p.rate_per_s);
  return out;
}

TEST(search_procedure, grows_by_the_factor_then_bisects_to_the_resolution) {
  fake_runner r = capacity(437);
  const outcome o = run_search(settings{}, r);
  EXPECT_EQ(rates_of(r), (std::vector<double>{100, 200, 400, 800, 600, 500, 450, 425, 438}));
  ASSERT_TRUE(o.sustained && o.failed);
  EXPECT_EQ(*o.sustained, 425);
  EXPECT_EQ(*o.failed, 438);
  EXPECT_EQ(o.why, limit::server);
  EXPECT_EQ(o.stopped_by, "resolution");
  EXPECT_EQ(exit_code_of(o), 0);
}

TEST(search_procedure, to_caps_the_rate_and_max_steps_and_max_time_end_the_search) {
  settings s;
  s.to = 300;
  fake_runner capped = capacity(1e9);
  outcome o = run_search(s, capped);
  EXPECT_EQ(rates_of(capped), (std::vector<double>{100, 200, 300}));
  EXPECT_EQ(o.why, limit::to);
  EXPECT_EQ(exit_code_of(o), 0);

  s = settings{};
  s.max_steps = 3;
  fake_runner steps = capacity(1e9);
  o = run_search(s, steps);
  EXPECT_EQ(steps.plans.size(), 3u);
  EXPECT_EQ(o.why, limit::steps);
  EXPECT_EQ(*o.sustained, 400);

  s = settings{};
  s.max_time = 30s;  // 12 s a step, and the probes between
  fake_runner timed = capacity(1e9);
  o = run_search(s, timed);
  EXPECT_EQ(timed.plans.size(), 2u);
  EXPECT_EQ(o.why, limit::time);
  EXPECT_EQ(o.stopped_by, "--max-time");
}

TEST(search_procedure, a_failure_at_from_exits_3) {
  fake_runner r = capacity(50);
  const outcome o = run_search(settings{}, r);
  EXPECT_EQ(r.plans.size(), 1u);
  EXPECT_FALSE(o.sustained);
  EXPECT_EQ(exit_code_of(o), 3);
}

// The point estimate passes while the bound fails: run once more, longer, then a failure.
TEST(search_procedure, an_undecided_step_is_run_once_more_longer_then_counted_a_failure) {
  fake_runner r([](double rate, int) { return rate < 400 ? passing() : undecided(); });
  settings s;
  s.max_steps = 5;
  const outcome o = run_search(s, r);
  ASSERT_GE(r.plans.size(), 4u);
  EXPECT_EQ(r.plans[3].rate_per_s, 400);
  EXPECT_EQ(r.plans[3].why, "re-run: undecided");
  // (60 - 45) / (50 - 45) = 3: nine times the samples.
  EXPECT_EQ(r.plans[3].duration, 90s);
  EXPECT_EQ(o.steps[2].first, verdict::undecided);
  EXPECT_EQ(o.steps[3].counted, verdict::fail);
  EXPECT_EQ(*o.failed, 400);

  fake_runner decided(
      [](double rate, int earlier) { return rate < 400 || earlier > 0 ? passing() : undecided(); });
  const outcome p = run_search(s, decided);
  EXPECT_EQ(p.steps[3].counted, verdict::pass);
}

TEST(search_procedure, too_few_samples_runs_again_for_as_long_as_the_percentile_needs) {
  fake_runner r([](double rate, int earlier) {
    return rate == 100 && earlier == 0 ? invalid("samples_beyond_p99.9") : failing();
  });
  const outcome o = run_search(settings{}, r);
  ASSERT_EQ(r.plans.size(), 2u);
  // 1.2 x 10 / 0.001 = 12,000 samples at 100/s: 120 s, capped at 10 x 10 s.
  EXPECT_EQ(r.plans[1].duration, 100s);
  EXPECT_EQ(r.plans[1].why, "re-run: samples");
  EXPECT_EQ(exit_code_of(o), 3);
}

TEST(search_procedure, the_generators_limit_is_run_once_more_then_ends_the_search_with_exit_4) {
  fake_runner r([](double rate, int) { return rate < 400 ? passing() : invalid("send_lag_p99"); });
  const outcome o = run_search(settings{}, r);
  EXPECT_EQ(rates_of(r), (std::vector<double>{100, 200, 400, 400}));
  EXPECT_EQ(o.why, limit::generator);
  EXPECT_EQ(*o.sustained, 200);
  EXPECT_EQ(o.generator_check, "send_lag_p99: why send_lag_p99");
  EXPECT_EQ(exit_code_of(o), 4);

  // Once only: a re-run that is valid is judged as any step.
  fake_runner once([](double rate, int earlier) {
    return rate == 400 && earlier == 0 ? invalid("schedule_kept")
                                       : (rate < 500 ? passing() : failing());
  });
  const outcome p = run_search(settings{}, once);
  EXPECT_EQ(p.why, limit::server);
  EXPECT_EQ(exit_code_of(p), 0);
}

TEST(search_procedure, connections_follow_littles_law_and_a_cap_at_the_limit_is_named) {
  fake_runner r([](double rate, int) {
    step_facts f = rate < 1600 ? passing() : invalid("connection_cap");
    f.mean_service_ns = 20e6;
    return f;
  });
  settings s;
  s.max_connections = 40;
  const outcome o = run_search(s, r);
  // 2 x rate x 20 ms, after the first step's guess of 100 ms.
  EXPECT_EQ(r.plans[0].connections, 20u);
  EXPECT_EQ(r.plans[1].connections, 8u);
  EXPECT_EQ(r.plans[2].connections, 16u);
  EXPECT_EQ(r.plans[3].connections, 32u);
  EXPECT_EQ(r.plans[4].connections, 40u);  // 1600 req/s would need 64
  EXPECT_EQ(o.why, limit::connections);
  EXPECT_EQ(exit_code_of(o), 4);
  EXPECT_EQ(r.plans.size(), 5u);  // at the limit there is no re-run with more
}

TEST(search_procedure, a_step_short_of_connections_below_the_limit_is_run_again_with_more) {
  fake_runner r([](double rate, int earlier) {
    step_facts f = rate == 200 && earlier == 0 ? invalid("connection_cap") : passing();
    f.mean_service_ns = rate == 200 ? 50e6 : 10e6;
    f.completed_per_s = rate;
    if (rate > 300) f = failing();
    return f;
  });
  settings s;
  s.max_steps = 4;
  run_search(s, r);
  ASSERT_GE(r.plans.size(), 3u);
  EXPECT_EQ(r.plans[2].rate_per_s, 200);
  EXPECT_EQ(r.plans[2].why, "re-run: connections");
  EXPECT_EQ(r.plans[1].connections, 4u);   // 2 x 200 x 10 ms
  EXPECT_EQ(r.plans[2].connections, 20u);  // 2 x 200 x 50 ms
}

// A saturated server's service time grows with its queue, so Little's law asks for more
// connections at every try; more connections that bring no more answers are the server's limit.
TEST(search_procedure, more_connections_without_more_answers_is_the_servers_limit) {
  int runs = 0;
  fake_runner r([&runs](double rate, int) {
    if (rate < 800) return passing();
    step_facts f = invalid("connection_cap");
    f.mean_service_ns = 10e6 * ++runs;
    f.completed_per_s = 500;
    return f;
  });
  settings s;
  s.max_steps = 6;
  const outcome o = run_search(s, r);
  ASSERT_GE(o.steps.size(), 5u);
  EXPECT_EQ(o.steps[3].plan.rate_per_s, 800);
  EXPECT_EQ(o.steps[4].plan.why, "re-run: connections");
  EXPECT_EQ(o.steps[4].counted, verdict::fail);
  EXPECT_EQ(*o.failed, 800);
  EXPECT_EQ(o.why, limit::server);
}

TEST(search_procedure, the_server_recovers_between_steps_up_to_the_cooldown) {
  fake_runner r = capacity(300);
  r.probes_failing = 3;
  settings s;
  s.max_steps = 3;
  const outcome o = run_search(s, r);
  EXPECT_EQ(o.recovery_threshold, 4ms);  // twice the first step's p50 of 2 ms
  EXPECT_EQ(o.steps[0].cooldown, 0ns);
  EXPECT_EQ(o.steps[1].cooldown, 1s);  // three failing probes and the passing one
  EXPECT_TRUE(o.steps[1].recovered);
  EXPECT_EQ(o.steps[2].cooldown, 250ms);

  fake_runner stuck = capacity(300);
  stuck.probes_failing = 1000;
  s.cooldown = 1s;
  const outcome p = run_search(s, stuck);
  EXPECT_FALSE(p.steps[1].recovered);
  EXPECT_EQ(p.steps[1].cooldown, 1s);
}

TEST(search_procedure, connections_are_sized_for_the_p99_service_time_when_it_is_longer) {
  fake_runner r([](double rate, int) {
    step_facts f = rate < 800 ? passing() : failing();
    f.mean_service_ns = 2e6;
    f.p99_service_ns = 10e6;
    return f;
  });
  settings s;
  s.max_steps = 2;
  run_search(s, r);
  EXPECT_EQ(r.plans[1].connections, 4u);  // 2 x 200 x 10 ms
}

TEST(search_procedure, a_service_time_failure_is_the_servers_whatever_the_validity) {
  step_facts f = invalid("send_lag_p99");
  f.slos[0].service_time_fails = true;
  EXPECT_EQ(classify(f), verdict::fail);
  EXPECT_EQ(classify(invalid("dropped")), verdict::generator);
  EXPECT_EQ(classify(invalid("user_cap")), verdict::connections);
  EXPECT_EQ(classify(invalid("samples_beyond_p99")), verdict::too_few_samples);
  EXPECT_EQ(classify(undecided()), verdict::undecided);
}

}  // namespace
}  // namespace punctual::search
