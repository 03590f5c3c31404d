// Never more connections than the schedule calls for: servers that break every connection before
// answering (a banner on connect, an h2c server that speaks first to an HTTP/1.1 client, a reset
// at accept) get at most one connection per due request beyond the -c kept open, and every
// planned request still ends once. Before the bound, each of them turned a worker into a connect
// loop (tens of thousands of connections for a hundred requests).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::reconnect_cases {
namespace {

std::uint64_t number(const nlohmann::ordered_json& j) {
  return j.get<std::uint64_t>();
}

std::uint64_t sum_of(const nlohmann::ordered_json& counts) {
  std::uint64_t n = 0;
  for (const auto& [name, value] : counts.items()) n += value.get<std::uint64_t>();
  return n;
}

struct bounded_run {
  cli_result r;
  std::uint64_t opened = 0;   // connections the network saw the client open
  std::uint64_t planned = 0;  // warm-up and window
};

// -t1 -c2 -R50 -d2s against `around`, every rule held, and the bound: connections opened (as the
// network counts them) <= planned + -c.
bounded_run run_bounded(std::vector<std::string> args, const surroundings& around) {
  args.emplace_back(target);
  bounded_run b{run_judged(args, around)};
  const auto& doc = b.r.doc;
  b.opened = b.r.sim->net().connections().size();
  b.planned = number(doc["schedule"]["planned"]);
  const std::uint64_t connections = number(doc["model"]["connections"]);
  EXPECT_EQ(b.planned, sum_of(doc["outcomes"]));
  EXPECT_LE(b.opened, b.planned + connections) << "a connect loop";
  EXPECT_EQ(number(doc["protocol"]["connections"]["opened"]), b.opened);
  return b;
}

const std::vector<std::string> low_rate{"-t1", "-c2", "-R50", "-d2s", "--timeout", "1s"};

TEST(sim_reconnect, a_banner_on_connect_opens_no_more_than_the_requests_need) {
  surroundings around;
  around.server.banner = true;
  const bounded_run b = run_bounded(low_rate, around);
  // The banner is read as the answer to the request sent there, or closes an idle connection:
  // each request fails as a parse error, sent or, while every connection waits out its backoff,
  // at once without a connection of its own. None waits for its deadline.
  EXPECT_EQ(number(b.r.doc["socket_errors"]["parse"]), b.planned);
  EXPECT_EQ(number(b.r.doc["outcomes"]["socket_error"]), b.planned);
  EXPECT_GT(number(b.r.doc["protocol"]["connections"]["unsolicited_closes"]), 0u);
}

TEST(sim_reconnect, an_h2c_server_that_speaks_first_meets_an_http1_client_without_a_loop) {
  surroundings around;
  around.server.http2 = true;
  const bounded_run b = run_bounded(low_rate, around);
  EXPECT_EQ(number(b.r.doc["outcomes"]["socket_error"]), b.planned);
}

TEST(sim_reconnect, a_reset_at_every_accept_opens_no_more_than_the_requests_need) {
  surroundings around;
  around.server.reset_share = 1;
  const bounded_run b = run_bounded(low_rate, around);
  EXPECT_EQ(number(b.r.doc["outcomes"]["socket_error"]), b.planned);
}

// A healthy server: the -c connections are opened once and kept.
TEST(sim_reconnect, a_healthy_server_keeps_the_connections_it_was_given) {
  const bounded_run b = run_bounded(low_rate, {});
  EXPECT_EQ(b.opened, 2u);
  EXPECT_EQ(number(b.r.doc["outcomes"]["ok"]), b.planned);
}

// A server that closes after every answer (HTTP/1.0): a connection per request is what it asks
// for, and the kept -c are reopened at once after each answer, within the bound.
TEST(sim_reconnect, a_close_after_each_answer_reopens_once_per_request) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(fate::http10)] = 1;
  const bounded_run b = run_bounded(low_rate, around);
  EXPECT_EQ(number(b.r.doc["outcomes"]["ok"]), b.planned);
  EXPECT_GE(b.opened, b.planned);
}

}  // namespace
}  // namespace punctual::sim::reconnect_cases
