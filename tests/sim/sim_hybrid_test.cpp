// The hybrid model (--scenario) in the simulation: the truth of every step and session through
// a stall, at one and two threads, rebuilt from the network's log and think times drawn again
// from docs/scenario.md's description of the keyed draw; the omission that service time makes
// and response time avoids; and the documented example of docs/scenario.md with its SLOs and
// the user_cap check.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::hybrid_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

// Every percentile of `view` (a JSON object with percentiles_ns) is the one of `values`.
void expect_percentiles(const json& view, const std::vector<std::int64_t>& values,
                        const std::string& what) {
  for (const auto& [key, p] : percentiles) {
    EXPECT_EQ(view["percentiles_ns"][key].get<std::int64_t>(), percentile_of(values, p))
        << what << " p" << key;
  }
}

// The scenario of the truth test: 50 users a second for 3 s, each logging in, browsing and
// buying, with uniform think times that spread the steps a stall released together.
constexpr std::uint64_t seed = 7;
constexpr int users_per_s = 50;
struct think_range {
  int low_ms;
  int high_ms;
};
constexpr think_range thinks[] = {{20, 80}, {20, 200}, {0, 0}};
const char* const steps[] = {"login", "browse", "buy"};
const std::string shop_scenario = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 3s, arrival_rate: 50}
scenarios:
  - name: shop
    steps:
      - {name: login, path: /login, think: "uniform:20ms..80ms"}
      - {name: browse, path: /items, think: "uniform:20ms..200ms"}
      - {name: buy, method: POST, path: /cart, body: "item=1"}
)";
const milliseconds stall_from{900};
const milliseconds stall_until{1400};

