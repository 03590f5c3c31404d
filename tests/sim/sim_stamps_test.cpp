// When the engine stamps a request's instants, with writes that cost time: each client write
// takes 10 us of the worker's virtual clock (link::write_cost), so a turn that sends several
// requests takes time, as a real one does. The coarse ticks put four requests in each turn. A
// request's response time is its send lag, queue wait, connect time and service time exactly
// (checks.cpp), however long the turn; its `sent` is the instant its bytes were written, which
// the server's read shows (the links carry bytes in no time, so a request reaches the server
// exactly one delay after its write); over HTTP/1.1 a request got to after another's write
// carries that write in its send lag; over HTTP/2, whose turn frames its requests first and
// writes each connection's frames once, a request's wait for its connection's write is queue
// wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim_setups.hpp"

namespace punctual::sim::stamps_cases {
namespace {

using record::outcome;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr nanoseconds write_cost = microseconds(10);

// 4000 req/s for 100 ms on one thread in coarse mode (four requests a tick), each write
// costing write_cost, over links that carry bytes in no time.
cli_result ticks_with_costly_writes(bool http2, std::vector<std::string> protocol) {
  surroundings around;
  around.up.write_cost = write_cost;
  around.up.bytes_per_ns = around.down.bytes_per_ns = 1e9;
  around.server.http2 = http2;
  std::vector<std::string> args{"-R", "4000", "-d", "100ms", "-t", "1", "--precision", "coarse"};
  args.insert(args.end(), protocol.begin(), protocol.end());
  args.emplace_back(target);
  return run_judged(args, around);
}

// Each request's `sent` is its write: the server read it exactly one link delay later.
void expect_sent_at_the_write(const simulation& sim) {
  const nanoseconds delay = sim.settings().up.delay;
  for (const auto& f : sim.finals()) {
    const served_request* s = sim.server().find(f.sim_id);
    ASSERT_NE(s, nullptr) << "request " << f.t.index;
    EXPECT_EQ(f.t.sent, s->read_at - delay) << "request " << f.t.index;
  }
}

TEST(sim_stamps, http1_a_turns_later_requests_carry_its_earlier_writes_in_their_send_lag) {
  const cli_result r = ticks_with_costly_writes(false, {"-c", "4"});
  const simulation& sim = *r.sim;
  ASSERT_EQ(count_of(sim, outcome::ok), 400u);
  expect_sent_at_the_write(sim);
  // The requests of one tick went out write_cost apart, each straight from the generator to
  // its connection: got to, given its slot and sent at one instant.
  std::vector<const final_outcome*> by_send;
  for (const auto& f : sim.finals()) {
    EXPECT_EQ(f.t.dispatched, f.t.sent) << "request " << f.t.index;
    EXPECT_EQ(f.t.assigned, f.t.sent) << "request " << f.t.index;
    by_send.push_back(&f);
  }
  std::sort(by_send.begin(), by_send.end(),
            [](const auto* a, const auto* b) { return a->t.sent < b->t.sent; });
  std::size_t in_tick = 1;
  std::size_t full_ticks = 0;
  for (std::size_t k = 1; k < by_send.size(); ++k) {
    const nanoseconds gap = by_send[k]->t.sent - by_send[k - 1]->t.sent;
    if (gap >= microseconds(500)) {  // the next tick
      in_tick = 1;
      continue;
    }
    EXPECT_EQ(gap, write_cost) << "request " << by_send[k]->t.index;
    full_ticks += ++in_tick == 4 ? 1 : 0;
  }
  EXPECT_GE(full_ticks, 90u);
}

TEST(sim_stamps, http2_requests_are_sent_when_their_frames_are_written) {
  const cli_result r =
      ticks_with_costly_writes(true, {"--http", "2", "-c", "2", "--max-streams", "10"});
  const simulation& sim = *r.sim;
  ASSERT_EQ(count_of(sim, outcome::ok), 400u);
  expect_sent_at_the_write(sim);
  // A tick frames its four requests, two on each connection, then writes the first
  // connection's frames and, write_cost later, the second's: that wait is queue wait.
  std::map<nanoseconds, std::uint64_t> queue_waits;
  for (const auto& f : sim.finals()) {
    EXPECT_EQ(f.t.assigned, f.t.sent) << "request " << f.t.index;
    queue_waits[f.t.assigned - f.t.dispatched]++;
  }
  EXPECT_GE(queue_waits[nanoseconds{0}], 195u);
  EXPECT_GE(queue_waits[write_cost], 195u);
}

}  // namespace
}  // namespace punctual::sim::stamps_cases
