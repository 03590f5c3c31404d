#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenario/scenario.hpp"
#include "test_files.hpp"
#include "yaml_loader_inputs.hpp"

namespace punctual::scenario {
namespace {

using namespace std::chrono_literals;

std::string scenario_error_of(const std::string& text) {
  return test::load_error_of([&] { parse_scenario(text, "s.yaml"); });
}

// Lines 1-3; the scenarios that follow start at line 4.
const std::string head =
    "target: http://127.0.0.1:8080\n"
    "phases:\n"
    "  - {duration: 1s, arrival_rate: 10}\n";
// Lines 4-7 after `head`, or 1-4 after the run-wide lines a case adds before them.
const std::string one_scenario =
    "scenarios:\n"
    "  - name: a\n"
    "    steps:\n"
    "      - {name: s, path: /}\n";

using punctual::test::temp_dir;

TEST(scenario_file, reads_every_key) {
  const temp_dir dir;
  dir.write("order.json", R"({"item": 42})");
  const std::string file = dir.write("s.yaml", R"(target: http://127.0.0.1:8080
phases:
  - {duration: 30s, arrival_rate: 10}
  - {duration: 1m, arrival_rate: 2.5k, ramp_to: 50}
arrival: poisson
seed: 18446744073709551615
max_users: 500
on_overload: drop
on_error: continue
graceful_stop: 0s
connection: pool
scenarios:
  - name: checkout
    weight: 70
    steps:
      - name: home
        path: /
        headers: {Accept: text/html}
        expect_status: 200-299
        think: uniform:1s..3s
      - name: pay
        method: POST
        url: http://127.0.0.1:8080/pay?x=1
        body_file: order.json
        expect_status: [200, 302-303]
        expect_body_contains: '"paid": true'
        think: exp:2s
  - name: browse_2
    steps:
      - name: home
        path: /
        body: hi
        expect_status: 200,302
        think: 2s
)");
  const scenario_file f = load_scenario(file);
  EXPECT_EQ(f.file, file);
  EXPECT_EQ(f.target, "http://127.0.0.1:8080");
  ASSERT_EQ(f.phases.size(), 2u);
  EXPECT_EQ(f.phases[0].duration, 30s);
  EXPECT_EQ(f.phases[0].arrival_rate, 10);
  EXPECT_FALSE(f.phases[0].ramp_to);
  EXPECT_EQ(f.phases[1].duration, 60s);
  EXPECT_EQ(f.phases[1].arrival_rate, 2500);
  EXPECT_EQ(f.phases[1].ramp_to, 50);
  EXPECT_TRUE(f.poisson);
  EXPECT_EQ(f.seed, 18446744073709551615u);
  EXPECT_EQ(f.max_users, 500u);
  EXPECT_EQ(f.on_overload, overload_policy::drop);
  EXPECT_EQ(f.on_error, error_policy::continue_);
  EXPECT_EQ(f.graceful_stop, 0s);
  EXPECT_EQ(f.connection, connection_policy::pool);
  ASSERT_EQ(f.scenarios.size(), 2u);
  EXPECT_EQ(f.step_count(), 3u);

  const scenario_def& checkout = f.scenarios[0];
  EXPECT_EQ(checkout.name, "checkout");
  EXPECT_EQ(checkout.weight, 70);
  EXPECT_EQ(checkout.line, 13);
  ASSERT_EQ(checkout.steps.size(), 2u);
  const step& home = checkout.steps[0];
  EXPECT_EQ(home.name, "home");
  EXPECT_EQ(home.method, "GET");
  EXPECT_EQ(home.target, "/");
  EXPECT_EQ(home.headers, std::vector<std::string>{"Accept: text/html"});
  EXPECT_EQ(home.expect_status, (std::vector<int>{200, 299}));
  EXPECT_EQ(describe(home.think), "uniform:1s..3s");
  EXPECT_EQ(home.line, 16);
  const step& pay = checkout.steps[1];
  EXPECT_EQ(pay.method, "POST");
  EXPECT_EQ(pay.target, "http://127.0.0.1:8080/pay?x=1");
  EXPECT_EQ(pay.body, R"({"item": 42})");
  EXPECT_EQ(pay.expect_status, (std::vector<int>{200, 200, 302, 303}));
  EXPECT_EQ(pay.expect_body, R"("paid": true)");
  EXPECT_EQ(home.expect_body, "");
  EXPECT_EQ(pay.think.shape, think_time::kind::exponential);
  EXPECT_EQ(pay.think.a, 2s);

  const scenario_def& browse = f.scenarios[1];
  EXPECT_EQ(browse.weight, 1);  // the default
  EXPECT_EQ(browse.steps[0].body, "hi");
  EXPECT_EQ(browse.steps[0].expect_status, (std::vector<int>{200, 200, 302, 302}));
  EXPECT_EQ(browse.steps[0].think.shape, think_time::kind::fixed);
  EXPECT_EQ(browse.steps[0].think.a, 2s);
}

TEST(scenario_file, defaults) {
  const scenario_file f = parse_scenario(head + one_scenario, "s.yaml");
  EXPECT_FALSE(f.poisson);
  EXPECT_FALSE(f.seed);
  EXPECT_EQ(f.max_users, 0u);
  EXPECT_EQ(f.on_overload, overload_policy::queue);
  EXPECT_EQ(f.on_error, error_policy::abort);
  EXPECT_EQ(f.graceful_stop, 30s);
  EXPECT_EQ(f.connection, connection_policy::per_user);  // as a browser: each user its own
  EXPECT_TRUE(f.cookies);
  EXPECT_FALSE(f.csv);
  const step& s = f.scenarios[0].steps[0];
  EXPECT_EQ(s.method, "GET");
  EXPECT_TRUE(s.expect_status.empty());
  EXPECT_EQ(s.think.shape, think_time::kind::fixed);
  EXPECT_EQ(s.think.a, 0s);
}

// Each refusal is one line naming the file, the line and the key.
TEST(scenario_file, refusals_name_file_line_and_key) {
  const auto step_with = [](const std::string& keys) {
    return head + "scenarios:\n  - name: a\n    steps:\n      - {name: s, path: /, " + keys + "}\n";
  };
  const std::pair<std::string, const char*> cases[] = {
      // keys: unknown, and known but not built yet
      {head + "users: 10\n" + one_scenario, "s.yaml:4: users: unknown key"},
      {head + "feeder: x.csv\n" + one_scenario, "s.yaml:4: feeder: unknown key"},
      {head + "cookies: maybe\n" + one_scenario, "s.yaml:4: cookies:"},
      {head + "csv: users.csv\n" + one_scenario, "s.yaml:4: csv: expected a mapping"},
      {head + "csv: {file: no-such.csv}\n" + one_scenario, "s.yaml:4: file: cannot read"},
      {head + "csv: {file: x.csv, order: shuffled}\n" + one_scenario,
       "s.yaml:4: order: 'shuffled' is not"},
      {head + "connection: shared\n" + one_scenario,
       "s.yaml:4: connection: 'shared' is not per_user or pool"},
      {step_with("capture: {id: x}"), "s.yaml:7: capture: expected a mapping"},
      {step_with("capture: {id: {header: X, json: /a}}"),
       "s.yaml:7: capture: id: give header or json"},
      {step_with("capture: {id: {json: a}}"), "s.yaml:7: json: 'a' is not a JSON Pointer"},
      {step_with("capture: {id: {header: 'X Y'}}"), "s.yaml:7: header: 'X Y' is not a header name"},
      {step_with("capture: {'a b': {header: X}}"), "s.yaml:7: capture: 'a b' is not a name"},
      {step_with("expect_body_contains: ''"), "s.yaml:7: expect_body_contains: the text is empty"},
      {step_with("expect_body_contains: [ok]"),
       "s.yaml:7: expect_body_contains: expected a text value"},
      {step_with("colour: red"), "s.yaml:7: colour: unknown key"},
      {head + "scenarios:\n  - name: a\n    think: 1s\n    steps: [{name: s, path: /}]\n",
       "s.yaml:6: think: unknown key"},
      {"target: x\nphases:\n  - {duration: 1s, arrival_rate: 1, rate: 2}\n" + one_scenario,
       "s.yaml:3: rate: unknown key"},
      // wrong types
      {"target: [a]\n", "s.yaml:1: target: expected a text value"},
      {"target: x\nphases: {a: 1}\n", "s.yaml:2: phases: expected a list"},
      {"[1, 2]\n", "s.yaml:1: file: expected a mapping"},
      {head + "scenarios: {a: 1}\n", "s.yaml:4: scenarios: expected a list"},
      {head + "scenarios:\n  - name: a\n    steps: /\n", "s.yaml:6: steps: expected a list"},
      {head + "scenarios:\n  - name: a\n    weight: heavy\n    steps: [{name: s, path: /}]\n",
       "s.yaml:6: weight: 'heavy' is not a number"},
      {head + "scenarios:\n  - name: a\n    weight: -1\n    steps: [{name: s, path: /}]\n",
       "s.yaml:6: weight: must not be negative"},
      {step_with("headers: [a]"), "s.yaml:7: headers: expected a mapping"},
      {step_with("headers: {'Bad Name': x}"), "s.yaml:7: headers:"},
      {step_with("method: 'G T'"), "s.yaml:7: method: method 'G T'"},
      {head + "seed: -1\n" + one_scenario, "s.yaml:4: seed: '-1' is not a whole number"},
      {head + "seed: 1.5\n" + one_scenario, "s.yaml:4: seed: '1.5' is not a whole number"},
      {head + "max_users: 4294967296\n" + one_scenario,
       "s.yaml:4: max_users: '4294967296' is not a whole number from 0 to 4294967295"},
      {head + "arrival: bursty\n" + one_scenario,
       "s.yaml:4: arrival: 'bursty' is not constant or poisson"},
      {head + "on_overload: wait\n" + one_scenario,
       "s.yaml:4: on_overload: 'wait' is not queue or drop"},
      {head + "on_error: retry\n" + one_scenario,
       "s.yaml:4: on_error: 'retry' is not abort or continue"},
      // durations and rates
      {"target: x\nphases:\n  - {duration: 0s, arrival_rate: 1}\n",
       "s.yaml:3: duration: must be > 0"},
      {"target: x\nphases:\n  - {duration: -1s, arrival_rate: 1}\n",
       "s.yaml:3: duration: '-1s' is not a duration"},
      {"target: x\nphases:\n  - {arrival_rate: 1}\n",
       "s.yaml:3: duration: every phase needs a duration"},
      {"target: x\nphases:\n  - {duration: 1s}\n",
       "s.yaml:3: arrival_rate: every phase needs an arrival_rate"},
      {"target: x\nphases:\n  - {duration: 1s, arrival_rate: -1}\n",
       "s.yaml:3: arrival_rate: '-1' is not a rate"},
      {"target: x\nphases:\n  - {duration: 1s, arrival_rate: 2e9}\n",
       "s.yaml:3: arrival_rate: '2e9' is not a rate"},
      {"target: x\nphases:\n  - {duration: 1s, arrival_rate: 1, ramp_to: 2G}\n",
       "s.yaml:3: ramp_to: '2G' is not a rate"},
      {"target: x\nphases:\n  - {duration: 1s, arrival_rate: 0}\n  - {duration: 1s, "
       "arrival_rate: 0, ramp_to: 0}\n",
       "s.yaml:3: phases: every rate is 0"},
      {"target: x\nphases:\n  - {duration: 1000000h, arrival_rate: 1}\n  - {duration: "
       "1000000h, arrival_rate: 1}\n",
       "s.yaml:4: duration: the phases are too long"},
      {head + "graceful_stop: -1s\n" + one_scenario,
       "s.yaml:4: graceful_stop: '-1s' is not a duration"},
      {step_with("think: soon"), "s.yaml:7: think: 'soon' is not a think time"},
      {step_with("think: -1s"), "s.yaml:7: think: '-1s' is not a think time"},
      {step_with("think: 'uniform:3s..1s'"), "s.yaml:7: think: 'uniform:3s..1s' is not a think"},
      {step_with("think: 'exp:0s'"), "s.yaml:7: think: 'exp:0s' is not a think time"},
      // names, lists and counts
      {head + "scenarios:\n  - name: a\n    weight: 0\n    steps: [{name: s, path: /}]\n",
       "s.yaml:5: weight: the weights add up to 0"},
      {head + "scenarios:\n  - name: a\n    steps:\n      - {name: my step, path: /}\n",
       "s.yaml:7: name: 'my step' may only use"},
      {head + "scenarios:\n  - name: a\n    steps:\n      - {name: s, path: /}\n      - {name: s, "
              "path: /b}\n",
       "s.yaml:8: name: 's' is used twice in this scenario"},
      {head + "scenarios:\n  - {name: a, steps: [{name: s, path: /}]}\n  - {name: a, steps: "
              "[{name: s, path: /}]}\n",
       "s.yaml:6: name: 'a' is used twice"},
      {head + "scenarios:\n  - {name: session, steps: [{name: s, path: /}]}\n",
       "s.yaml:5: name: 'session' is reserved"},
      {head + "scenarios:\n  - {name: a, steps: [{name: session, path: /}]}\n",
       "s.yaml:5: name: 'session' is reserved"},
      {head + "scenarios:\n  - {steps: [{name: s, path: /}]}\n",
       "s.yaml:5: name: every scenario needs a name"},
      {head + "scenarios:\n  - {name: a, steps: [{path: /}]}\n",
       "s.yaml:5: name: every step needs a name"},
      {head + "scenarios:\n  - name: a\n    steps: []\n", "s.yaml:6: steps: the list is empty"},
      {head + "scenarios:\n  - name: a\n", "s.yaml:5: steps: every scenario needs steps"},
      {head + "scenarios: []\n", "s.yaml:4: scenarios: the list is empty"},
      {head, "s.yaml:1: scenarios: missing"},
      {"target: x\nphases: []\n", "s.yaml:2: phases: the list is empty"},
      {"target: x\n" + one_scenario, "s.yaml:1: phases: missing"},
      {"phases: []\n", "s.yaml:1: target: missing"},
      {"target: ''\n", "s.yaml:1: target: is empty"},
      // the request of a step
      {head + "scenarios:\n  - {name: a, steps: [{name: s, url: ''}]}\n",
       "s.yaml:5: url: is empty"},
      {step_with("url: http://h/"), "s.yaml:7: path: give path or url, not both"},
      {head + "scenarios:\n  - {name: a, steps: [{name: s}]}\n",
       "s.yaml:5: path: every step needs a path or a url"},
      {step_with("body: x, body_file: y"), "s.yaml:7: body: give body or body_file, not both"},
      {step_with("body_file: /nonexistent/body"),
       "s.yaml:7: body_file: cannot read '/nonexistent/body'"},
      {step_with("expect_status: abc"), "s.yaml:7: expect_status: 'abc' is not a status code"},
      {step_with("expect_status: 99"), "s.yaml:7: expect_status: '99' is not a status code"},
      {step_with("expect_status: 600"), "s.yaml:7: expect_status: '600' is not a status code"},
      {step_with("expect_status: 300-200"), "s.yaml:7: expect_status: '300-200' is not"},
      {step_with("expect_status: 200-"), "s.yaml:7: expect_status: '200-' is not"},
      {step_with("expect_status: []"), "s.yaml:7: expect_status: the list is empty"},
      {step_with("expect_status: [200, x]"), "s.yaml:7: expect_status: 'x' is not"},
      {step_with("expect_status: {a: 1}"), "s.yaml:7: expect_status: expected a text value"},
      // the YAML itself
      {"", "s.yaml:1: file: is empty"},
      {head + "scenarios:\n  - &x {name: a, steps: [{name: s, path: /}]}\n  - *x\n",
       "s.yaml:5: yaml: anchors and aliases are not supported"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string got = scenario_error_of(text);
    EXPECT_EQ(got.rfind(expected, 0), 0u) << "input:\n" << text << "\ngot: " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

// Each step is a name, and each scenario one more for its session: 200 in all at most.
TEST(scenario_file, at_most_200_names) {
  const auto steps = [](int n) {
    std::string text = head + "scenarios:\n  - name: a\n    steps:\n";
    for (int i = 0; i < n; ++i) text += "      - {name: s" + std::to_string(i) + ", path: /}\n";
    return text;
  };
  EXPECT_EQ(parse_scenario(steps(199), "s").step_count(), 199u);
  // Step 200 is the 201st name, on line 7 + 199.
  EXPECT_EQ(scenario_error_of(steps(200)).rfind("s.yaml:206: scenarios: more than 200 names", 0),
            0u)
      << scenario_error_of(steps(200));

  const auto scenarios = [](int n) {
    std::string text = head + "scenarios:\n";
    for (int i = 0; i < n; ++i) {
      text += "  - {name: c" + std::to_string(i) + ", steps: [{name: s, path: /}]}\n";
    }
    return text;
  };
  EXPECT_EQ(parse_scenario(scenarios(100), "s").step_count(), 100u);
  EXPECT_EQ(
      scenario_error_of(scenarios(101)).rfind("s.yaml:105: scenarios: more than 200 names", 0), 0u)
      << scenario_error_of(scenarios(101));
}

// A billion-laughs file is refused at its first anchor, before anything expands; so is a file
// over 1 MiB.
TEST(scenario_file, alias_bombs_and_huge_files_are_refused) {
  const std::string bomb = test::alias_bomb();
  EXPECT_EQ(scenario_error_of(bomb).rfind("s.yaml:1: yaml: anchors and aliases", 0), 0u)
      << scenario_error_of(bomb);
  const std::string huge = head + "scenarios:\n  - {name: a, steps: [{name: s, path: /, body: '" +
                           std::string(1 << 20, 'x') + "'}]}\n";
  EXPECT_EQ(scenario_error_of(huge).rfind("s.yaml:1: file: larger than 1 MiB", 0), 0u)
      << scenario_error_of(huge);
}

TEST(scenario_file, a_missing_file_is_named) {
  EXPECT_EQ(test::load_error_of([] { load_scenario("/nonexistent/s.yaml"); }),
            "/nonexistent/s.yaml: file: cannot be read");
}

// The example in docs/scenario.md is a file this loader accepts, with the shape the doc
// promises (the integration tests run it).
TEST(scenario_file, the_documented_example_is_accepted) {
  const std::string doc =
      test::read_file(std::string(PUNCTUAL_TEST_DATA) + "/../../docs/scenario.md");
  const std::string marker = "<!-- example: scenario -->\n```yaml\n";
  const auto start = doc.find(marker);
  ASSERT_NE(start, std::string::npos);
  const auto end = doc.find("```", start + marker.size());
  ASSERT_NE(end, std::string::npos);
  const scenario_file f =
      parse_scenario(doc.substr(start + marker.size(), end - start - marker.size()), "doc");
  EXPECT_EQ(f.target, "http://127.0.0.1:PORT");
  EXPECT_EQ(f.scenarios.size(), 2u);
  EXPECT_EQ(f.max_users, 200u);
  EXPECT_EQ(f.connection, connection_policy::pool);
  nanoseconds total{};
  for (const auto& p : f.phases) total += p.duration;
  EXPECT_EQ(total, 4s);
  for (const auto& s : f.scenarios) EXPECT_GE(s.steps.size(), 2u);
}

TEST(think_text, parses_each_shape) {
  const auto fixed = parse_think("1.5s");
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed->shape, think_time::kind::fixed);
  EXPECT_EQ(fixed->a, 1500ms);
  const auto uniform = parse_think("uniform:500ms..2m");
  ASSERT_TRUE(uniform);
  EXPECT_EQ(uniform->shape, think_time::kind::uniform);
  EXPECT_EQ(uniform->a, 500ms);
  EXPECT_EQ(uniform->b, 2min);
  const auto exp = parse_think("exp:2s");
  ASSERT_TRUE(exp);
  EXPECT_EQ(exp->shape, think_time::kind::exponential);
  EXPECT_EQ(exp->a, 2s);
  for (const char* bad :
       {"", "soon", "-1s", "2x", "uniform:", "uniform:1s", "uniform:2s..1s", "uniform:1s..",
        "uniform:..1s", "exp:", "exp:0s", "exp:-1s", "fixed:1s", "Uniform:1s..2s"}) {
    EXPECT_FALSE(parse_think(bad)) << bad;
  }
}

// describe() gives the canonical text, which reads back as the same think time.
TEST(think_text, describe_round_trips) {
  const std::pair<const char*, const char*> cases[] = {
      {"2s", "2s"},
      {"0s", "0s"},
      {"0", "0s"},
      {"2", "2s"},
      {"1.5s", "1500ms"},
      {"90s", "90s"},
      {"120s", "2m"},
      {"uniform:1s..3s", "uniform:1s..3s"},
      {"uniform:0s..0.5s", "uniform:0s..500ms"},
      {"uniform:2s..2s", "uniform:2s..2s"},
      {"exp:2s", "exp:2s"},
      {"exp:250us", "exp:250us"},
  };
  for (const auto& [text, canonical] : cases) {
    const auto t = parse_think(text);
    ASSERT_TRUE(t) << text;
    EXPECT_EQ(describe(*t), canonical) << text;
    const auto again = parse_think(describe(*t));
    ASSERT_TRUE(again) << text;
    EXPECT_EQ(again->shape, t->shape) << text;
    EXPECT_EQ(again->a, t->a) << text;
    EXPECT_EQ(again->b, t->b) << text;
  }
}

}  // namespace
}  // namespace punctual::scenario
