// `punctual run --http 2` in the simulation: the truth over h2c through a stall (many streams,
// few streams with the rest waiting in the generator's queue, a high rate), the closed model
// over h2 with one user per connection or --max-streams users on each, and the options HTTP/2
// refuses. Interoperation with nginx and ALPN over real TLS stay in test_http2.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "cli/command.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "sim_seeds.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::h2_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

// Every percentile of view `view` in the JSON is the one of `values`, exactly.
void expect_view(const json& doc, const char* view, const std::vector<std::int64_t>& values) {
  for (const auto& [key, p] : percentiles) {
    EXPECT_EQ(doc["latency"][view]["percentiles_ns"][key].get<std::int64_t>(),
              percentile_of(values, p))
        << view << " p" << key;
  }
}

bool measured(const simulation& sim, const final_outcome& f) {
  return f.t.accounted_at() >= sim.result().measure_start;
}

// A stall window of the scripted server, from the schedule's start.
struct window {
  milliseconds from;
  milliseconds until;
};

// An open-model run over h2c against a server that stalls once.
cli_result h2_stall_run(int rate, int connections, int streams, window stall) {
  surroundings around;
  around.server.http2 = true;
  around.server.max_streams = 1000;  // the client's --max-streams is what limits the streams
  around.server.stalls = {{stall.from, stall.until}};
  return run_cli(
      {"--http", "2", "-R", std::to_string(rate), "-d", "2s", "--warmup", "250ms", "-c",
       std::to_string(connections), "--max-streams", std::to_string(streams), "-t", "1", target},
      around);
}

