// Retries as a policy, in the simulation: 503s and resets retried until the retries are spent,
// the backoffs inside the response time, the retry budget replayed token by token (a scenario's
// steps too), attempt timeouts, retry jitter that -t does not move, and the chains an interruption
// leaves in backoff. Each request's chain of attempts is held to what the scripted server did with
// every attempt, and the report's attempt counts to the attempts that really went out.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "engine/pacer.hpp"
#include "engine/retry.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::retry_cases {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using json = nlohmann::ordered_json;
using record::outcome;

// A logical request: its final outcome and its attempts as they went out, by attempt number.
struct chain {
  const final_outcome* end = nullptr;
  std::vector<const sent_attempt*> attempts;
};

std::map<std::uint64_t, chain> chains_of(const simulation& sim) {
  std::map<std::uint64_t, chain> out;
  for (const auto& f : sim.finals()) out[f.t.index].end = &f;
  for (const auto& a : sim.sent()) {
    auto& attempts = out[a.t.index].attempts;
    if (attempts.size() <= a.t.attempt) attempts.resize(a.t.attempt + 1);
    EXPECT_EQ(attempts[a.t.attempt], nullptr)
        << "request " << a.t.index << " attempt " << a.t.attempt << " sent twice";
    attempts[a.t.attempt] = &a;
  }
  return out;
}

// What the server did with an attempt (every attempt reaches it in these cases).
const served_request& served(const simulation& sim, const sent_attempt& a) {
  const served_request* s = sim.server().find(a.sim_id);
  if (!s) {
    throw std::logic_error("attempt " + std::to_string(a.sim_id) + " never reached the server");
  }
  return *s;
}

// When the client's read took the last byte of an attempt's answer.
nanoseconds answered_at(const simulation& sim, const sent_attempt& a) {
  const served_request& s = served(sim, a);
  return sim.net().connections()[a.connection - 1]->read_stamp_of(s.end_offset - 1);
}

surroundings server_failing(fate f, double share) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(f)] = share;
  return around;
}

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

// The report's attempts section against the attempts that went out: first attempts are the
// planned requests, retries the later ones, the server saw each attempt once, and each second's
// amplification is its attempts over its planned requests.
void expect_attempt_counts(const cli_result& r) {
  const simulation& sim = *r.sim;
  const json& a = r.doc["attempts"];
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  std::uint64_t retries = 0;
  std::map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> by_second;  // planned, attempts
  const nanoseconds from = sim.result().measure_start;
  for (const auto& s : sim.sent()) {
    retries += s.t.attempt > 0 ? 1 : 0;
    by_second[(s.t.sent - from) / seconds(1)].second++;
  }
  for (const auto& f : sim.finals()) by_second[(f.t.intended - from) / seconds(1)].first++;
  EXPECT_EQ(number(a["total"]), sim.sent().size());
  EXPECT_EQ(sim.server().log().size(), sim.sent().size())
      << "requests that reached the server vs attempts";
  EXPECT_EQ(number(a["first"]), planned);
  EXPECT_EQ(number(a["retries"]), retries);
  EXPECT_DOUBLE_EQ(a["amplification"].get<double>(),
                   static_cast<double>(sim.sent().size()) / static_cast<double>(planned));
  const json& per_second = a["per_second"];
  ASSERT_EQ(per_second.size(), by_second.size());
  double peak = 0;
  for (const auto& [second, counts] : by_second) {
    const json& s = per_second[static_cast<std::size_t>(second)];
    EXPECT_EQ(number(s["planned"]), counts.first) << "second " << second;
    EXPECT_EQ(number(s["attempts"]), counts.second) << "second " << second;
    if (counts.first) {
      peak = std::max(peak, static_cast<double>(counts.second) / static_cast<double>(counts.first));
    }
  }
  EXPECT_DOUBLE_EQ(a["amplification_max"].get<double>(), peak);
}

