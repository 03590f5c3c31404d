#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/interval_series.hpp"
#include "analysis/slo.hpp"
#include "test_numbers.hpp"

namespace {

using punctual::analysis::bound_mode;
using punctual::analysis::comparator;
using punctual::analysis::evaluate_slos;
using punctual::analysis::interval_series;
using punctual::analysis::parse_slo;
using punctual::analysis::slo_expression;
using punctual::analysis::slo_input;
using punctual::analysis::slo_metric;
using punctual::analysis::slo_syntax_error;
using punctual::analysis::slo_unit;
using punctual::analysis::try_parse_slo;
using punctual::record::counters;
using punctual::record::outcome;
using punctual::record::view;
using punctual::record::view_set;

using punctual::test::ms;

struct good_case {
  const char* text;
  slo_metric metric;
  double percentile;
  comparator cmp;
  slo_unit unit;
  double threshold;
};

TEST(analysis_slo, parses_good_expressions) {
  const std::vector<good_case> cases = {
      {"p99<=200ms", slo_metric::percentile, 99, comparator::le, slo_unit::nanoseconds, 200e6},
      {"p99.9<1s", slo_metric::percentile, 99.9, comparator::lt, slo_unit::nanoseconds, 1e9},
      {"p50<20ms", slo_metric::percentile, 50, comparator::lt, slo_unit::nanoseconds, 20e6},
      {"p100<=2m", slo_metric::percentile, 100, comparator::le, slo_unit::nanoseconds, 120e9},
      {"p99.99>=1.5us", slo_metric::percentile, 99.99, comparator::ge, slo_unit::nanoseconds, 1500},
      {"p75>100ns", slo_metric::percentile, 75, comparator::gt, slo_unit::nanoseconds, 100},
      {"p90==0.5s", slo_metric::percentile, 90, comparator::eq, slo_unit::nanoseconds, 500e6},
      {"p0.1<=.5ms", slo_metric::percentile, 0.1, comparator::le, slo_unit::nanoseconds, 500e3},
      {"errors<=0.1%", slo_metric::errors, 0, comparator::le, slo_unit::percent, 0.1},
      {"errors==0", slo_metric::errors, 0, comparator::eq, slo_unit::count, 0},
      {"errors<5", slo_metric::errors, 0, comparator::lt, slo_unit::count, 5},
      {"timeouts==0", slo_metric::timeouts, 0, comparator::eq, slo_unit::count, 0},
      {"timeouts<1%", slo_metric::timeouts, 0, comparator::lt, slo_unit::percent, 1},
      {"rate>=99%", slo_metric::rate, 0, comparator::ge, slo_unit::percent, 99},
      {"rate>99.5%", slo_metric::rate, 0, comparator::gt, slo_unit::percent, 99.5},
      {"  p99 <= 200ms ", slo_metric::percentile, 99, comparator::le, slo_unit::nanoseconds, 200e6},
  };
  for (const auto& c : cases) {
    std::string error;
    const auto e = try_parse_slo(c.text, &error);
    ASSERT_TRUE(e) << c.text << ": " << error;
    EXPECT_EQ(e->metric, c.metric) << c.text;
    EXPECT_DOUBLE_EQ(e->percentile, c.percentile) << c.text;
    EXPECT_EQ(e->cmp, c.cmp) << c.text;
    EXPECT_EQ(e->unit, c.unit) << c.text;
    EXPECT_DOUBLE_EQ(e->threshold, c.threshold) << c.text;
    EXPECT_EQ(parse_slo(c.text).threshold, e->threshold);
  }
  EXPECT_EQ(parse_slo("  p99 <= 200ms ").text, "p99 <= 200ms");
}

TEST(analysis_slo, rejects_bad_expressions_with_one_line) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected an expression"},
      {"p99", "expected a comparator"},
      {"p99 200ms", "expected a comparator"},
      {"<=200ms", "expected p<percentile>"},
      {"q99<=200ms", "expected p<percentile>"},
      {"p<=200ms", "expected p<percentile>"},
      {"p101<=1s", "above 0 and at most 100"},
      {"p0<=1s", "above 0 and at most 100"},
      {"p9.9.9<=1s", "above 0 and at most 100"},
      {"P99<=1s", "expected p<percentile>"},
      {"latency<=1s", "expected p<percentile>"},
      {"p99=200ms", "expected a comparator"},
      {"p99=<200ms", "expected a comparator"},
      {"p99!=200ms", "expected a comparator"},
      {"p99<==200ms", "expected a comparator"},
      {"p99<=200", "expected a duration"},
      {"p99<=200x", "expected a duration"},
      {"p99<=-5ms", "expected a duration"},
      {"p99<=1e3ms", "expected a duration"},
      {"p99<=200 ms", "expected a duration"},
      {"p99<=25h", "expected a duration"},
      {"p99<=1441m", "expected a duration"},
      {"p99<=", "expected a duration"},
      {"p99<=5%", "expected a duration"},
      {"errors<=abc", "expected a whole count"},
      {"errors<=101%", "expected a whole count"},
      {"errors<=0.5", "expected a whole count"},
      {"timeouts==-1", "expected a whole count"},
      {"rate>=99", "expected a percentage of the planned rate"},
      {"rate>=1s", "expected a percentage of the planned rate"},
      {"p99<=200ms\nrm -rf", "expected a duration"},
  };
  for (const auto& [text, fragment] : cases) {
    std::string error;
    EXPECT_FALSE(try_parse_slo(text, &error)) << text;
    EXPECT_NE(error.find(fragment), std::string::npos) << text << " -> " << error;
    EXPECT_EQ(error.rfind("--slo '", 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find(", got '"), std::string::npos) << error;
    try {
      parse_slo(text);
      ADD_FAILURE() << "no exception for " << text;
    } catch (const slo_syntax_error& e) {
      EXPECT_EQ(error, e.what());
    }
  }
}

