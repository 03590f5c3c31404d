// Which seeds a property test runs:
//   SIM_SEED=S        that seed alone (a failure prints its seed: this replays it);
//   SIM_SEEDS=N       seeds 1..N (each test has its own default; make test-full asks for more);
//   SIM_PART=K/P      the K-th of P equal parts of them (ctest runs the parts side by side).
// Under a sanitizer a run costs ~30 times as much, so there a test runs 1/40 of its default
// seeds (50 of the property test's 2,000), whatever SIM_SEEDS says: memory safety needs the
// code paths, which the property test's scenarios reach within a few dozen seeds, not the
// numbers, which the normal build checks on every seed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "platform/sanitizers.hpp"

// A case whose code paths cheaper cases already take, kept for its numbers (a rate, a fit, a
// statistic): under a sanitizer it is skipped, saying why, since there it would cost ~30 times
// as much and check no memory access the others do not.
#ifdef PUNCTUAL_SANITIZED
#define PUNCTUAL_SKIP_UNDER_SANITIZER(why) GTEST_SKIP() << "under a sanitizer: " << (why)
#else
#define PUNCTUAL_SKIP_UNDER_SANITIZER(why) static_cast<void>(why)
#endif

namespace punctual::sim {

inline std::uint64_t env_number(const char* name, std::uint64_t otherwise) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : otherwise;
}

// `count`: the seeds a test runs by default; `share` (count unless given): its share of
// SIM_SEEDS, as a fraction of 2,000 (the property test's).
inline std::vector<std::uint64_t> seeds_to_run(std::uint64_t count, std::uint64_t share = 0) {
  if (const std::uint64_t one = env_number("SIM_SEED", 0)) return {one};
  if (share == 0) share = count;
#ifdef PUNCTUAL_SANITIZED
  count = std::max<std::uint64_t>(1, count / 40);
#else
  if (const std::uint64_t all = env_number("SIM_SEEDS", 0))
    count = std::max<std::uint64_t>(1, all * share / 2000);
#endif
  std::uint64_t part = 0, parts = 1;
  if (const char* p = std::getenv("SIM_PART"); p && *p) {
    part = std::strtoull(p, nullptr, 10);
    if (const char* slash = std::strchr(p, '/'))
      parts = std::max<std::uint64_t>(1, std::strtoull(slash + 1, nullptr, 10));
  }
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t s = 1; s <= count; ++s) {
    if (s % parts == part % parts) seeds.push_back(s);
  }
  return seeds;
}

}  // namespace punctual::sim