// retries_by_cause: each retry sent, by the failure of the attempt before it
// (docs/report.schema.json).
void expect_retries_by_cause(const cli_result& r) {
  const simulation& sim = *r.sim;
  std::map<std::pair<std::uint64_t, std::uint32_t>, record::retry_cause> why;
  for (const auto& x : sim.retried()) why[{x.t.index, x.t.attempt + 1}] = x.why;
  std::array<std::uint64_t, record::retry_cause_count> by_cause{};
  for (const auto& s : sim.sent()) {
    if (s.t.attempt > 0) by_cause[record::index(why.at({s.t.index, s.t.attempt}))]++;
  }
  const json& got = r.doc["attempts"]["retries_by_cause"];
  for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
    EXPECT_EQ(number(got[std::string(record::retry_cause_names[i])]), by_cause[i])
        << record::retry_cause_names[i] << " (unfinished: " << r.doc["outcomes"]["unfinished"]
        << ")";
  }
}

// Every attempt but the last met `failing`; the last one met it too only when the retries were
// spent (or, under a budget, refused), and then the request ended as `final_failure`, else ok.
void expect_retried_until_spent(const simulation& sim, fate failing, std::uint32_t retries,
                                outcome final_failure, bool budget = false) {
  for (const auto& [index, c] : chains_of(sim)) {
    ASSERT_NE(c.end, nullptr) << "request " << index << " never ended";
    ASSERT_EQ(c.attempts.size(), c.end->t.attempt + 1u) << "request " << index;
    for (std::size_t k = 0; k + 1 < c.attempts.size(); ++k) {
      ASSERT_NE(c.attempts[k], nullptr) << "request " << index << " attempt " << k;
      EXPECT_EQ(served(sim, *c.attempts[k]).what, failing)
          << "request " << index << " attempt " << k << " was retried";
    }
    const bool failed = served(sim, *c.attempts.back()).what == failing;
    EXPECT_EQ(c.end->outcome, failed ? final_failure : outcome::ok) << "request " << index;
    if (failed && !budget) {
      EXPECT_EQ(c.attempts.size(), retries + 1u)
          << "request " << index << " failed with retries left";
    }
  }
}

TEST(sim_retry, a_503_is_retried_until_the_retries_are_spent) {
  const cli_result r = run_judged({"-t1", "-c8", "-R300", "-d2s", "--timeout", "3s", "--retries",
                                   "3", "--retry-backoff", "exp:5ms..40ms", target},
                                  server_failing(fate::status_503, 0.5));
  const simulation& sim = *r.sim;
  expect_retried_until_spent(sim, fate::status_503, 3, outcome::http_error);
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
  const json& o = r.doc["outcomes"];
  EXPECT_EQ(number(o["ok"]) + number(o["http_error"]), number(r.doc["schedule"]["planned"]));
  EXPECT_EQ(number(r.doc["status_counts"]["503"]), number(o["http_error"]))
      << "only final 503s are counted";
  EXPECT_EQ(number(r.doc["attempts"]["retries_by_cause"]["5xx"]),
            number(r.doc["attempts"]["retries"]));
  // Half of all attempts fail: some requests failed four times, and most needed a retry.
  EXPECT_GT(number(o["http_error"]), 0u);
  EXPECT_GT(r.doc["attempts"]["amplification"].get<double>(), 1.5);
}

TEST(sim_retry, a_reset_is_retried_until_the_retries_are_spent) {
  const cli_result r = run_judged({"-t1", "-c8", "-R300", "-d2s", "--timeout", "3s", "--retries",
                                   "2", "--retry-backoff", "exp:5ms..40ms", target},
                                  server_failing(fate::reset, 0.3));
  const simulation& sim = *r.sim;
  expect_retried_until_spent(sim, fate::reset, 2, outcome::socket_error);
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
  const json& o = r.doc["outcomes"];
  EXPECT_EQ(number(o["socket_error"]), number(r.doc["socket_errors"]["reset"]));
  EXPECT_EQ(number(r.doc["attempts"]["retries_by_cause"]["reset"]),
            number(r.doc["attempts"]["retries"]));
  EXPECT_GT(number(o["socket_error"]), 0u);
}