TEST(analysis_slo, collects_slo_percentiles_once) {
  const std::vector<slo_expression> slos{parse_slo("p99<1s"), parse_slo("errors==0"),
                                         parse_slo("p99<=2s"), parse_slo("p99.9<3s")};
  const std::vector<double> want{99, 99.9};
  EXPECT_EQ(punctual::analysis::slo_percentiles(slos), want);
}

TEST(analysis_slo, compare_tolerates_decimal_rounding) {
  using punctual::analysis::compare;
  EXPECT_TRUE(compare(100.0 * 1 / 1000, comparator::le, 0.1));
  EXPECT_TRUE(compare(100.0 * 1 / 1000, comparator::eq, 0.1));
  EXPECT_FALSE(compare(100.0 * 1 / 1000, comparator::lt, 0.1));
  EXPECT_TRUE(compare(0.2, comparator::gt, 0.1));
  EXPECT_FALSE(compare(0.2, comparator::le, 0.1));
  EXPECT_TRUE(compare(0.2, comparator::ge, 0.2));
}

// 1000 requests whose response times are 1..1000 ms and service times half of that.
struct run_fixture {
  view_set views;
  counters counts;
  interval_series series;
  run_fixture() {
    for (int i = 1; i <= 1000; ++i) {
      views[view::response_time].record(i * ms);
      views[view::service_time].record(i * ms / 2);
    }
    counts.planned = 1000;
    counts.outcomes[punctual::record::index(outcome::ok)] = 1000;
    counts.completed_in_window = 1000;
  }
  slo_input input(bound_mode bound = bound_mode::point) const {
    return slo_input{.views = views,
                     .counts = counts,
                     .intervals = series,
                     .bound = bound,
                     .closed_model = false,
                     .reconstructed = nullptr,
                     .allow_uncorrected = false};
  }
};

punctual::analysis::slo_evaluation evaluate(const std::vector<std::string>& texts,
                                            const slo_input& in) {
  std::vector<slo_expression> slos;
  for (const auto& t : texts) slos.push_back(parse_slo(t));
  return evaluate_slos(slos, in);
}

TEST(analysis_slo, percentile_slos_on_response_and_service_time) {
  const run_fixture f;
  const auto ev = evaluate({"p99<=1s", "p99<=600ms", "p99<=400ms", "p50<20ms"}, f.input());
  ASSERT_EQ(ev.results.size(), 4u);
  EXPECT_FALSE(ev.refused);
  EXPECT_EQ(ev.basis, "response_time");
  EXPECT_EQ(ev.results[0].text, "p99<=1s");
  EXPECT_EQ(ev.results[0].bound, "point");
  EXPECT_EQ(ev.results[0].figure,
            static_cast<double>(f.views[view::response_time].value_at_percentile(99)));
  EXPECT_DOUBLE_EQ(ev.results[0].threshold, 1e9);
  EXPECT_TRUE(ev.results[0].pass);
  EXPECT_FALSE(ev.results[0].service_time_fails);
  // p99 is ~990 ms on response time, ~495 ms on service time.
  EXPECT_FALSE(ev.results[1].pass);
  EXPECT_FALSE(ev.results[1].service_time_fails);
  EXPECT_FALSE(ev.results[2].pass);
  EXPECT_TRUE(ev.results[2].service_time_fails);
  EXPECT_NEAR(ev.results[2].service_figure, 495e6, 1e6);
  EXPECT_FALSE(ev.results[3].pass);
  EXPECT_TRUE(ev.results[3].service_time_fails);
  EXPECT_TRUE(ev.any_failed());
  EXPECT_TRUE(ev.any_service_time_failure());
}

