// The mapping of the kernel's CLOCK_REALTIME receive stamps onto CLOCK_MONOTONIC.
#include <gtest/gtest.h>

#include "net/clock.hpp"

namespace punctual::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(realtime_to_mono, maps_now_onto_now) {
  realtime_to_mono to_mono;
  to_mono.refresh(net::system_clock());
  const nanoseconds mono = mono_now();
  const nanoseconds mapped = to_mono(unix_now());
  const nanoseconds bound = milliseconds(50);
  EXPECT_LT((mapped - mono).count(), bound.count());
  EXPECT_GT((mapped - mono).count(), -bound.count());
}

TEST(realtime_to_mono, refresh_every_measures_once_then_only_when_stale) {
  realtime_to_mono to_mono;
  EXPECT_EQ(to_mono.measured_at().count(), 0);
  const nanoseconds now = mono_now();
  to_mono.refresh_every(net::system_clock(), seconds(1), now);  // never measured: measures
  const nanoseconds first = to_mono.measured_at();
  EXPECT_NE(first.count(), 0);
  to_mono.refresh_every(net::system_clock(), seconds(1), first + milliseconds(999));
  EXPECT_EQ(to_mono.measured_at(), first);  // younger than the period: kept
  to_mono.refresh_every(net::system_clock(), seconds(1), first + seconds(1));
  EXPECT_NE(to_mono.measured_at(), first);  // as old as the period: measured again
}

}  // namespace
}  // namespace punctual::net