// Every attempt is answered 503, so each request fails three times: its response time runs from
// its intended time through both backoffs to its last answer. It is exactly the three service
// times (the network's truth) plus the two backoffs (the policy's draws) plus what the retries
// went out late: a 503 may be read up to pacer::harvest_horizon after it came (its stamp dates
// it), and a retry whose backoff was shorter than that goes out when it is read.
TEST(sim_retry, the_backoffs_count_in_the_response_time) {
  const cli_result r = run_judged({"-t1", "-c8", "-R300", "-d2s", "--timeout", "3s", "--retries",
                                   "2", "--retry-backoff", "exp:30ms..30ms", target},
                                  server_failing(fate::status_503, 1.0));
  const simulation& sim = *r.sim;
  const auto& policy = sim.settings().config.retry();
  nanoseconds backoffs{};
  for (const auto& [index, c] : chains_of(sim)) {
    ASSERT_EQ(c.attempts.size(), 3u) << "request " << index;
    EXPECT_EQ(c.end->outcome, outcome::http_error) << "request " << index;
    nanoseconds due = c.end->t.intended;
    nanoseconds backoff{};
    nanoseconds expected{};
    for (std::uint32_t k = 0; k < 3; ++k) {
      const record::request_times& t = c.attempts[k]->t;
      const nanoseconds late = t.sent - due;
      EXPECT_EQ(t.due_time(), due) << "request " << index << " attempt " << k;
      EXPECT_TRUE(t.sent == t.dispatched && !t.had_to_connect)
          << "request " << index << " attempt " << k;
      EXPECT_TRUE(late.count() == 0 || (k > 0 && late < engine::pacer::harvest_horizon - backoff))
          << "request " << index << " attempt " << k << " went out " << late.count() << " ns late";
      const nanoseconds done = answered_at(sim, *c.attempts[k]);
      expected += late + (done - t.sent);
      if (k == 2) break;
      backoff = engine::backoff_delay(policy, index, k + 1);
      backoffs += backoff;
      expected += backoff;
      due = done + backoff;
    }
    EXPECT_EQ(c.end->at - c.end->t.intended, expected) << "request " << index;
  }
  const std::uint64_t planned = number(r.doc["schedule"]["planned"]);
  EXPECT_EQ(number(r.doc["outcomes"]["http_error"]), planned);
  EXPECT_EQ(number(r.doc["attempts"]["total"]), 3 * planned);
  EXPECT_EQ(number(r.doc["latency"]["service_time"]["count"]), 3 * planned)
      << "a service time per attempt";
  EXPECT_EQ(number(r.doc["latency"]["response_time"]["count"]), planned)
      << "a response time per request";
  // The draws are full jitter on [0, 30 ms]: about 15 ms each, 30 ms a request.
  EXPECT_GT(backoffs / static_cast<std::int64_t>(planned), milliseconds(25));
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
}

// An attempt the server never answers ends at exactly its --attempt-timeout (from when it was
// due), and is retried from there; a request whose every attempt went unanswered times out at its
// last attempt's deadline.
TEST(sim_retry, an_unanswered_attempt_is_retried_at_its_attempt_timeout) {
  const cli_result r = run_judged(
      {"-t1", "-c8", "-R300", "-d2s", "--timeout", "3s", "--retries", "2", "--retry-on", "timeout",
       "--attempt-timeout", "100ms", "--retry-backoff", "exp:5ms..20ms", target},
      server_failing(fate::never, 0.3));
  const simulation& sim = *r.sim;
  expect_retried_until_spent(sim, fate::never, 2, outcome::timeout);
  for (const auto& x : sim.retried()) {
    EXPECT_EQ(x.why, record::retry_cause::timeout) << "request " << x.t.index;
    EXPECT_EQ(x.at, x.t.due_time() + milliseconds(100))
        << "request " << x.t.index << " attempt " << x.t.attempt;
  }
  for (const auto& f : sim.finals()) {
    if (f.outcome == outcome::timeout) {
      EXPECT_EQ(f.at, f.t.due_time() + milliseconds(100)) << "request " << f.t.index;
    }
  }
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
  EXPECT_EQ(number(r.doc["attempts"]["retries_by_cause"]["timeout"]),
            number(r.doc["attempts"]["retries"]));
  EXPECT_GT(number(r.doc["outcomes"]["timeout"]), 0u);
}

