// -t1 and -t2 plan the same requests: the same intended times and names (the mix's draws), the
// same users' scenarios, and the same retry jitter for a retry both make. Only the send
// instants may differ, once connections are saturated.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "checks.hpp"
#include "random_setup.hpp"
#include "sim_seeds.hpp"

namespace punctual::sim::threads_cases {
namespace {

// What a run planned: each request's index, step, name and intended time. A hybrid user's later
// steps are intended at completions, which the threads change; its arrival and its scenario's
// names are the plan.
using planned_request = std::tuple<std::uint64_t, std::uint16_t, std::uint16_t, std::int64_t>;

std::vector<planned_request> plan_of(const simulation& sim) {
  std::vector<planned_request> out;
  const nanoseconds start = sim.result().start.mono;
  for (const auto& f : sim.finals()) {
    const nanoseconds intended = f.t.arrival.count() ? f.t.arrival : f.t.intended;
    out.emplace_back(f.t.index, f.t.step, f.t.name, (intended - start).count());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Each retry's delay, by request and attempt.
std::map<std::pair<std::uint64_t, std::uint32_t>, std::int64_t> backoffs_of(const simulation& sim) {
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::int64_t> out;
  std::map<std::tuple<std::uint64_t, std::uint16_t, std::uint32_t>, nanoseconds> failed;
  for (const auto& r : sim.retried()) failed[{r.t.index, r.t.step, r.t.attempt + 1}] = r.at;
  for (const auto& s : sim.sent()) {
    const auto it = failed.find({s.t.index, s.t.step, s.t.attempt});
    if (s.t.attempt > 0 && it != failed.end())
      out[{s.t.index, s.t.attempt}] = (s.t.due - it->second).count();
  }
  return out;
}

TEST(sim_threads, one_and_two_threads_plan_the_same_requests) {
  int failed = 0;
  for (const std::uint64_t seed : seeds_to_run(300)) {
    drawn_setup d = draw_setup(seed);
    if (d.s.config.closed()) continue;  // the closed model plans nothing
    d.s.interrupt_at.reset();           // an interruption cuts each run at its own point
    setup one = d.s;
    one.config.threads = 1;
    setup two = d.s;
    two.config.threads = 2;
    two.config.connections = std::max(two.config.connections, 2u);
    for (auto* s : {&one, &two}) {
      if (auto* p = s->config.plan()) p->workers = s->config.threads;
    }
    simulation a(one);
    simulation b(two);
    if (!a.run() || !b.run()) continue;  // every connect failed: nothing was planned
    std::vector<std::string> problems;
    if (plan_of(a) != plan_of(b)) problems.push_back("-t1 and -t2 planned different requests");
    const auto ba = backoffs_of(a);
    for (const auto& [key, delay] : backoffs_of(b)) {
      const auto it = ba.find(key);
      if (it != ba.end() && it->second != delay) {
        problems.push_back("request " + std::to_string(key.first) + " retry " +
                           std::to_string(key.second) + ": backoff " + std::to_string(it->second) +
                           " ns with -t1, " + std::to_string(delay) + " ns with -t2");
      }
    }
    if (problems.empty()) continue;
    ADD_FAILURE() << d.description << describe(problems, 4) << "\n  replay: SIM_SEED=" << seed
                  << " ctest -R sim --output-on-failure";
    if (++failed == 3) break;
  }
}

}  // namespace
}  // namespace punctual::sim::threads_cases