// docs/scenario.md's keyed draw, written again from its description: three SplitMix64 steps
// over the seed, the purpose word and the index, the top 53 bits as a fraction.
std::uint64_t splitmix_step(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double keyed_draw(std::uint64_t purpose, std::uint64_t index) {
  const std::uint64_t mixed = splitmix_step(splitmix_step(seed) ^ purpose) ^ index;
  return static_cast<double>(splitmix_step(mixed) >> 11) * 0x1.0p-53;
}

// User `user`'s think time after step `step`: uniform between the step's bounds.
nanoseconds think_of(std::uint64_t user, std::uint32_t step) {
  constexpr std::uint64_t think_purpose = 3;
  const double u = keyed_draw(think_purpose, (user << 16) ^ step);
  const double low = static_cast<double>(nanoseconds(milliseconds(thinks[step].low_ms)).count());
  const double high = static_cast<double>(nanoseconds(milliseconds(thinks[step].high_ms)).count());
  return nanoseconds{static_cast<std::int64_t>(low + u * (high - low))};
}

cli_result shop_run(const std::string& threads) {
  const scratch_dir dir("hybrid-truth");
  surroundings around;
  around.server.stalls = {{stall_from, stall_until}};
  return run_cli({"--scenario", dir.write("shop.yaml", shop_scenario), "-t", threads, "-c", "2",
                  "--seed", std::to_string(seed)},
                 around);
}

// Each step's and session's true times, by step name and for the sessions.
struct truths {
  std::map<std::string, std::vector<std::int64_t>> response;
  std::map<std::string, std::vector<std::int64_t>> service;
  std::vector<std::int64_t> sessions;
};

// Rebuilds every user's steps from the truth: the first intended at the user's arrival on the
// constant schedule, each later one at the previous step's true completion (the arrival of its
// answer's last byte, from the network's log) plus the think time drawn again; and holds the
// engine's intended times and completions to it.
truths rebuild(const simulation& sim) {
  truths out;
  const nanoseconds start = sim.result().start.mono;
  std::map<std::uint64_t, std::vector<const final_outcome*>> by_user;
  for (const auto& f : sim.finals()) by_user[f.t.index].push_back(&f);
  EXPECT_EQ(by_user.size(), static_cast<std::size_t>(3 * users_per_s));
  for (auto& [user, done] : by_user) {
    std::sort(done.begin(), done.end(), [](auto* a, auto* b) { return a->t.step < b->t.step; });
    EXPECT_EQ(done.size(), 3u) << "user " << user;
    const nanoseconds arrival =
        start + static_cast<std::int64_t>(user) * milliseconds(1000 / users_per_s);
    nanoseconds intended = arrival;
    nanoseconds completed{};
    for (const final_outcome* f : done) {
      EXPECT_EQ(f->outcome, record::outcome::ok);
      const served_request* s = sim.server().find(f->sim_id);
      if (!s || !s->answered) {
        ADD_FAILURE() << "user " << user << " step " << f->t.step << " was not answered";
        return out;
      }
      completed = sim.net().connections()[s->connection - 1]->arrival_of(s->end_offset - 1);
      EXPECT_EQ(f->t.intended, intended) << "user " << user << " step " << f->t.step;
      EXPECT_EQ(f->at, completed) << "user " << user << " step " << f->t.step;
      const nanoseconds due = intended - start;
      if (due >= stall_from && due < stall_until) {
        EXPECT_GE(completed, start + stall_until) << "user " << user << " step " << f->t.step;
      }
      out.response[steps[f->t.step]].push_back((completed - intended).count());
      out.service[steps[f->t.step]].push_back((f->at - f->t.sent).count());
      intended = completed + think_of(user, f->t.step);
    }
    out.sessions.push_back((completed - arrival).count());
  }
  return out;
}

// The truth test of the hybrid model: every step and session as the truth has it, each name's
// percentiles and the sessions' exactly those of the truth.
void expect_hybrid_truth(const cli_result& r) {
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  const json& doc = r.doc;
  const truths t = rebuild(*r.sim);
  const json& shop = doc["sessions"]["shop"];
  EXPECT_EQ(shop["planned"].get<int>(), 3 * users_per_s);
  EXPECT_EQ(shop["outcomes"]["ok"].get<int>(), 3 * users_per_s);
  for (const char* step : steps) {
    const json& named = doc["by_name"][std::string("shop.") + step];
    EXPECT_EQ(named["planned"].get<int>(), 3 * users_per_s) << step;
    expect_percentiles(named["response_time"], t.response.at(step), step);
    expect_percentiles(named["service_time"], t.service.at(step), step);
  }
  expect_percentiles(shop["session_time"], t.sessions, "session");
  EXPECT_NE(r.text.find("model: hybrid from "), std::string::npos) << r.text.substr(0, 300);
  EXPECT_NE(r.text.find("sessions planned"), std::string::npos) << r.text.substr(0, 300);
  // The omission: the logins the stall caught queue for the two connections, and their service
  // time, from the actual send, holds none of that wait.
  const json& login = doc["by_name"]["shop.login"];
  const auto truth_p90 = login["response_time"]["percentiles_ns"]["90"].get<std::int64_t>();
  const auto service_p90 = login["service_time"]["percentiles_ns"]["90"].get<std::int64_t>();
  EXPECT_LT(service_p90, truth_p90 - nanoseconds(milliseconds(100)).count());
}

TEST(sim_hybrid, every_step_and_session_is_the_truth_one_thread) {
  expect_hybrid_truth(shop_run("1"));
}

TEST(sim_hybrid, every_step_and_session_is_the_truth_two_threads) {
  expect_hybrid_truth(shop_run("2"));
}

// The scenario example of docs/scenario.md, as the integration tests ran it, PORT made the
// simulated target's.
std::string documented_scenario() {
  const auto doc =
      std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "docs" / "scenario.md";
  std::ifstream in(doc);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::string marker = "<!-- example: scenario -->";
  const std::size_t at = all.find(marker);
  const std::size_t from = all.find("```yaml\n", at);
  const std::size_t to = all.find("```", from + 8);
  if (at == std::string::npos || from == std::string::npos || to == std::string::npos) return {};
  std::string block = all.substr(from + 8, to - from - 8);
  const std::size_t port = block.find("PORT");
  if (port != std::string::npos) block.replace(port, 4, "8080");
  return block;
}

// The documented example runs as documented: its sessions add up, its max_users of 200 passes
// the user_cap check with room to spare (Little's law wants far fewer for these arrivals of
// sub-second sessions), and SLOs on a scenario's sessions and on one step are judged, the
// session one on exactly the sessions' p99.
TEST(sim_hybrid, the_documented_example_runs_as_documented) {
  const std::string text = documented_scenario();
  ASSERT_FALSE(text.empty()) << "no scenario example in docs/scenario.md";
  const scratch_dir dir("hybrid-doc");
  const std::vector<std::string> slos{"buy.session:p99<=60s", "browse.home:errors==0"};
  const cli_result r = run_cli(
      {"--scenario", dir.write("scenario.yaml", text), "-c8", "--slo", slos[0], "--slo", slos[1]});
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  const json& doc = r.doc;
  EXPECT_EQ(doc["model"]["kind"], "hybrid");
  for (const auto& [name, s] : doc["sessions"].items()) {
    std::uint64_t ended = 0;
    for (const auto& [k, v] : s["outcomes"].items()) ended += v.get<std::uint64_t>();
    EXPECT_EQ(ended, s["planned"].get<std::uint64_t>()) << name;
    EXPECT_GT(ended, 0u) << name;
  }
  int caps = 0;
  for (const auto& check : doc["validity"]["checks"]) {
    if (check["name"] != "user_cap") continue;
    ++caps;
    EXPECT_TRUE(check["pass"].get<bool>());
    EXPECT_EQ(check["figure"].get<double>(), 200);
    EXPECT_GT(check["threshold"].get<double>(), 0);
    EXPECT_LT(check["threshold"].get<double>(), 200);
  }
  EXPECT_EQ(caps, 1);
  std::map<std::string, json> results;
  for (const auto& x : doc["slo"]["results"]) results[x["expression"].get<std::string>()] = x;
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results.count(slos[0]) && results.count(slos[1]));
  EXPECT_EQ(results[slos[0]]["figure"],
            doc["sessions"]["buy"]["session_time"]["percentiles_ns"]["99"]);
  EXPECT_TRUE(results[slos[0]]["pass"].get<bool>());
  EXPECT_TRUE(results[slos[1]]["pass"].get<bool>());
}

}  // namespace
}  // namespace punctual::sim::hybrid_cases