// Each attempt of each request: its delay after the failure before it (retries), when it reached
// the server from the schedule's start, and whether it and every attempt before it went out the
// instant it was due.
struct attempt_timing {
  nanoseconds delay{};
  nanoseconds arrival{};
  bool on_time = true;
};
using timings = std::map<std::pair<std::uint64_t, std::uint32_t>, attempt_timing>;

timings timings_of(const simulation& sim) {
  timings out;
  std::map<std::pair<std::uint64_t, std::uint32_t>, nanoseconds> failed;
  for (const auto& x : sim.retried()) failed[{x.t.index, x.t.attempt + 1}] = x.at;
  for (const auto& [index, c] : chains_of(sim)) {
    bool on_time = true;
    for (std::uint32_t k = 0; k < c.attempts.size(); ++k) {
      const sent_attempt& a = *c.attempts[k];
      on_time = on_time && a.t.sent == a.t.due_time();
      attempt_timing& t = out[{index, k}];
      if (k > 0) t.delay = a.t.due - failed.at({index, k});
      t.arrival = served(sim, a).read_at - sim.result().start.mono;
      t.on_time = on_time;
    }
  }
  return out;
}

// The backoff is drawn from the run's seed, the request's index and the retry's number: -t1 and
// -t2 give every retry the same delay, and send it at the same instant unless a read deferred in
// one of them made it late (see the_backoffs_count_in_the_response_time); another --seed changes
// exactly the delays whose draws it changes.
TEST(sim_retry, retry_jitter_is_the_same_with_one_or_two_threads) {
  const auto args = [](const char* threads, const char* seed) {
    return std::vector<std::string>{
        threads,     "-c8", "-R300",           "-d2s",           "--timeout", "3s",
        "--retries", "2",   "--retry-backoff", "exp:40ms..40ms", "--seed",    seed,
        target};
  };
  const surroundings around = server_failing(fate::status_503, 1.0);
  const cli_result one = run_judged(args("-t1", "1"), around);
  const cli_result two = run_judged(args("-t2", "1"), around);
  const cli_result other = run_judged(args("-t2", "2"), around);
  const timings t1 = timings_of(*one.sim);
  const timings t2 = timings_of(*two.sim);
  const timings t3 = timings_of(*other.sim);
  ASSERT_EQ(t2.size(), t1.size());
  ASSERT_EQ(t3.size(), t1.size());
  const auto& p1 = one.sim->settings().config.retry();
  const auto& p2 = other.sim->settings().config.retry();
  std::size_t compared = 0;
  std::size_t moved = 0;
  for (const auto& [key, a] : t1) {
    const auto [index, attempt] = key;
    const attempt_timing& b = t2.at(key);
    const attempt_timing& c = t3.at(key);
    const std::string what =
        "request " + std::to_string(index) + " attempt " + std::to_string(attempt);
    if (attempt > 0) {
      EXPECT_EQ(a.delay, engine::backoff_delay(p1, index, attempt)) << what;
      EXPECT_EQ(b.delay, a.delay) << what << ": -t2 drew another backoff than -t1";
      EXPECT_EQ(c.delay, engine::backoff_delay(p2, index, attempt)) << what;
      moved += c.delay != a.delay ? 1 : 0;
    }
    if (a.on_time && b.on_time) {
      EXPECT_EQ(b.arrival, a.arrival) << what << " reached the server at another instant with -t2";
      ++compared;
    }
  }
  // Most attempts went out on time in both runs, and the other seed moved most retries.
  EXPECT_GT(compared, t1.size() * 9 / 10);
  EXPECT_GT(moved, t1.size() * 2 / 3 * 9 / 10);
}

// A worker's retry budget as events: first attempts deposit, failed attempts ask for a token.
struct budget_event {
  nanoseconds at{};
  bool deposit = false;
  bool taken = false;  // a request: the retry followed
  std::uint64_t index = 0;
};

