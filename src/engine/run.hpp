// Runs a whole load test: open every connection, start all workers on one instant, collect the
// per-second intervals while they run, and add their results together at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <optional>
#include <vector>

#include "engine/config.hpp"
#include "engine/worker.hpp"
#include "net/clock.hpp"
#include "record/recorder.hpp"
#include "schedule/schedule.hpp"

namespace punctual::engine {

struct run_result {
  record::phase measured;
  record::phase warmup;
  net::clock_mapping start;      // the schedule's start instant on both clocks
  nanoseconds measure_start{};   // CLOCK_MONOTONIC start of the measured window
  nanoseconds window{};          // the measured window actually run (shorter if interrupted)
  nanoseconds elapsed{};         // from start to the end of the drain
  bool interrupted = false;
  std::uint32_t connections_opened = 0;
  record::per_second_load load;  // the measured window's planned requests and attempts
  hdr::histogram send_gaps{record::latency_params()};  // every worker's gaps between its sends
  std::vector<worker_stats> workers;
};

// Called on the coordinating thread for each finished interval, in order.
using interval_sink = std::function<void(std::int64_t index, const record::view_set& views)>;

class load_run {
 public:
  // `plan` is required for the open model and ignored for the closed one.
  load_run(const run_config& config, std::optional<schedule::plan> plan);

  // Throws run_failure when no connection could be opened.
  run_result execute(const interval_sink& sink);

  // The schedule's start instant; valid once execute() has opened the connections.
  const net::clock_mapping& start_mapping() const noexcept { return start_; }

  // Safe to call from a signal handler: ends the measured window now.
  void interrupt() noexcept;

 private:
  void collect(std::vector<std::int64_t>& taken, std::vector<record::view_set*>& pending,
               std::int64_t& next_emit, const interval_sink& sink, bool final);

  const run_config& config_;
  std::optional<schedule::plan> plan_;
  run_control control_;
  net::clock_mapping start_{};
  std::vector<std::unique_ptr<worker>> workers_;
};

struct run_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace punctual::engine
