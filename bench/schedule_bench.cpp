// Cost of yielding one intended time: the schedule is on every worker's hot path.
#include <benchmark/benchmark.h>

#include <chrono>

#include "schedule/stream.hpp"

namespace {

using namespace std::chrono_literals;
using namespace punctual::schedule;

plan bench_plan(arrival_kind kind, std::uint32_t workers, bool ramp) {
  plan p;
  p.arrival = kind;
  p.rate_per_s = 1e6;
  if (ramp) p.stages = {stage{100s, 1e6}};
  p.duration = std::chrono::hours(24 * 365);  // never runs out within a benchmark
  p.workers = workers;
  return p;
}

void bench_next(benchmark::State& state, arrival_kind kind, bool ramp) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  worker_stream s(bench_plan(kind, workers, ramp), 0);
  entry e;
  for (auto _ : state) {
    s.next(e);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}

void constant_next(benchmark::State& state) {
  bench_next(state, arrival_kind::constant, false);
}
void poisson_next(benchmark::State& state) {
  bench_next(state, arrival_kind::poisson, false);
}
void ramp_constant_next(benchmark::State& state) {
  bench_next(state, arrival_kind::constant, true);
}
void ramp_poisson_next(benchmark::State& state) {
  bench_next(state, arrival_kind::poisson, true);
}

BENCHMARK(constant_next)->Arg(1)->Arg(4);
BENCHMARK(poisson_next)->Arg(1)->Arg(4);
BENCHMARK(ramp_constant_next)->Arg(1)->Arg(4);
BENCHMARK(ramp_poisson_next)->Arg(1)->Arg(4);

}  // namespace
