// The live metrics' registry (src/metrics) on the simulation: fed as the CLI feeds it (each
// emitted interval, each poll of the collector), its final snapshot holds exactly the JSON
// report's counts, and what it showed while the run lasted never went down nor past them.
#include <gtest/gtest.h>

#include <map>

#include "cli_run.hpp"
#include "metrics/registry.hpp"
#include "sim_setups.hpp"

namespace punctual::sim {
namespace {

using json = nlohmann::ordered_json;
using labels = std::map<std::string, std::string>;

// The registry beside a simulated run: every tenth poll's snapshot, and the final one.
struct watched {
  std::unique_ptr<metrics::registry> registry;
  std::vector<metrics::snapshot> live;
  metrics::snapshot final;
  int polls = 0;
};

void watch(surroundings& around, watched& w) {
  around.before_run = [&w](simulation& sim) {
    w.registry = std::make_unique<metrics::registry>(sim.settings().config);
    sim.set_poll_hook([&w](const engine::run_collector& c, bool final) {
      if (!final && w.polls++ % 10 != 0) return;
      auto s = w.registry->build(c.live(), {.queue_depth = c.queue_depth()}, {});
      (final ? w.final : w.live.emplace_back()) = std::move(s);
    });
  };
  around.on_interval = [&w](const record::view_set& v) { w.registry->add_interval(v); };
}

bool has_labels(const metrics::sample& s, const labels& want) {
  std::size_t found = 0;
  for (const auto& l : s.labels) {
    const auto it = want.find(l.name);
    if (it == want.end()) continue;
    if (it->second != l.value) return false;
    ++found;
  }
  return found == want.size();
}

// The sum of the series called `name` whose labels include `want` (0 when there is none).
double sum_of(const metrics::snapshot& s, const std::string& name, const labels& want = {}) {
  double sum = 0;
  for (const auto& x : s.samples) {
    if (x.name == name && has_labels(x, want)) sum += x.value;
  }
  return sum;
}

std::size_t count_of_series(const metrics::snapshot& s, const std::string& name) {
  std::size_t n = 0;
  for (const auto& x : s.samples) n += x.name == name;
  return n;
}

// Every counter series of `earlier` is at most its value in `later` (counters never go down).
std::string key_of(const metrics::sample& x) {
  std::string key = x.name;
  for (const auto& l : x.labels) key += "," + l.name + "=" + l.value;
  return key;
}

void expect_not_after(const metrics::snapshot& earlier, const metrics::snapshot& later) {
  std::map<std::string, double> values;
  for (const auto& x : later.samples) values[key_of(x)] = x.value;
  for (const auto& f : earlier.families) {
    if (f.type == metrics::metric_type::gauge) continue;
    for (const auto& x : earlier.samples) {
      if (!x.name.starts_with(f.name)) continue;
      const auto it = values.find(key_of(x));
      ASSERT_NE(it, values.end()) << x.name << " vanished";
      EXPECT_LE(x.value, it->second) << x.name << " went down";
    }
  }
}

void expect_counters_grow(const watched& w) {
  ASSERT_GE(w.live.size(), 3u);
  for (std::size_t i = 1; i < w.live.size(); ++i) expect_not_after(w.live[i - 1], w.live[i]);
  expect_not_after(w.live.back(), w.final);
}

void expect_outcomes(const metrics::snapshot& s, const std::string& series, const labels& where,
                     const json& outcomes) {
  for (const auto name : record::outcome_names) {
    labels l = where;
    l["outcome"] = std::string(name);
    EXPECT_EQ(sum_of(s, series, l), outcomes[std::string(name)].get<double>())
        << series << " outcome " << name;
  }
}

// `punctual run ARGS` in the simulation, against a server that fails some requests (503, 429
// and resets), with the registry watching.
cli_result watched_run(const std::vector<std::string>& args, watched& w) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(fate::status_503)] = 0.2;
  around.server.shares[static_cast<std::size_t>(fate::status_429)] = 0.05;
  around.server.shares[static_cast<std::size_t>(fate::reset)] = 0.05;
  watch(around, w);
  return run_cli(args, around);
}

const std::string mix = R"(requests:
  - {name: home, path: /, weight: 3}
  - {name: search, path: /search, weight: 2}
  - {name: cart, method: POST, path: /cart, body: "x", weight: 1}
)";

