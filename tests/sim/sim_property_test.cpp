// Every rule, over random scenarios drawn from seeds (random_setup.hpp): 2,000 by default, the
// seeds sim_seeds.hpp says.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checks.hpp"
#include "random_setup.hpp"
#include "sim_seeds.hpp"

namespace punctual::sim::property_cases {
namespace {

TEST(sim_property, every_rule_holds_in_random_scenarios) {
  int failed = 0;
  for (const std::uint64_t seed : seeds_to_run(2000)) {
    const drawn_setup d = draw_setup(seed);
    std::vector<std::string> problems;
    try {
      simulation sim(d.s);
      if (sim.run()) problems = check_run(sim);
    } catch (const std::exception& e) {
      problems.push_back(std::string("threw: ") + e.what());
    }
    if (problems.empty()) continue;
    ADD_FAILURE() << d.description << describe(problems, 6) << "\n  replay: SIM_SEED=" << seed
                  << " ctest -R sim --output-on-failure";
    if (++failed == 5) break;  // the first few say enough
  }
}

}  // namespace
}  // namespace punctual::sim::property_cases
