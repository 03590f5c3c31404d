// Runs a whole load test: open every connection, start all workers on one instant, collect the
// per-second intervals while they run, and add their results together at the end.
#pragma once

#include <chrono>
#include <cstdint>
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <optional>
#include <thread>
#include <vector>

#include "engine/config.hpp"
#include "engine/request_source.hpp"
#include "engine/worker.hpp"
#include "net/transport.hpp"
#include "net/clock.hpp"
#include "record/recorder.hpp"
#include "run/result.hpp"
#include "schedule/schedule.hpp"

namespace punctual::engine {

using run_result = run::result;

// Called on the coordinating thread for each finished interval, in order.
using interval_sink = std::function<void(std::int64_t index, const record::view_set& views)>;

class load_run {
 public:
  // config.plan() is required for the open model and ignored for the closed one.
  explicit load_run(const run_config& config);

  // Throws run_failure when no connection could be opened.
  run_result execute(const interval_sink& sink);

  // The schedule's start instant; valid once execute() has opened the connections.
  const net::clock_mapping& start_mapping() const noexcept { return start_; }

  // Safe to call from a signal handler: ends the measured window now.
  void interrupt() noexcept;

 private:
  void open(run_result& result);
  void wait_for_start(nanoseconds until_unix) const noexcept;
  std::vector<std::thread> launch(std::atomic<std::uint32_t>& running);
  void add_up(run_result& result) const;

  const run_config& config_;
  std::unique_ptr<net::transport_factory> transports_;
  std::unique_ptr<request_source> requests_;
  run_control control_;
  net::clock_mapping start_{};
  std::vector<std::unique_ptr<worker>> workers_;
};

struct run_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace punctual::engine