TEST(sim_metrics, the_final_snapshot_equals_the_json_report_by_name) {
  const scratch_dir dir("metrics-mix");
  watched w;
  const cli_result r =
      watched_run({"-R", "600", "-d", "3s", "--warmup", "1s", "-t", "2", "-c", "8", "--requests",
                   dir.write("mix.yaml", mix), "http://127.0.0.1:8080/"},
                  w);
  ASSERT_TRUE(check_run(*r.sim).empty());
  const json& doc = r.doc;
  const metrics::snapshot& s = w.final;
  EXPECT_EQ(sum_of(s, "punctual_planned_total"), doc["schedule"]["planned"].get<double>());
  EXPECT_EQ(sum_of(s, "punctual_sent_total"), doc["attempts"]["first"].get<double>());
  expect_outcomes(s, "punctual_requests_total", {}, doc["outcomes"]);
  expect_outcomes(s, "punctual_warmup_requests_total", {}, doc["warmup"]["outcomes"]);
  EXPECT_GT(doc["warmup"]["planned"].get<double>(), 0);
  EXPECT_GT(doc["outcomes"]["http_error"].get<double>(), 0);
  EXPECT_GT(doc["outcomes"]["socket_error"].get<double>(), 0);
  for (const auto& [name, n] : doc["by_name"].items()) {
    expect_outcomes(s, "punctual_requests_total", {{"name", name}}, n["outcomes"]);
    for (const char* view : {"response_time", "service_time"}) {
      const std::string h = std::string("punctual_") + view + "_seconds";
      EXPECT_EQ(sum_of(s, h + "_count", {{"name", name}}), n[view]["count"].get<double>())
          << name << " " << view;
      EXPECT_EQ(sum_of(s, h + "_bucket", {{"name", name}, {"le", "+Inf"}}),
                n[view]["count"].get<double>());
    }
  }
  // The names' codes and reasons add up to the run's.
  for (const auto& [code, n] : doc["status_counts"].items())
    EXPECT_EQ(sum_of(s, "punctual_http_responses_total", {{"code", code}}), n.get<double>());
  for (const auto& [reason, n] : doc["socket_errors"].items())
    EXPECT_EQ(sum_of(s, "punctual_socket_errors_total", {{"reason", reason}}), n.get<double>());
  EXPECT_EQ(sum_of(s, "punctual_http_responses_total", {{"code", "503"}, {"name", "cart"}}), [&] {
    // cart's 503s: its http_errors, since only 503 and 429 answer with an error.
    return doc["by_name"]["cart"]["outcomes"]["http_error"].get<double>() -
           sum_of(s, "punctual_http_responses_total", {{"code", "429"}, {"name", "cart"}});
  }());
  EXPECT_EQ(sum_of(s, "punctual_send_lag_seconds_count"),
            doc["latency"]["send_lag"]["count"].get<double>());
  EXPECT_EQ(sum_of(s, "punctual_queue_wait_seconds_count"),
            doc["latency"]["queue_wait"]["count"].get<double>());
  EXPECT_EQ(count_of_series(s, "punctual_requests_total"), 3 * record::outcome_count);
  EXPECT_EQ(sum_of(s, "punctual_requests_in_flight"), 0);
  EXPECT_EQ(sum_of(s, "punctual_info", {{"run_id", "sim-1"}, {"model", "open"}}), 1);
  expect_counters_grow(w);
  // Live: the counts showed up while the run lasted (a second behind), not only at its end.
  const double final_ok = sum_of(s, "punctual_requests_total", {{"outcome", "ok"}});
  EXPECT_TRUE(std::any_of(w.live.begin(), w.live.end(), [&](const metrics::snapshot& l) {
    const double ok = sum_of(l, "punctual_requests_total", {{"outcome", "ok"}});
    return ok > 0 && ok < final_ok / 2;
  }));
}

TEST(sim_metrics, without_a_mix_the_series_have_an_empty_name) {
  watched w;
  const cli_result r =
      watched_run({"-R", "400", "-d", "2s", "-t", "2", "-c", "4", "http://127.0.0.1:8080/"}, w);
  const json& doc = r.doc;
  const metrics::snapshot& s = w.final;
  expect_outcomes(s, "punctual_requests_total", {{"name", ""}}, doc["outcomes"]);
  for (const auto& [code, n] : doc["status_counts"].items()) {
    EXPECT_EQ(sum_of(s, "punctual_http_responses_total", {{"code", code}, {"name", ""}}),
              n.get<double>());
  }
  EXPECT_EQ(sum_of(s, "punctual_response_time_seconds_count", {{"name", ""}}),
            doc["latency"]["response_time"]["count"].get<double>());
  EXPECT_EQ(sum_of(s, "punctual_target_rate_per_second"), 400);
  expect_counters_grow(w);
}

const std::string two_scenarios = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 3s, arrival_rate: 40}
scenarios:
  - name: shop
    weight: 2
    steps:
      - {name: login, path: /login, think: "uniform:20ms..80ms"}
      - {name: buy, method: POST, path: /cart, body: "item=1"}
  - name: look
    steps:
      - {name: home, path: /}
)";

TEST(sim_metrics, sessions_equal_the_json_report_by_scenario) {
  const scratch_dir dir("metrics-hybrid");
  watched w;
  const cli_result r =
      watched_run({"--scenario", dir.write("s.yaml", two_scenarios), "-t", "2", "-c", "4"}, w);
  const json& doc = r.doc;
  const metrics::snapshot& s = w.final;
  ASSERT_EQ(doc["sessions"].size(), 2u);
  for (const auto& [scenario, n] : doc["sessions"].items()) {
    expect_outcomes(s, "punctual_sessions_total", {{"scenario", scenario}}, n["outcomes"]);
    EXPECT_EQ(sum_of(s, "punctual_session_time_seconds_count", {{"scenario", scenario}}),
              n["session_time"]["count"].get<double>());
  }
  for (const auto& [name, n] : doc["by_name"].items())
    expect_outcomes(s, "punctual_requests_total", {{"name", name}}, n["outcomes"]);
  expect_outcomes(s, "punctual_requests_total", {}, doc["outcomes"]);
  EXPECT_EQ(sum_of(s, "punctual_active_users"), 0);
  EXPECT_EQ(sum_of(s, "punctual_target_rate_per_second"), 40);
  expect_counters_grow(w);
}

}  // namespace
}  // namespace punctual::sim
