// Runs a whole load test: open every connection, start all workers on one instant, collect the
// per-second intervals while they run, and add their results together at the end. The caller
// gives the parts (engine/parts.hpp): the CLI the real ones, the simulation its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/collector.hpp"
#include "engine/config.hpp"
#include "engine/parts.hpp"
#include "engine/worker.hpp"
#include "net/clock.hpp"
#include "run/result.hpp"

namespace punctual::engine {

using run_result = run::result;

// Given the memory account (engine/memory_account.hpp) 10 s into the measured window ("10s") and
// once the run has ended ("end"), on the collecting thread.
using memory_probe = std::function<void(const std::string& when, const memory_account& rows)>;

class load_run {
 public:
  load_run(const run_config& config, run_parts parts);

  // On threads, in real time. Throws run_failure when no connection could be opened.
  run_result execute(const interval_sink& sink);

  // The schedule's start instant; valid once the connections are open.
  const net::clock_mapping& start_mapping() const noexcept { return start_; }

  // A debug account of the run's memory (before execute()).
  void set_memory_probe(memory_probe probe) { memory_probe_ = std::move(probe); }

  // Called on the collecting thread after each poll and after the finish (before execute()).
  void set_poll_hook(poll_hook hook) { poll_hook_ = std::move(hook); }

  // Safe to call from a signal handler: ends the measured window now.
  void interrupt() noexcept;

  // The steps of execute(), for a driver that runs the workers' loops itself (tests/sim):
  // open() connects every worker and fixes the start (throws run_failure), prepare() readies
  // each worker and a collector into `result`; the driver then runs each worker's begin, turns,
  // waits and end, polls the collector, and calls the collector's finish.
  void open(run_result& result);
  void prepare(run_result& result);
  std::vector<std::unique_ptr<worker>>& workers() noexcept { return workers_; }
  const run_control& control() const noexcept { return control_; }
  const net::clock& clock() const noexcept { return *parts_.clock; }
  // The shard's claim board (null: one worker, or claims off).
  claim_board* claims() noexcept { return claims_.get(); }

 private:
  void wait_for_start(nanoseconds until_unix) const noexcept;
  std::vector<std::thread> launch(std::atomic<std::uint32_t>& running);

  const run_config& config_;
  run_parts parts_;
  run_control control_;
  net::clock_mapping start_{};
  // Open model, more than one worker, claims on: the shard's claim board (claims.hpp).
  std::unique_ptr<claim_board> claims_;
  std::vector<std::unique_ptr<worker>> workers_;
  memory_probe memory_probe_;
  poll_hook poll_hook_;
};

struct run_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace punctual::engine
