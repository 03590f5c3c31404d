// Histogram hot path and report-time costs on latency-like data: values log-uniform between
// 1 us and 10 s, in ns, precomputed so the PRNG is not measured.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "punctual/histogram/codec.hpp"

namespace {

using punctual::hdr::histogram;

std::vector<std::int64_t> latency_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log10_ns(3.0, 10.0);  // 1 us .. 10 s
  std::vector<std::int64_t> out(n);
  for (auto& v : out) v = static_cast<std::int64_t>(std::pow(10.0, log10_ns(rng)));
  return out;
}

void BM_record(benchmark::State& state) {
  const std::vector<std::int64_t> values = latency_values(1 << 16, 1);
  histogram h;
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i]);
    i = (i + 1) & (values.size() - 1);
  }
  benchmark::DoNotOptimize(h.total_count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_record);

void BM_value_at_percentile(benchmark::State& state) {
  histogram h;
  for (const std::int64_t v : latency_values(1'000'000, 2)) h.record(v);
  const double percentiles[] = {50.0, 90.0, 99.0, 99.9, 99.99};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(h.value_at_percentile(percentiles[i]));
    i = (i + 1) % std::size(percentiles);
  }
}
BENCHMARK(BM_value_at_percentile)->Unit(benchmark::kMicrosecond);

void BM_encode_compressed(benchmark::State& state) {
  histogram h;
  for (const std::int64_t v : latency_values(13'000, 3)) h.record(v);  // ~10k populated slots
  std::int64_t populated = 0;
  for (std::int32_t i = 0; i < h.counts_length(); ++i) populated += h.count_at_index(i) != 0;
  for (auto _ : state) benchmark::DoNotOptimize(punctual::hdr::encode_compressed(h, 9));
  state.counters["populated_slots"] = static_cast<double>(populated);
}
BENCHMARK(BM_encode_compressed)->Unit(benchmark::kMillisecond);

}  // namespace