TEST(analysis_slo, upper_bound_mode_is_stricter) {
  const run_fixture f;
  // The point estimate of p99 is ~990 ms; its binomial upper bound is the sample of rank 997.
  const auto point = evaluate({"p99<=995ms"}, f.input(bound_mode::point));
  const auto upper = evaluate({"p99<=995ms"}, f.input(bound_mode::upper));
  EXPECT_TRUE(point.results[0].pass);
  EXPECT_EQ(upper.results[0].bound, "upper");
  EXPECT_FALSE(upper.results[0].pass);
  EXPECT_GE(upper.results[0].figure, 997e6);
  EXPECT_LT(upper.results[0].figure, 998e6);
  EXPECT_FALSE(upper.results[0].service_time_fails);
}

TEST(analysis_slo, counted_slos) {
  run_fixture f;
  f.counts.outcomes[punctual::record::index(outcome::ok)] = 996;
  f.counts.outcomes[punctual::record::index(outcome::http_error)] = 1;
  f.counts.outcomes[punctual::record::index(outcome::timeout)] = 1;
  f.counts.outcomes[punctual::record::index(outcome::socket_error)] = 1;
  f.counts.outcomes[punctual::record::index(outcome::unfinished)] = 1;
  f.counts.completed_in_window = 990;
  const auto ev = evaluate({"errors<=0.1%", "errors<=0.4%", "errors==4", "timeouts==0",
                            "timeouts<=1", "timeouts<=0.1%", "rate>=99%", "rate>99%"},
                           f.input());
  const std::vector<bool> pass{false, true, true, false, true, true, true, false};
  const std::vector<double> figure{0.4, 0.4, 4, 1, 1, 0.1, 99, 99};
  ASSERT_EQ(ev.results.size(), pass.size());
  for (std::size_t i = 0; i < pass.size(); ++i) {
    EXPECT_EQ(ev.results[i].pass, pass[i]) << ev.results[i].text;
    EXPECT_NEAR(ev.results[i].figure, figure[i], 1e-9) << ev.results[i].text;
    EXPECT_FALSE(ev.results[i].service_time_fails) << ev.results[i].text;
  }
  EXPECT_FALSE(ev.any_service_time_failure());
  // Drops are errors too.
  f.counts.outcomes[punctual::record::index(outcome::dropped)] = 6;
  f.counts.planned = 1006;
  EXPECT_NEAR(evaluate({"errors==10"}, f.input()).results[0].figure, 10, 0);
}

TEST(analysis_slo, closed_model_refuses_without_correction) {
  const run_fixture f;
  auto in = f.input();
  in.closed_model = true;
  const auto refused = evaluate({"p99<=2s", "errors==0"}, in);
  EXPECT_TRUE(refused.refused);
  EXPECT_TRUE(refused.results.empty());
  EXPECT_NE(refused.refusal.find("--expected-interval"), std::string::npos);
  EXPECT_EQ(refused.basis, "none");
  EXPECT_NE(refused.refusal.find("--allow-uncorrected"), std::string::npos);
  EXPECT_FALSE(refused.any_failed());

  in.allow_uncorrected = true;
  const auto uncorrected = evaluate({"p99<=2s"}, in);
  EXPECT_FALSE(uncorrected.refused);
  EXPECT_EQ(uncorrected.basis, "uncorrected");
  EXPECT_TRUE(uncorrected.results[0].pass);

  // With reconstruction the gate reads the reconstructed view, which here is much slower.
  punctual::hdr::histogram reconstructed(punctual::record::latency_params());
  reconstructed.record_n(5000 * ms, 1000);
  in.allow_uncorrected = false;
  in.reconstructed = &reconstructed;
  const auto corrected = evaluate({"p99<=2s"}, in);
  EXPECT_FALSE(corrected.refused);
  EXPECT_EQ(corrected.basis, "reconstructed");
  EXPECT_FALSE(corrected.results[0].pass);
  EXPECT_GE(corrected.results[0].figure, 5e9);
  EXPECT_FALSE(corrected.results[0].service_time_fails);
}

TEST(analysis_slo, exit_code_precedence) {
  using punctual::analysis::exit_code;
  // (validity_failed, any_slo_failed, any_service_time_failure) -> code
  EXPECT_EQ(exit_code(false, false, false), 0);
  EXPECT_EQ(exit_code(false, true, false), 3);
  EXPECT_EQ(exit_code(true, false, false), 4);
  EXPECT_EQ(exit_code(true, true, false), 4);  // invalid: no verdict on response time
  EXPECT_EQ(exit_code(true, true, true), 3);   // service time alone failed: 3 over 4
  EXPECT_EQ(exit_code(false, true, true), 3);
  EXPECT_EQ(exit_code(true, false, true), 3);
}

}  // namespace