// Each worker's events in the order they happened. A retry is asked for when its failure is read,
// at its stamp or up to pacer::harvest_horizon later; so a deposit in that span would make the
// order unknown, and the cases' rates leave none there (they say so if one comes). A failure with
// retries left that ended its request as `refused_as` was refused (the deadline is far).
std::vector<std::vector<budget_event>> budget_events(const simulation& sim, std::uint32_t retries,
                                                     outcome refused_as) {
  std::vector<std::vector<budget_event>> out(sim.settings().config.threads);
  for (const auto& a : sim.sent()) {
    if (a.t.attempt == 0) out[a.worker].push_back({a.t.dispatched, true, false, a.t.index});
  }
  for (const auto& x : sim.retried()) out[x.worker].push_back({x.at, false, true, x.t.index});
  for (const auto& f : sim.finals()) {
    if (f.outcome == refused_as && f.t.attempt < retries) {
      out[f.worker].push_back({f.at, false, false, f.t.index});
    }
  }
  for (auto& events : out) {
    std::sort(events.begin(), events.end(),
              [](const budget_event& a, const budget_event& b) { return a.at < b.at; });
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].deposit) continue;
      for (std::size_t j = i + 1;
           j < events.size() && events[j].at <= events[i].at + engine::pacer::harvest_horizon;
           ++j) {
        EXPECT_FALSE(events[j].deposit)
            << "request " << events[j].index << "'s deposit may have come before or after request "
            << events[i].index << "'s retry: the case's premise no longer holds";
      }
    }
  }
  return out;
}

// A retry asked for: when, how many tenths of a token its worker's bucket held, and whether the
// retry was allowed.
struct ask {
  nanoseconds at{};
  int tenths = 0;
  bool allowed = false;
};

// --retry-budget 10%: each first attempt deposits a tenth of a token into its worker's bucket,
// which starts empty and holds at most 10 tokens; a retry takes a whole one. Replays every
// worker's bucket and expects each retry asked for to have been allowed exactly when the bucket
// held a token.
std::vector<ask> replay_budget(const std::vector<std::vector<budget_event>>& workers) {
  std::vector<ask> asked;
  for (const auto& events : workers) {
    int tenths = 0;
    for (const auto& e : events) {
      if (e.deposit) {
        tenths = std::min(tenths + 1, 100);
        continue;
      }
      EXPECT_EQ(e.taken, tenths >= 10) << "request " << e.index << " asked for a retry with "
                                       << tenths << " tenths of a token in the bucket";
      asked.push_back({e.at, tenths, e.taken});
      if (tenths >= 10) tenths -= 10;
    }
  }
  return asked;
}

std::uint64_t allowed_of(const std::vector<ask>& asked) {
  return static_cast<std::uint64_t>(
      std::count_if(asked.begin(), asked.end(), [](const ask& a) { return a.allowed; }));
}

// -t2 at 40 req/s puts a worker's first attempts 50 ms apart, and a request's retries (backoffs
// of at most 5, 10 and 20 ms) end before the next, so every worker's bucket can be replayed.
TEST(sim_retry, the_budget_allows_a_retry_exactly_when_its_bucket_holds_a_token) {
  const cli_result r =
      run_judged({"-t2", "-c8", "-R40", "-d5s", "--timeout", "3s", "--retries", "3",
                  "--retry-budget", "10%", "--retry-backoff", "exp:5ms..40ms", target},
                 server_failing(fate::status_503, 0.5));
  const simulation& sim = *r.sim;
  const auto asked = replay_budget(budget_events(sim, 3, outcome::http_error));
  const std::uint64_t allowed = allowed_of(asked);
  const std::uint64_t refused = asked.size() - allowed;
  const json& a = r.doc["attempts"];
  EXPECT_EQ(number(a["retries"]), allowed);
  EXPECT_EQ(number(a["refused_by_budget"]), refused);
  EXPECT_LE(10 * allowed, number(a["first"]));
  EXPECT_GT(refused, 0u);
  EXPECT_GT(10 * allowed, number(a["first"]) - 20) << "the budget was not used";
  EXPECT_EQ(r.doc["retry_policy"]["budget"].get<double>(), 0.1);
  // A request whose retry was refused ends with its 503.
  EXPECT_GE(number(r.doc["outcomes"]["http_error"]), refused);
  expect_retried_until_spent(sim, fate::status_503, 3, outcome::http_error, true);
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
}