// The truth test over h2: every request was sent on its constant-rate schedule, reached the
// server once and was answered; the response time the report gives at every percentile is the
// one of the true response times, each from the request's intended time to the stamp of the
// read that took its answer's last byte (the network's log, the server's answer offsets); and
// the stall shows in full in every request due inside it.
void expect_truth(const cli_result& r, int rate, int connections, window stall) {
  const simulation& sim = *r.sim;
  const auto problems = check_run(sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  const json& doc = r.doc;
  const auto planned = doc["schedule"]["planned"].get<std::uint64_t>();
  EXPECT_EQ(doc["outcomes"]["ok"].get<std::uint64_t>(), planned);
  EXPECT_EQ(doc["protocol"]["name"], "h2");
  EXPECT_EQ(doc["protocol"]["connections"]["h2"].get<int>(), connections);
  // 2.25 s (warm-up included) at `rate`: each request reached the server once.
  const auto scheduled = static_cast<std::size_t>(rate) * 9 / 4;
  EXPECT_EQ(sim.finals().size(), scheduled);
  EXPECT_EQ(sim.sent().size(), scheduled);
  EXPECT_EQ(sim.server().log().size(), scheduled);
  const nanoseconds start = sim.result().start.mono;
  const nanoseconds period{1'000'000'000 / rate};
  const auto& conns = sim.net().connections();
  std::vector<std::int64_t> truth;
  std::uint64_t in_stall = 0;
  for (const auto& f : sim.finals()) {
    EXPECT_EQ(f.t.intended, start + static_cast<std::int64_t>(f.t.index) * period) << f.t.index;
    const served_request* s = sim.server().find(f.sim_id);
    ASSERT_TRUE(s && s->answered) << "request " << f.t.index << " was not answered";
    const connection& c = *conns[s->connection - 1];
    const nanoseconds rt = c.read_stamp_of(s->end_offset - 1) - f.t.intended;
    const nanoseconds due = f.t.intended - start;
    if (due >= stall.from && due < stall.until) {
      ++in_stall;
      EXPECT_GE(rt, stall.until - due) << "request " << f.t.index << " due in the stall";
    }
    if (measured(sim, f)) truth.push_back(rt.count());
  }
  EXPECT_EQ(in_stall, static_cast<std::uint64_t>(rate) * (stall.until - stall.from).count() / 1000);
  EXPECT_EQ(truth.size(), planned);
  expect_view(doc, "response_time", truth);
}

const window stall{milliseconds(1000), milliseconds(1800)};

TEST(sim_h2, truth_over_two_connections_of_100_streams) {
  expect_truth(h2_stall_run(1000, 2, 100, stall), 1000, 2, stall);
}

TEST(sim_h2, truth_at_5000_per_second) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("the 1000 req/s cases take the same paths");
  expect_truth(h2_stall_run(5000, 2, 100, stall), 5000, 2, stall);
}

// One connection of 10 streams: the stall fills them at its start and the requests due after
// wait in the generator's queue for a stream. The truth holds all the same, and the waiting is
// queue wait: those requests' service time, from their send after the stall, holds none of it.
TEST(sim_h2, ten_streams_fill_in_a_stall_and_the_rest_wait_in_the_queue) {
  const cli_result r = h2_stall_run(1000, 1, 10, stall);
  expect_truth(r, 1000, 1, stall);
  const simulation& sim = *r.sim;
  const nanoseconds start = sim.result().start.mono;
  std::vector<std::pair<nanoseconds, nanoseconds>> streams;
  std::vector<std::int64_t> queue_wait;
  std::vector<std::int64_t> service;
  std::uint64_t queued = 0;
  for (const auto& f : sim.finals()) {
    streams.emplace_back(f.t.sent, f.at);
    const nanoseconds due = f.t.intended - start;
    if (due >= stall.from && due < stall.until && f.t.sent >= start + stall.until) {
      ++queued;  // it got its stream only as the stall ended
      EXPECT_GE(f.t.assigned, start + stall.until) << "request " << f.t.index;
      EXPECT_LT(f.at - f.t.sent, milliseconds(1))
          << "request " << f.t.index << ": the stall in its service time";
    }
    if (!measured(sim, f)) continue;
    queue_wait.push_back((f.t.assigned - f.t.dispatched).count());
    service.push_back((f.at - f.t.sent).count());
  }
  // Never more than 10 streams open, and all 10 held in the stall: the other 790 requests due
  // in it went out after it.
  EXPECT_EQ(most_at_once(streams), 10u);
  EXPECT_GE(queued, 790u);
  expect_view(r.doc, "queue_wait", queue_wait);
  expect_view(r.doc, "service_time", service);
  EXPECT_GT(r.doc["latency"]["queue_wait"]["percentiles_ns"]["99"].get<std::int64_t>(),
            nanoseconds(milliseconds(500)).count());
  EXPECT_LT(r.doc["latency"]["service_time"]["percentiles_ns"]["99"].get<std::int64_t>(),
            nanoseconds(milliseconds(100)).count());
}

// A closed-model run over h2 against a server that answers in 20 ms; `extra`: more options.
cli_result closed_run(std::vector<std::string> extra) {
  surroundings around;
  around.server.http2 = true;
  around.server.service.a = milliseconds(20);
  std::vector<std::string> args{"--http", "2",  "--model", "closed", "-c",
                                "2",      "-d", "1s",      "-t",     "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(target);
  return run_cli(args, around);
}

// Closed-model users over h2: `per_connection` users on each of the 2 connections, each with
// one request at a time, the next intended at the instant the last completed (no think time),
// as many as the second held; every request answered, and the server had exactly all the users'
// requests at once.
void expect_closed_users(const cli_result& r, std::uint32_t per_connection) {
  const simulation& sim = *r.sim;
  const auto problems = check_run(sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  const std::uint32_t users = 2 * per_connection;
  const auto planned = r.doc["schedule"]["planned"].get<std::uint64_t>();
  EXPECT_EQ(r.doc["model"]["users"].get<std::uint32_t>(), users);
  EXPECT_EQ(r.doc["outcomes"]["ok"].get<std::uint64_t>(), planned);
  EXPECT_EQ(r.doc["protocol"]["name"], "h2");
  EXPECT_EQ(r.doc["protocol"]["connections"]["h2"].get<int>(), 2);
  EXPECT_EQ(sim.server().log().size(), planned);
  const nanoseconds start = sim.result().start.mono;
  const nanoseconds end = start + std::chrono::seconds(1);
  std::map<std::uint32_t, std::vector<const final_outcome*>> by_user;
  std::map<std::uint64_t, std::vector<std::uint32_t>> users_of;  // by connection
  std::vector<std::pair<nanoseconds, nanoseconds>> at_server;
  for (const auto& f : sim.finals()) by_user[f.t.user].push_back(&f);
  ASSERT_EQ(by_user.size(), users);
  for (auto& [user, requests] : by_user) {
    std::sort(requests.begin(), requests.end(),
              [](auto* a, auto* b) { return a->t.intended < b->t.intended; });
    EXPECT_EQ(requests.front()->t.intended, start) << "user " << user;
    EXPECT_GE(requests.back()->at, end) << "user " << user << " stopped before the second ended";
    const std::uint64_t connection = sim.attempt(requests.front()->sim_id)->connection;
    users_of[connection].push_back(user);
    for (std::size_t k = 0; k < requests.size(); ++k) {
      const final_outcome& f = *requests[k];
      EXPECT_LT(f.t.intended, end);
      EXPECT_EQ(sim.attempt(f.sim_id)->connection, connection) << "user " << user << " moved";
      if (k > 0) {
        EXPECT_EQ(f.t.intended, requests[k - 1]->at) << "user " << user << " request " << k;
      }
      const served_request* s = sim.server().find(f.sim_id);
      ASSERT_TRUE(s && s->answered);
      at_server.emplace_back(s->read_at, s->answer_at);
    }
  }
  for (const auto& [connection, on_it] : users_of) {
    EXPECT_EQ(on_it.size(), per_connection) << "connection " << connection;
  }
  EXPECT_EQ(most_at_once(at_server), users);
}

TEST(sim_h2, the_closed_model_keeps_one_request_in_flight_per_connection) {
  const cli_result r = closed_run({});
  expect_closed_users(r, 1);
  EXPECT_NE(r.text.find("model: closed, 2 connections on 1 threads"), std::string::npos)
      << r.text.substr(0, 400);
}

// --max-streams 4 over 2 connections: 8 users (h2load's -m), four times the requests of 2.
TEST(sim_h2, max_streams_puts_that_many_closed_users_on_each_connection) {
  const cli_result r = closed_run({"--max-streams", "4"});
  expect_closed_users(r, 4);
  const auto planned = [](const cli_result& x) {
    return x.doc["schedule"]["planned"].get<std::uint64_t>();
  };
  EXPECT_EQ(planned(r), 4 * planned(closed_run({})));
  EXPECT_NE(r.text.find("model: closed, 8 users (4 on each of 2 connections)"), std::string::npos)
      << r.text.substr(0, 400);
}

// What HTTP/2 cannot honour is refused as the binary refuses it (exit 2), in one line naming it.
TEST(sim_h2, options_http2_cannot_honour_are_refused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--http", "3"}, "--http"},
      {{"--http", "2", "--no-keepalive"}, "--no-keepalive"},
      {{"--http", "2", "-H", "Connection: close"}, "Connection"},
      {{"--http", "2", "-H", "Transfer-Encoding: chunked"}, "Transfer-Encoding"},
      {{"--http", "2", "-H", "Upgrade: h2c"}, "Upgrade"},
      {{"--max-streams", "10"}, "--max-streams"},
      {{"--http", "2", "--max-streams", "0"}, "--max-streams"},
  };
  for (const auto& [options, named] : cases) {
    std::vector<std::string> args{"-R", "10", "-d", "1s"};
    args.insert(args.end(), options.begin(), options.end());
    args.push_back(target);
    std::string line;
    try {
      run_cli(args);
    } catch (const cli::usage_error& e) {
      line = e.what();
    }
    EXPECT_NE(line.find(named), std::string::npos) << options.back() << ": '" << line << "'";
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace punctual::sim::h2_cases
