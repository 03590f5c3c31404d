// Random scenarios for the property tests, drawn from a seed: the model and its shape (rate,
// stages, trace, mix; closed users; hybrid sessions), connections, threads and protocol, the
// server's service times, stalls and faults, the network, timeouts and retries, pauses and an
// interruption. Each stays small (at most ~2,000 planned requests) so thousands run in a
// minute. The same seed always gives the same setup, and its description names it in one line.
#pragma once

#include <cstdint>
#include <string>

#include "simulation.hpp"

namespace punctual::sim {

struct drawn_setup {
  setup s;
  std::string description;
};

drawn_setup draw_setup(std::uint64_t seed);

}  // namespace punctual::sim