namespace {

// Two names: a step "buy.pay" whose latencies are 1..100 ms and 10 planned with 2 timeouts,
// and the scenario's "buy.session" whose session times are 1..10 s.
struct named_fixture {
  view_set views{2};
  counters counts;
  interval_series series;
  std::vector<punctual::record::name_counts> by_name{2};
  named_fixture() {
    using punctual::record::named_view;
    for (int i = 1; i <= 100; ++i) {
      views.named(0, named_view::response_time).record(i * ms);
      views.named(0, named_view::service_time).record(i * ms / 10);
      views[view::response_time].record(i * ms / 100);
    }
    for (int i = 1; i <= 10; ++i) views.named(1, named_view::response_time).record(i * 1000 * ms);
    by_name[0].planned = 10;
    by_name[0].outcomes[punctual::record::index(outcome::ok)] = 8;
    by_name[0].outcomes[punctual::record::index(outcome::timeout)] = 2;
    by_name[1].planned = 10;
    by_name[1].outcomes[punctual::record::index(outcome::ok)] = 10;
    counts.planned = 20;
    counts.outcomes[punctual::record::index(outcome::ok)] = 20;
    counts.completed_in_window = 20;
  }
  slo_input input() const {
    return slo_input{.views = views,
                     .counts = counts,
                     .intervals = series,
                     .bound = bound_mode::point,
                     .closed_model = false,
                     .reconstructed = nullptr,
                     .allow_uncorrected = false,
                     .by_name = &by_name};
  }
};

punctual::analysis::slo_evaluation evaluate_named(const std::vector<std::string>& texts,
                                                  const slo_input& in) {
  std::vector<slo_expression> slos;
  for (const auto& t : texts) slos.push_back(parse_slo(t));
  punctual::analysis::resolve_slo_scopes(slos, {"buy.pay", "buy.session"}, {false, true});
  return evaluate_slos(slos, in);
}

}  // namespace

TEST(analysis_slo, a_name_scopes_an_expression) {
  const auto e = parse_slo(" buy.pay : p99 <= 300ms");
  EXPECT_EQ(e.scope, "buy.pay");
  EXPECT_EQ(e.metric, slo_metric::percentile);
  EXPECT_DOUBLE_EQ(e.threshold, 300.0 * ms);
  EXPECT_EQ(parse_slo("p99<=1s").scope, "");
  EXPECT_FALSE(try_parse_slo("buy pay:p99<=1s"));
  EXPECT_FALSE(try_parse_slo(":p99<=1s"));
  EXPECT_FALSE(try_parse_slo("buy.pay:"));
  std::string error;
  EXPECT_FALSE(try_parse_slo("buy.pay:rate>=99%", &error));
  EXPECT_NE(error.find("rate is the whole run's"), std::string::npos) << error;
}

TEST(analysis_slo, named_figures_come_from_the_name) {
  const named_fixture f;
  const auto ev = evaluate_named({"buy.pay:p99<=50ms", "buy.pay:p50<=60ms", "buy.pay:timeouts<=10%",
                                  "buy.pay:errors==2", "buy.session:p90<=8s", "p99<=2ms"},
                                 f.input());
  ASSERT_EQ(ev.results.size(), 6u);
  using punctual::record::named_view;
  EXPECT_EQ(
      ev.results[0].figure,
      static_cast<double>(f.views.named(0, named_view::response_time).value_at_percentile(99)));
  EXPECT_FALSE(ev.results[0].pass);
  EXPECT_FALSE(ev.results[0].service_time_fails);  // the step's service p99 is ~10 ms
  EXPECT_TRUE(ev.results[1].pass);
  EXPECT_DOUBLE_EQ(ev.results[2].figure, 20.0);  // 2 timeouts of 10 planned
  EXPECT_FALSE(ev.results[2].pass);
  EXPECT_DOUBLE_EQ(ev.results[3].figure, 2.0);
  EXPECT_TRUE(ev.results[3].pass);
  EXPECT_FALSE(ev.results[4].pass);            // the session p90 is 9 s
  EXPECT_EQ(ev.results[4].service_figure, 0);  // sessions have no service time
  EXPECT_TRUE(ev.results[5].pass);             // the run's own p99 is ~1 ms
}

TEST(analysis_slo, an_unknown_name_is_refused) {
  std::vector<slo_expression> slos{parse_slo("buy.payy:p99<=1s")};
  try {
    punctual::analysis::resolve_slo_scopes(slos, {"buy.pay", "buy.session"}, {false, true});
    FAIL() << "an unknown name was accepted";
  } catch (const slo_syntax_error& e) {
    EXPECT_NE(std::string(e.what()).find("no step, session or request named 'buy.payy'"),
              std::string::npos);
  }
  EXPECT_THROW(punctual::analysis::resolve_slo_scopes(slos, {}, {}), slo_syntax_error);
}
