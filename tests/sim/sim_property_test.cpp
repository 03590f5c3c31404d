// Every rule, over random scenarios drawn from seeds (random_setup.hpp). Which seeds:
//   SIM_SEED=S        that seed alone (a failure prints its seed: this replays it);
//   SIM_SEEDS=N       seeds 1..N (default 2000; make test-full runs 50000);
//   SIM_PART=K/P      the K-th of P equal parts of them (ctest runs the parts side by side).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "checks.hpp"
#include "random_setup.hpp"

namespace punctual::sim {
namespace {

std::uint64_t env_number(const char* name, std::uint64_t otherwise) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : otherwise;
}

std::vector<std::uint64_t> seeds_to_run() {
  if (const std::uint64_t one = env_number("SIM_SEED", 0)) return {one};
  const std::uint64_t count = env_number("SIM_SEEDS", 2000);
  std::uint64_t part = 0, parts = 1;
  if (const char* p = std::getenv("SIM_PART"); p && *p) {
    part = std::strtoull(p, nullptr, 10);
    if (const char* slash = std::strchr(p, '/')) parts = std::max<std::uint64_t>(1, std::strtoull(slash + 1, nullptr, 10));
  }
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t s = 1; s <= count; ++s) {
    if (s % parts == part % parts) seeds.push_back(s);
  }
  return seeds;
}

TEST(sim_property, every_rule_holds_in_random_scenarios) {
  int failed = 0;
  for (const std::uint64_t seed : seeds_to_run()) {
    const drawn_setup d = draw_setup(seed);
    std::vector<std::string> problems;
    try {
      simulation sim(d.s);
      if (sim.run()) problems = check_run(sim);
    } catch (const std::exception& e) {
      problems.push_back(std::string("threw: ") + e.what());
    }
    if (problems.empty()) continue;
    ADD_FAILURE() << d.description << describe(problems, 6)
                  << "\n  replay: SIM_SEED=" << seed << " ctest -R sim --output-on-failure";
    if (++failed == 5) break;  // the first few say enough
  }
}

}  // namespace
}  // namespace punctual::sim
