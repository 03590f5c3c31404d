// Ready-made setups for the simulation's tests: a run config against the simulated target and
// a server that answers everything.
#pragma once

#include <chrono>

#include <gtest/gtest.h>

#include "checks.hpp"
#include "http/request.hpp"
#include "simulation.hpp"

namespace punctual::sim {

// GET / from a target that answers 200 after 100 us; -t1 -c4, no warm-up, a 10 s timeout.
inline setup base_setup() {
  setup s;
  engine::run_config& c = s.config;
  c.target.text = "sim:80";
  c.target_url = "http://sim/";
  http::request_spec spec;
  spec.host = "sim";
  c.request = http::encode_request(spec);
  for (int code = 200; code < 400; ++code) c.expected_status.set(static_cast<std::size_t>(code));
  c.threads = 1;
  c.connections = 4;
  c.timeout = std::chrono::seconds(10);
  c.connect_timeout = std::chrono::seconds(1);
  return s;
}

inline setup open_setup(double rate, std::chrono::nanoseconds duration) {
  setup s = base_setup();
  s.config.duration = duration;
  schedule::plan p;
  p.rate_per_s = rate;
  p.duration = duration;
  p.workers = s.config.threads;
  s.config.model = run::open_model{p, {}};
  return s;
}

// Runs `s` and holds it to every rule (checks.hpp); the simulation stays for more checks.
inline std::unique_ptr<simulation> run_checked(const setup& s) {
  auto sim = std::make_unique<simulation>(s);
  const bool ran = sim->run();
  EXPECT_TRUE(ran) << sim->failure().value_or("");
  if (ran) {
    const auto problems = check_run(*sim);
    EXPECT_TRUE(problems.empty()) << describe(problems);
  }
  return sim;
}

inline std::uint64_t count_of(const simulation& sim, record::outcome o) {
  return sim.result().measured.counts.outcomes[record::index(o)];
}

}  // namespace punctual::sim
