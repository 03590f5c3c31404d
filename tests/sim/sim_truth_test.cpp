// The truth of a stalling server, exactly. For each workload of a matrix (1000 and 5000 req/s,
// constant and Poisson arrivals, -c4 and -c64, -t1 and -t2) the server stalls 800 ms inside the
// measured window. Every request's true response time is rebuilt from the plan (when it was
// intended) and from what the network logged (when its answer's last byte arrived), not from
// what the engine measured; the report's histogram and percentiles must be exactly those
// truths'. No request intended in the stall may come out faster than the stall allows, requests
// reach the server when the plan says, and -t1 and -t2 measure each request alike wherever
// nothing set them apart. The truth over real sockets, at two rates and over TLS, stays in
// tests/integration/test_truth.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "platform/sanitizers.hpp"
#include "punctual/histogram/codec.hpp"
#include "record/view_set.hpp"
#include "schedule/schedule.hpp"

namespace punctual::sim::truth_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

constexpr nanoseconds warmup = milliseconds(250);
// From the schedule's start: 750 ms into the 2 s measured window, well inside it.
constexpr nanoseconds stall_from = milliseconds(1000);
constexpr nanoseconds stall_until = milliseconds(1800);
constexpr const char* percentiles[] = {"50", "90", "99", "99.9"};

struct workload {
  int rate;
  const char* arrival;
  std::uint32_t connections;
  std::uint32_t threads;
};

std::string name_of(const workload& w) {
  return fmt::format("R{}-{}-t{}-c{}", w.rate, w.arrival, w.threads, w.connections);
}

// Under a sanitizer (~30 times slower) the 1000 req/s half of it.
std::vector<workload> matrix() {
#ifdef PUNCTUAL_SANITIZED
  const std::vector<int> rates{1000};
#else
  const std::vector<int> rates{1000, 5000};
#endif
  std::vector<workload> out;
  for (const int rate : rates) {
    for (const char* arrival : {"constant", "poisson"}) {
      for (const std::uint32_t c : {4u, 64u}) {
        for (const std::uint32_t t : {1u, 2u}) out.push_back({rate, arrival, c, t});
      }
    }
  }
  return out;
}

// One request as it really went: its place in the plan, what it waited for, and its truth.
struct request_truth {
  nanoseconds intended;           // from the schedule's start, as the plan has it
  nanoseconds measured_intended;  // likewise, as the engine recorded it
  nanoseconds response;           // its answer's last byte's arrival, less its intended instant
  nanoseconds read_at;            // when the server had read it, from the schedule's start
  nanoseconds answer_at;          // when the server began its answer, likewise
  bool waited = false;            // it waited for a connection (the engine's queue or a connect)
  bool measured = false;
};

struct matrix_run {
  workload w;
  cli_result r;
  std::map<std::uint64_t, request_truth> truth;  // by global index
};

// The plan as an offline schedule gives it: the offset from the schedule's start of every
// request, warm-up included, by global index.
std::map<std::uint64_t, nanoseconds> plan_of(const cli_result& r) {
  schedule::plan p = *r.setup.config.plan();
  std::map<std::uint64_t, nanoseconds> out;
  auto stream = schedule::worker_stream::whole_shard(p);
  for (schedule::entry e; stream.next(e);) out[e.index] = e.offset;
  return out;
}

// The truth of each request from the plan, the server's log and the network's byte logs. A
// request the server never answered has no truth: the run's checks then fail on it.
std::map<std::uint64_t, request_truth> truth_of(const cli_result& r) {
  const simulation& sim = *r.sim;
  const auto plan = plan_of(r);
  std::map<std::uint64_t, request_truth> out;
  const nanoseconds start = sim.result().start.mono;
  for (const auto& f : sim.finals()) {
    const served_request* s = sim.server().find(f.sim_id);
    const sent_attempt* a = sim.attempt(f.sim_id);
    const auto planned = plan.find(f.t.index);
    if (!s || !a || !s->answered || a->connection == 0 || planned == plan.end()) continue;
    const connection& c = *sim.net().connections()[a->connection - 1];
    request_truth t;
    t.intended = planned->second;
    t.measured_intended = f.t.intended - start;
    t.response = c.arrival_of(s->end_offset - 1) - (start + t.intended);
    t.read_at = s->read_at - start;
    t.answer_at = s->answer_at - start;
    t.waited = f.t.assigned != f.t.dispatched || f.t.had_to_connect;
    t.measured = t.intended >= warmup;
    out[f.t.index] = t;
  }
  return out;
}

