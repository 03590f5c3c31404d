// The real poller's guard timer (net/poller.hpp): another worker arms it so that a paused
// worker's due requests get claimed (engine/claims.hpp). A guard that has fired ends a wait
// and a spin that would otherwise last ten seconds (the test's timeout catches a hang); a guard
// armed again later, or disarmed, does not end one.
#include <gtest/gtest.h>

#include <chrono>

#include "net/clock.hpp"
#include "net/poller.hpp"

namespace punctual::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

wait_plan long_wait(const clock& c, bool spin) {
  wait_plan p;
  p.due = c.now() + seconds(10);
  p.deadline = p.due;
  p.spin = spin;
  p.socket_wait = spin ? nanoseconds{0} : nanoseconds{seconds(10)};
  return p;
}

TEST(net_poller_guard, a_fired_guard_ends_a_socket_wait) {
  const clock& c = system_clock();
  auto poller = make_epoll_poller(c);
  poller->guard(c.now());
  const waited w = poller->wait(long_wait(c, false));
  EXPECT_TRUE(w.events.empty());  // the guard is consumed, never returned as an event
  EXPECT_LT(w.woke - c.now(), seconds(1));
}

TEST(net_poller_guard, a_fired_guard_ends_a_spin) {
  const clock& c = system_clock();
  auto poller = make_epoll_poller(c);
  poller->guard(c.now());
  const nanoseconds before = c.now();
  poller->wait(long_wait(c, true));
  EXPECT_LT(c.now() - before, seconds(5));
}

TEST(net_poller_guard, a_disarmed_or_later_guard_lets_a_wait_time_out) {
  const clock& c = system_clock();
  auto poller = make_epoll_poller(c);
  poller->guard(c.now() + milliseconds(200));
  poller->guard(nanoseconds::max());  // disarmed before it fired
  wait_plan p;
  p.due = p.deadline = c.now() + milliseconds(400);
  p.socket_wait = milliseconds(400);
  EXPECT_TRUE(poller->wait(p).timed_out);
  poller->guard(c.now() + seconds(60));  // re-armed far ahead
  EXPECT_TRUE(poller->wait(p).timed_out);
}

}  // namespace
}  // namespace punctual::net
