#include "engine/memory_account.hpp"

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

#include "analysis/interval_series.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

histogram_bound bound_histograms(const run_config& config, std::size_t pending_intervals,
                                 std::size_t pending_seconds) {
  histogram_bound b;
  b.histogram_bytes = static_cast<std::size_t>(hdr::counts_length_for(record::latency_params())) *
                      sizeof(std::int64_t);
  const std::size_t h = b.histogram_bytes;
  const std::size_t names = config.name_count();
  const std::size_t set = record::view_count + record::named_view_count * names;
  const std::size_t second = record::second_views::histogram_count;
  b.ring_slots = record::intended_second_slots(config.timeout, config.interval);
  // Two interval sets, the ring, warm-up views, send gaps, and the hybrid model's step views.
  b.per_worker = (2 * set + second * b.ring_slots + set + 1 + second * names) * h;
  b.collector = (pending_intervals * set + second * (pending_seconds + 1)) * h;
  // Measured and warm-up views, the steps and the worst second of the result.
  b.run_totals = (2 * set + second * names + second) * h;
  b.total = config.threads * b.per_worker + b.collector + b.run_totals;
  return b;
}

std::size_t series_bytes_per_second(const run_config& config, std::size_t extra_percentiles) {
  const std::size_t per_interval =
      sizeof(record::interval_row) + sizeof(analysis::interval_summary) +
      (analysis::summary_percentiles.size() + extra_percentiles) * sizeof(std::int64_t);
  const auto intervals_per_second = static_cast<std::size_t>(
      std::max<std::int64_t>(1, std::chrono::seconds(1) / config.interval));
  // The load series: planned, late, attempts and steps, one std::uint64_t a second per worker.
  const std::size_t load = config.threads * 4 * sizeof(std::uint64_t);
  return 2 * per_interval * intervals_per_second + load;
}

void add_process_rows(memory_account& rows) {
  // VmRSS is RssAnon (heap, stacks, histograms) plus RssFile (the binary and its libraries).
  std::ifstream status("/proc/self/status");
  std::string key;
  std::size_t kb = 0;
  while (status >> key) {
    if (key == "VmRSS:" || key == "RssAnon:" || key == "RssFile:") {
      status >> kb;
      rows.push_back({"process " + key.substr(0, key.size() - 1), kb * 1024});
    }
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  const struct mallinfo2 m = mallinfo2();
  rows.push_back({"process malloc in use (arena + mapped blocks)", m.uordblks + m.hblkhd});
}

std::string format_account(const std::string& when, const memory_account& rows) {
  std::string text;
  for (const auto& r : rows) {
    text += when + '\t' + r.owner + '\t' + std::to_string(r.bytes) + '\n';
  }
  return text;
}

}  // namespace punctual::engine