// The runs of the whole matrix, made once for the cases below.
const std::vector<matrix_run>& matrix_runs() {
  static const std::vector<matrix_run> runs = [] {
    std::vector<matrix_run> out;
    surroundings around;
    around.server.stalls = {{stall_from, stall_until}};
    for (const workload& w : matrix()) {
      cli_result r = run_cli({"-R", std::to_string(w.rate), "--arrival", w.arrival, "-t",
                              std::to_string(w.threads), "-c", std::to_string(w.connections), "-d",
                              "2s", "--warmup", "250ms", "--seed", "7", "http://127.0.0.1:8080/"},
                             around);
      auto truth = truth_of(r);
      out.push_back({w, std::move(r), std::move(truth)});
    }
    return out;
  }();
  return runs;
}

hdr::histogram decoded(const json& doc) {
  return *hdr::decode_compressed_base64(
              doc["histograms"]["views"]["response_time"].get<std::string>())
              .value;
}

// Every request was planned, sent once, read once by the server and answered 200, and the plan
// is the offline schedule's (for constant arrivals, t_i = floor(i * 1e9 / rate) as well).
void check_plan(const matrix_run& m, std::vector<std::string>& out) {
  const simulation& sim = *m.r.sim;
  const auto plan = plan_of(m.r);
  std::uint64_t measured = 0;
  for (const auto& [index, offset] : plan) {
    measured += offset >= warmup ? 1 : 0;
    const auto it = m.truth.find(index);
    if (it == m.truth.end()) {
      out.push_back(fmt::format("request {} of the plan has no answered attempt", index));
    } else if (it->second.measured_intended != offset) {
      out.push_back(fmt::format("request {} intended at {} ns, the plan says {} ns", index,
                                it->second.measured_intended.count(), offset.count()));
    }
    if (std::string(m.w.arrival) == "constant" &&
        offset.count() != static_cast<std::int64_t>(index * 1'000'000'000 / m.w.rate)) {
      out.push_back(fmt::format("constant request {} at {} ns in the plan", index, offset.count()));
    }
  }
  if (m.truth.size() != plan.size() || sim.finals().size() != plan.size() ||
      sim.sent().size() != plan.size() || sim.server().log().size() != plan.size()) {
    out.push_back(fmt::format("{} planned, {} ended, {} sent, {} read by the server", plan.size(),
                              sim.finals().size(), sim.sent().size(), sim.server().log().size()));
  }
  const json& doc = m.r.doc;
  if (doc["schedule"]["planned"] != measured || doc["outcomes"]["ok"] != measured) {
    out.push_back(fmt::format("the plan measures {}; the report: planned {}, ok {}", measured,
                              doc["schedule"]["planned"].dump(), doc["outcomes"]["ok"].dump()));
  }
}

// The report's response times are exactly the truths of the measured requests.
void check_against_truth(const matrix_run& m, std::vector<std::string>& out) {
  hdr::histogram truth(record::latency_params());
  for (const auto& [index, t] : m.truth) {
    if (t.measured) truth.record(t.response.count());
  }
  const hdr::histogram got = decoded(m.r.doc);
  bool same = got.total_count() == truth.total_count();
  for (std::int32_t i = 0; same && i < got.counts_length(); ++i) {
    same = got.count_at_index(i) == truth.count_at_index(i);
  }
  if (!same) out.push_back("the report's response-time histogram is not the truths'");
  const json& p = m.r.doc["latency"]["response_time"]["percentiles_ns"];
  for (const char* key : percentiles) {
    const std::int64_t want = truth.value_at_percentile(std::stod(key));
    if (p[key].get<std::int64_t>() != want) {
      out.push_back(fmt::format("p{}: truth {} ns, reported {}", key, want, p[key].dump()));
    }
  }
  // The stall moved the tail: what the truth says, not what an empty run would.
  if (truth.value_at_percentile(99) < ((stall_until - stall_from) / 2).count()) {
    out.push_back(
        fmt::format("truth p99 {} ns: the stall did not show", truth.value_at_percentile(99)));
  }
}

// No answer is written inside the stall, and no request intended in it comes out before the
// stall's end: its response time is at least what the stall alone makes it (the truth model
// of the real-socket test, here a bound that holds to the nanosecond).
void check_stall(const matrix_run& m, std::vector<std::string>& out) {
  std::uint64_t in_stall = 0;
  for (const auto& [index, t] : m.truth) {
    if (t.answer_at >= stall_from && t.answer_at < stall_until) {
      out.push_back(fmt::format("request {}: answered at {} ns, inside the stall", index,
                                t.answer_at.count()));
    }
    if (t.intended < stall_from || t.intended >= stall_until) continue;
    ++in_stall;
    if (t.response < stall_until - t.intended) {
      out.push_back(fmt::format("request {} intended at {} ns: {} ns, less than the stall left",
                                index, t.intended.count(), t.response.count()));
    }
  }
  if (in_stall < static_cast<std::uint64_t>(m.w.rate) * 7 / 10) {
    out.push_back(fmt::format("only {} requests intended in the stall", in_stall));
  }
}

// The generator kept the plan: every request was dispatched at its intended instant, and each
// one that waited for no connection reached the server exactly one trip up the link later.
void check_on_schedule(const matrix_run& m, std::vector<std::string>& out) {
  const simulation& sim = *m.r.sim;
  const link& up = sim.settings().up;
  std::uint64_t free = 0;
  for (const auto& f : sim.finals()) {
    if (f.t.dispatched != f.t.intended) {
      out.push_back(fmt::format("request {}: dispatched {} ns after its intended instant",
                                f.t.index, (f.t.dispatched - f.t.intended).count()));
    }
    const auto it = m.truth.find(f.t.index);
    if (it == m.truth.end() || it->second.waited) continue;
    ++free;
    const served_request& s = *sim.server().find(f.sim_id);
    const auto bytes = static_cast<double>(s.head.size() + 2);  // the head and its blank line
    const nanoseconds trip =
        up.delay + nanoseconds{static_cast<std::int64_t>(bytes / up.bytes_per_ns)};
    if (it->second.read_at != it->second.intended + trip) {
      out.push_back(
          fmt::format("request {}: reached the server {} ns after its intended instant, "
                      "not one trip ({} ns)",
                      f.t.index, (it->second.read_at - it->second.intended).count(), trip.count()));
    }
  }
  if (free < sim.finals().size() / 2) {
    out.push_back(
        fmt::format("only {} of {} requests found a free connection", free, sim.finals().size()));
  }
}

TEST(sim_truth, each_response_time_is_the_stalling_servers_truth) {
  for (const matrix_run& m : matrix_runs()) {
    std::vector<std::string> problems = check_run(*m.r.sim);
    if (m.r.exit_code != 0) problems.push_back(fmt::format("exit {}, expected 0", m.r.exit_code));
    check_plan(m, problems);
    check_against_truth(m, problems);
    check_stall(m, problems);
    check_on_schedule(m, problems);
    EXPECT_TRUE(problems.empty()) << name_of(m.w) << describe(problems);
  }
}

// -t1 and -t2 split the same plan (each worker takes every other request) and the same
// connections (half each), and the server takes the same time over every answer: each request
// meets the same free or busy connections under both, so each is measured the same, to the
// nanosecond, stall and backlog included. A thread that sent late, dated an answer by another
// thread's clock, or drained its queue differently would show here.
TEST(sim_truth, one_and_two_threads_measure_each_request_alike) {
  const auto& runs = matrix_runs();
  for (std::size_t i = 0; i + 1 < runs.size(); i += 2) {
    const matrix_run& one = runs[i];
    const matrix_run& two = runs[i + 1];
    ASSERT_EQ(one.w.threads, 1u);
    ASSERT_EQ(two.w.threads, 2u);
    std::vector<std::string> problems;
    if (one.truth.size() != two.truth.size()) {
      problems.push_back(
          fmt::format("{} requests with -t1, {} with -t2", one.truth.size(), two.truth.size()));
    }
    for (const auto& [index, a] : one.truth) {
      const auto it = two.truth.find(index);
      if (it == two.truth.end()) {
        problems.push_back(fmt::format("request {}: not in the -t2 run", index));
      } else if (it->second.intended != a.intended || it->second.response != a.response) {
        problems.push_back(
            fmt::format("request {} intended at {} ns: {} ns with -t1; intended at "
                        "{} ns, {} ns with -t2",
                        index, a.intended.count(), a.response.count(), it->second.intended.count(),
                        it->second.response.count()));
      }
    }
    const json& p1 = one.r.doc["latency"]["response_time"];
    const json& p2 = two.r.doc["latency"]["response_time"];
    if (p1 != p2)
      problems.push_back("latency.response_time: " + p1.dump() + " with -t1, " + p2.dump() +
                         " with -t2");
    EXPECT_TRUE(problems.empty()) << name_of(one.w) << " against -t2" << describe(problems, 6);
  }
}

}  // namespace
}  // namespace punctual::sim::truth_cases