// Three quiet seconds (300 first attempts) fill the bucket to its 10 tokens and no more; then a
// 1 s stall makes every attempt due in it pass its 55 ms --attempt-timeout (5 ms after a first
// attempt, never at one), and each asks for a retry: those saved are spent, then one in ten.
TEST(sim_retry, a_quiet_spell_saves_at_most_ten_retries) {
  surroundings around;
  around.server.stalls = {{seconds(3), seconds(4)}};
  const cli_result r =
      run_judged({"-t1", "-c32", "-R100", "-d5s", "--timeout", "3s", "--retries", "1", "--retry-on",
                  "timeout", "--attempt-timeout", "55ms", "--retry-budget", "10%",
                  "--retry-backoff", "exp:5ms..5ms", target},
                 around);
  const auto asked = replay_budget(budget_events(*r.sim, 1, outcome::timeout));
  ASSERT_GT(asked.size(), 50u);
  EXPECT_EQ(asked.front().tenths, 100) << "the bucket was not full when the stall came";
  EXPECT_GE(asked.front().at, r.sim->result().start.mono + seconds(3));
  // The 10 saved tokens and the deposits meanwhile went first; then the deposits alone.
  for (std::size_t k = 0; k < 10; ++k) {
    EXPECT_TRUE(asked[k].allowed) << "the saved retry " << k << " was refused";
  }
  const std::uint64_t allowed = allowed_of(asked);
  EXPECT_LT(allowed, asked.size() / 2);
  EXPECT_EQ(number(r.doc["attempts"]["retries"]), allowed);
  EXPECT_EQ(number(r.doc["attempts"]["refused_by_budget"]), asked.size() - allowed);
  expect_attempt_counts(r);
  expect_retries_by_cause(r);
}

// Users who send two steps 25 ms apart, half the answers 503: each step's first attempt deposits
// into the budget as an open-model request does, so the steps' retries are allowed exactly as
// the bucket replayed from the first attempts of steps says, and some are.
const char* const two_step_scenario = R"(target: http://127.0.0.1:8080
connection: pool
phases:
  - {duration: 5s, arrival_rate: 20}
on_error: continue
scenarios:
  - name: s
    steps:
      - {name: a, path: /, think: 25ms}
      - {name: b, path: /}
)";

TEST(sim_retry, the_steps_of_a_scenario_deposit_into_the_budget) {
  const scratch_dir dir("retry-hybrid");
  const cli_result r =
      run_judged({"--scenario", dir.write("s.yaml", two_step_scenario), "-c8", "--timeout", "3s",
                  "--retries", "3", "--retry-budget", "10%", "--retry-backoff", "exp:5ms..40ms"},
                 server_failing(fate::status_503, 0.5));
  const simulation& sim = *r.sim;
  const std::uint64_t steps = number(r.doc["schedule"]["planned"]);
  EXPECT_EQ(steps, 200u);  // 100 users, two steps each, every step sent (on_error: continue)
  const auto first_attempts = std::count_if(sim.sent().begin(), sim.sent().end(),
                                            [](const sent_attempt& a) { return a.t.attempt == 0; });
  EXPECT_EQ(static_cast<std::uint64_t>(first_attempts), steps);
  const json& a = r.doc["attempts"];
  EXPECT_EQ(number(a["first"]), steps);
  const auto asked = replay_budget(budget_events(sim, 3, outcome::http_error));
  const std::uint64_t allowed = allowed_of(asked);
  EXPECT_GT(allowed, 0u) << "no step was retried";
  EXPECT_EQ(number(a["retries"]), allowed);
  EXPECT_EQ(number(a["refused_by_budget"]), asked.size() - allowed);
  EXPECT_EQ(number(a["total"]), sim.sent().size());
  EXPECT_EQ(sim.sent().size(), steps + allowed);
  EXPECT_GT(10 * allowed, steps - 20) << "the budget was not used";
  expect_retries_by_cause(r);
}

