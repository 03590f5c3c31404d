// The floor of fine mode's punctuality on this machine: how late a thread that sleeps until each
// instant of a fixed schedule wakes, with no network, no parsing and no recording in the way. It
// answers whether a run's send lag could be valid here at all when every worker sleeps between
// sends, and what keeping one thread awake changes.
//
// Usage: wake_floor [RATE] [WINDOW_SECONDS] [ROUNDS]   (default 1000 3 10)
//
// Each round runs each way of waiting for one window, interleaved, on two threads:
//   alone    thread k sleeps until the instants k, k + 2, k + 4, ... (fine mode without claims);
//   tick     as alone, but each thread also wakes at the other's instants and does nothing there
//            (does waking twice as often make a thread's own wake-ups land sooner?);
//   both     both threads sleep until every instant, and an instant counts as sent when the first
//            of them wakes (a perfect claimer that sleeps, as fine mode's guard does; twice the
//            wake-ups);
//   duty     thread 0 sleeps until its own instants; thread 1 stays awake, polling the clock, and
//            an instant counts as sent when the first of them reaches it (one worker on duty);
//   spin     both threads poll the clock until their own instants (spin mode; two cores).
// Each window prints the lateness p99 and max, and whether p99 is over 1 ms, the validity gate's
// floor for the send lag (README, "Validity"). Lateness is measured from the instant, after the
// clock read that ends the wait; sleeps are clock_nanosleep(TIMER_ABSTIME).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "mono_clock.hpp"

namespace {

using std::chrono::nanoseconds;

using bench::now;
using bench::sleep_until;

nanoseconds spin_until(nanoseconds at) {
  nanoseconds t = now();
  while (t < at) t = now();
  return t;
}

enum class way { alone, tick, both, duty, spin };
constexpr std::string_view names[] = {"alone", "tick", "both", "duty", "spin"};

// Lateness of each instant as seen by one thread (nanoseconds::max(): not its instant).
using seen = std::vector<nanoseconds>;

void serve(way w, int k, nanoseconds start, nanoseconds gap, seen& out) {
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) {
    const bool own = static_cast<int>(i % 2) == k;
    const bool awake = (w == way::spin && own) || (w == way::duty && k == 1);
    const bool wakes = own || w == way::both || w == way::tick || (w == way::duty && k == 1);
    if (!wakes) continue;
    const nanoseconds at = start + gap * static_cast<std::int64_t>(i);
    nanoseconds woke;
    if (awake) {
      woke = spin_until(at);
    } else {
      sleep_until(at);
      woke = now();
    }
    if (own || w != way::tick) out[i] = woke - at;
  }
}

nanoseconds percentile(std::vector<nanoseconds> v, double p) {
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1));
  return v[idx];
}

// One window of `w`: returns whether its lateness p99 was over 1 ms.
bool window(way w, double rate, double seconds) {
  const nanoseconds gap{static_cast<std::int64_t>(1e9 / rate)};
  const auto count = static_cast<std::size_t>(rate * seconds);
  std::vector<seen> per_thread(2, seen(count, nanoseconds::max()));
  const nanoseconds start = now() + nanoseconds{20'000'000};
  std::thread other([&] { serve(w, 1, start, gap, per_thread[1]); });
  serve(w, 0, start, gap, per_thread[0]);
  other.join();
  std::vector<nanoseconds> late(count);
  for (std::size_t i = 0; i < count; ++i) late[i] = std::min(per_thread[0][i], per_thread[1][i]);
  const nanoseconds p99 = percentile(late, 99.0);
  const nanoseconds max = percentile(late, 100.0);
  const bool over = p99 > nanoseconds{1'000'000};
  std::printf("%-6s p99 %7.1f us  max %8.1f us%s\n", names[static_cast<int>(w)].data(),
              static_cast<double>(p99.count()) / 1e3, static_cast<double>(max.count()) / 1e3,
              over ? "  OVER 1 ms" : "");
  std::fflush(stdout);
  return over;
}

}  // namespace

int main(int argc, char** argv) {
  const double rate = argc > 1 ? std::atof(argv[1]) : 1000.0;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 10;
  if (rate <= 0 || seconds <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: wake_floor [RATE] [WINDOW_SECONDS] [ROUNDS]\n");
    return 2;
  }
  int over[5] = {};
  for (int r = 0; r < rounds; ++r) {
    for (way w : {way::alone, way::tick, way::both, way::duty, way::spin}) {
      over[static_cast<int>(w)] += window(w, rate, seconds);
    }
  }
  for (int w = 0; w < 5; ++w) {
    std::printf("%s: %d of %d windows had a lateness p99 over 1 ms\n", names[w].data(), over[w],
                rounds);
  }
  return 0;
}
