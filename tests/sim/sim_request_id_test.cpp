// `punctual run --request-id-header NAME` in the simulation: every attempt that reaches the
// server names its planned request, the schedule index a server log can be joined on (a step of
// a session adds its step), over HTTP/1.1 and HTTP/2; retries and HTTP/2's resends carry the
// same id; the bytes sent count the header; and the names and models it cannot serve are
// refused with one line.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli/command.hpp"
#include "cli_run.hpp"
#include "http/request_id_codec.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::request_id_cases {
namespace {

constexpr const char* target = "http://127.0.0.1:8080/";

// The value of header `name` in a head as the scripted server logs it (either protocol).
std::string header_in(std::string_view head, std::string_view name) {
  const std::string text = "\r\n" + std::string(head);
  const std::string key = "\r\n" + std::string(name) + ": ";
  const std::size_t at = text.find(key);
  if (at == std::string::npos) return "<none>";
  const std::size_t from = at + key.size();
  return text.substr(from, text.find("\r\n", from) - from);
}

// The id the engine must send for an attempt: its request's index and, in a session, its step.
std::string id_of(const record::request_times& t) {
  std::array<char, http::max_request_id_text> text;
  const http::request_id id{t.index, t.arrival.count() != 0 ? t.step : -1};
  return std::string(http::request_id_text(id, text));
}

struct wire_ids {
  std::map<std::string, std::uint64_t> served;  // by id: the attempts the server read
  std::uint64_t later_attempts = 0;             // retries and resends among them
};

// Every request the server read carries the id of the attempt the tap saw go out with it.
wire_ids expect_ids_on_the_wire(const simulation& sim, std::string_view header) {
  wire_ids out;
  for (const served_request& s : sim.server().log()) {
    const sent_attempt* a = sim.attempt(s.sim_id);
    EXPECT_NE(a, nullptr) << "the server read a request the engine never sent";
    if (!a) continue;
    EXPECT_EQ(header_in(s.head, header), id_of(a->t)) << s.head;
    ++out.served[header_in(s.head, header)];
    if (a->t.attempt > 0 || a->t.resent) ++out.later_attempts;
  }
  return out;
}

// Each planned request reached the server under its own id as often as the engine sent it: a
// retry or a resend under its first attempt's id, never another's.
void expect_each_request_once_per_attempt(const simulation& sim, const wire_ids& ids,
                                          std::uint64_t planned) {
  std::map<std::string, std::uint64_t> sent;
  for (const sent_attempt& a : sim.sent()) ++sent[id_of(a.t)];
  EXPECT_EQ(ids.served, sent);
  std::set<std::uint64_t> indices;
  for (const final_outcome& f : sim.finals()) indices.insert(f.t.index);
  EXPECT_EQ(indices.size(), planned);
  EXPECT_EQ(*indices.rbegin(), planned - 1) << "the ids are the schedule's indices 0 .. N-1";
}

TEST(sim_request_id, every_attempt_names_its_planned_request_over_http1) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(fate::status_503)] = 0.2;
  const cli_result r = run_judged(
      {"-R", "400", "-d", "1s", "-t", "2", "-c", "4", "--retries", "2", "--retry-on", "5xx",
       "--retry-backoff", "exp:1ms..4ms", "--request-id-header", "x-request-id", target},
      around);
  const simulation& sim = *r.sim;
  const wire_ids ids = expect_ids_on_the_wire(sim, "x-request-id");
  expect_each_request_once_per_attempt(sim, ids, 400);
  EXPECT_GT(ids.later_attempts, 20u) << "the retries were sent";
  // The bytes sent are the bytes the connections carried, the id headers among them.
  std::uint64_t wire = 0;
  for (const auto& c : sim.net().connections()) wire += c->client_sent;
  EXPECT_EQ(r.doc["bytes"]["sent"].get<std::uint64_t>(), wire);
}

TEST(sim_request_id, every_attempt_names_its_planned_request_over_http2) {
  surroundings around;
  around.server.http2 = true;
  around.server.shares[static_cast<std::size_t>(fate::status_503)] = 0.2;
  around.server.shares[static_cast<std::size_t>(fate::refused)] = 0.1;
  const cli_result r = run_judged(
      {"--http", "2", "-R", "400", "-d", "1s", "-t", "1", "-c", "2", "--retries", "2", "--retry-on",
       "5xx", "--retry-backoff", "exp:1ms..4ms", "--request-id-header", "X-Request-Id", target},
      around);
  const simulation& sim = *r.sim;
  const wire_ids ids = expect_ids_on_the_wire(sim, "x-request-id");  // HTTP/2 lowercases it
  expect_each_request_once_per_attempt(sim, ids, 400);
  EXPECT_GT(r.doc["attempts"]["resent"].get<std::uint64_t>(), 10u) << "REFUSED_STREAM resent";
  EXPECT_GT(ids.later_attempts, 40u);
}

const char* const two_steps = R"(target: http://127.0.0.1:8080
phases:
  - {duration: 1s, arrival_rate: 50}
scenarios:
  - name: s
    steps:
      - {name: one, path: /one}
      - {name: two, path: /two}
)";

// A session's steps share their user's index (the schedule's, of arrivals) and add their step.
TEST(sim_request_id, a_session_step_is_named_by_its_user_and_step) {
  const scratch_dir dir("request-id");
  const cli_result r = run_judged(
      {"--scenario", dir.write("two.yaml", two_steps), "--request-id-header", "x-request-id"});
  const simulation& sim = *r.sim;
  const wire_ids ids = expect_ids_on_the_wire(sim, "x-request-id");
  ASSERT_EQ(ids.served.size(), 100u);
  EXPECT_EQ(ids.served.begin()->first, "000000000000.0");
  EXPECT_EQ(ids.served.rbegin()->first, "000000000049.1");
}

TEST(sim_request_id, names_and_models_it_cannot_serve_are_refused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--request-id-header", ""}, "expected a header name"},
      {{"--request-id-header", "x id"}, "expected a header name"},
      {{"--request-id-header", "Host"}, "a meaning of its own"},
      {{"--request-id-header", "connection"}, "a meaning of its own"},
      {{"--request-id-header", "x-id", "--model", "closed"}, "closed model"},
      {{"--request-id-header", "x-id", "-H", "X-Id: 7"}, "-H already sets this header"},
  };
  for (const auto& [options, named] : cases) {
    std::vector<std::string> args = options;
    if (options.back() != "closed") args.insert(args.end(), {"-R", "100"});
    args.insert(args.end(), {"-d", "1s", target});
    std::string line;
    try {
      run_cli(args);
    } catch (const cli::usage_error& e) {
      line = e.what();
    }
    EXPECT_NE(line.find(named), std::string::npos) << options[1] << ": '" << line << "'";
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace punctual::sim::request_id_cases
