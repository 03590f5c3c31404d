// A run's memory does not grow with its length: the bound of docs/design.md ("Memory") holds at
// every moment of a long simulated run, and the histograms a run reuses second after second hold
// only what the current seconds recorded, not every value the run ever saw.
#include <gtest/gtest.h>

#include <string>

#include "engine/memory_account.hpp"
#include "platform/sanitizers.hpp"
#include "sim_setups.hpp"
#include "simulation.hpp"

namespace punctual::sim::memory_cases {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The bytes of the account's rows whose owner contains `part`.
std::size_t bytes_of(const engine::memory_account& rows, const std::string& part) {
  std::size_t bytes = 0;
  for (const auto& r : rows) {
    if (r.owner.find(part) != std::string::npos) bytes += r.bytes;
  }
  return bytes;
}

// Ten minutes at 20 req/s on two threads, exponential service times, and stalls of 1 to 8 s
// that send response times up through octaves the quiet minutes never reach. The histograms'
// memory is read at 30 s (before the intended-second ring has used any slot twice) and again at
// 590 s, long after the last stall.
TEST(sim_memory, a_long_run_stays_within_its_bound_and_does_not_grow) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take histogram counts from calloc, so that ASan sees them";
#endif
  // The run's own policy: pages handed back as each second is taken (the simulation's main keeps
  // them, for speed).
  hdr::set_page_policy(hdr::page_policy::give_back);
  struct restore {
    ~restore() { hdr::set_page_policy(hdr::page_policy::keep_and_zero); }
  } restore_after;
  setup s = open_setup(20, seconds(600));
  s.config.threads = 2;
  s.config.connections = 8;
  std::get<run::open_model>(s.config.model).plan.workers = 2;
  s.server.service = {service_time::kind::exponential, milliseconds(2)};
  s.server.stalls = {{seconds(100), seconds(101)},
                     {seconds(200), seconds(202)},
                     {seconds(300), seconds(304)},
                     {seconds(400), seconds(408)}};
  simulation sim(s);
  engine::memory_account early, late;
  sim.at_offset(seconds(30), [&] { early = sim.collector().memory(); });
  sim.at_offset(seconds(590), [&] { late = sim.collector().memory(); });
  ASSERT_TRUE(ran_judged(sim));
  ASSERT_FALSE(early.empty());
  ASSERT_FALSE(late.empty());

  const engine::histogram_bound bound = engine::bound_histograms(s.config);
  // The formula counts the ring the recorders really have.
  EXPECT_EQ(bound.ring_slots, sim.engine().workers()[0]->recorder().seconds().slot_count());
  for (const auto* rows : {&early, &late}) {
    for (std::uint32_t w = 0; w < 2; ++w) {
      const std::string worker = "worker " + std::to_string(w) + ":";
      EXPECT_LE(bytes_of(*rows, worker + " interval views") +
                    bytes_of(*rows, worker + " intended-second ring") +
                    bytes_of(*rows, worker + " warm-up views") +
                    bytes_of(*rows, worker + " send gaps"),
                bound.per_worker);
    }
    EXPECT_LE(bytes_of(*rows, "collector:"), bound.collector);
    EXPECT_LE(bytes_of(*rows, "run totals:"), bound.run_totals);
  }
  // What is reused each second holds the recent seconds' values only: the stalls' octaves are
  // not kept for the rest of the run. (Kept, the ring held 2.3 times as much at 590 s as at
  // 30 s, the interval sets 2.9 times, the collector's sets 2.4 times.)
  for (const std::string owner : {"intended-second ring", "interval views", "collector:"}) {
    EXPECT_LE(bytes_of(late, owner), bytes_of(early, owner) * 3 / 2 + 64 * 1024)
        << owner << ": " << bytes_of(early, owner) << " bytes at 30 s, " << bytes_of(late, owner)
        << " at 590 s";
  }
  // The run's totals keep every value by design; they are bounded by the layout.
  EXPECT_GT(bytes_of(late, "run totals:"), bytes_of(early, "run totals:"));
}

}  // namespace
}  // namespace punctual::sim::memory_cases