// Ctrl-C 1.5 s into a run whose every answer is a 503 and whose backoffs are drawn from [0, 2 s]:
// a failure read before the interruption is retried, one read after it is final; a retry due
// within the 1 s drain still goes out (and its 503 is final), and one due after the drain is
// unfinished, recorded at the interruption.
cli_result interrupted_in_backoffs() {
  surroundings around = server_failing(fate::status_503, 1.0);
  around.interrupt_at = milliseconds(1500);
  return run_judged(
      {"-t2", "-c4", "-R200", "-d5s", "--retries", "3", "--retry-backoff", "exp:2s..2s", target},
      around);
}

TEST(sim_retry, an_interruption_leaves_the_retries_still_in_backoff_unfinished) {
  const cli_result r = interrupted_in_backoffs();
  const simulation& sim = *r.sim;
  const nanoseconds interrupted = sim.result().start.mono + milliseconds(1500);
  const nanoseconds drained = interrupted + seconds(1);
  std::uint64_t pending = 0;
  for (const auto& [index, c] : chains_of(sim)) {
    const final_outcome& f = *c.end;
    EXPECT_LT(f.t.intended, interrupted)
        << "request " << index << " was planned after the interruption";
    // Every attempt but the last was answered before the drain's end and retried.
    for (std::size_t k = 0; k + 1 < c.attempts.size(); ++k) {
      EXPECT_LT(answered_at(sim, *c.attempts[k]), interrupted)
          << "request " << index << " retried after the interruption";
    }
    const sent_attempt& last = *c.attempts.back();
    const nanoseconds failed = answered_at(sim, last);
    if (f.outcome == outcome::unfinished) {
      // Its last 503 came before the interruption; the retry it was due was not by the drain's end.
      ++pending;
      EXPECT_EQ(f.t.attempt, c.attempts.size()) << "request " << index;
      EXPECT_LT(failed, interrupted) << "request " << index;
      EXPECT_GE(f.t.due, drained) << "request " << index
                                  << ": its retry was due in the drain but never sent";
      continue;
    }
    EXPECT_EQ(f.outcome, outcome::http_error) << "request " << index;
    EXPECT_EQ(f.at, failed) << "request " << index;
    EXPECT_TRUE(c.attempts.size() == 4 || failed > interrupted)
        << "request " << index << "'s 503 " << (failed - interrupted).count()
        << " ns after the interruption was not retried, with retries left";
    EXPECT_LT(last.t.sent, drained) << "request " << index << " sent after the drain";
  }
  const json& o = r.doc["outcomes"];
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_TRUE(r.doc["interrupted"].get<bool>());
  EXPECT_EQ(number(o["unfinished"]), pending);
  EXPECT_GT(pending, 0u);
  EXPECT_EQ(number(o["ok"]), 0u);
  EXPECT_EQ(number(r.doc["attempts"]["first"]), number(r.doc["schedule"]["planned"]));
  EXPECT_EQ(number(r.doc["schedule"]["planned"]), 300u) << "200 req/s for 1.5 s";
  expect_attempt_counts(r);
  // Some retries were due in the drain, went out and failed finally after the interruption.
  EXPECT_GT(std::count_if(
                sim.sent().begin(), sim.sent().end(),
                [&](const sent_attempt& a) { return a.t.attempt > 0 && a.t.sent > interrupted; }),
            0);
}

// A retry the interruption left in its backoff was never sent: it is no retry of the report's
// (an attempt after the first), and retries_by_cause must not count it either.
TEST(sim_retry, retries_by_cause_count_only_the_retries_sent_after_an_interruption) {
  const cli_result r = interrupted_in_backoffs();
  expect_retries_by_cause(r);
  std::uint64_t by_cause = 0;
  for (const auto& [cause, n] : r.doc["attempts"]["retries_by_cause"].items()) {
    by_cause += number(n);
  }
  EXPECT_EQ(by_cause, number(r.doc["attempts"]["retries"]));
}

}  // namespace
}  // namespace punctual::sim::retry_cases
