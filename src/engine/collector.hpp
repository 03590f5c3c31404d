// The collector: while the workers run it takes each worker's finished intervals and intended
// seconds (lock-free hand-overs, record/interval_exchange.hpp and record/intended_seconds.hpp),
// emits each interval once every worker has handed it over, and at the end adds the workers'
// counts and costs into the run's result. It runs on the coordinating thread, never a worker's:
// load_run polls it every 20 ms of real time, the simulation every 20 ms of virtual time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "engine/config.hpp"
#include "engine/memory_account.hpp"
#include "engine/worker.hpp"
#include "record/intended_seconds.hpp"
#include "record/view_set.hpp"
#include "run/result.hpp"

namespace punctual::engine {

// Called on the collecting thread for each finished interval, in order.
using interval_sink = std::function<void(std::int64_t index, const record::view_set& views)>;

class run_collector;
// Called on the collecting thread after each poll of the collector (every 20 ms while the run
// lasts), and once after its finish() with `final` true: where the live metrics are made.
using poll_hook = std::function<void(const run_collector& collector, bool final)>;

class run_collector {
 public:
  static constexpr nanoseconds period{20'000'000};

  run_collector(const run_config& config, std::vector<std::unique_ptr<worker>>& workers,
                run::result& result, const interval_sink& sink);

  // While the workers run.
  void poll(const run_control& control);
  // Once every worker has ended: the last intervals and seconds, and the workers' counts, costs
  // and clocks added into the result. `now`: when the drain ended.
  void finish(const run_control& control, nanoseconds now);

  // The run's counts so far (the live metrics): while the workers run, the sum of what each
  // handed over with its last interval; after finish(), the run's own totals, equal to the
  // result's. `queue_depth`: the most requests that waited at once in the last interval.
  const record::live_counts& live() const noexcept { return live_; }
  std::uint64_t queue_depth() const noexcept { return queue_depth_; }

  // The run's histograms and series, by owner (engine/memory_account.hpp). On the collecting
  // thread, while the workers run or after.
  memory_account memory() const;

 private:
  class pending_intervals {
   public:
    explicit pending_intervals(std::size_t names) : names_(names) {}
    record::view_set& at(std::int64_t index);
    void release(std::int64_t index);
    std::size_t resident_bytes() const noexcept;

   private:
    std::size_t names_;
    std::map<std::int64_t, std::unique_ptr<record::view_set>> sets_;
    std::vector<std::unique_ptr<record::view_set>> spare_;
  };

  void poll_intervals();
  void poll_seconds();
  void emit(std::int64_t index);
  void add_up();
  void sum_live();

  const run_config& config_;
  std::vector<std::unique_ptr<worker>>& workers_;
  run::result& result_;
  const interval_sink& sink_;
  pending_intervals pending_;
  std::vector<std::int64_t> taken_;
  std::int64_t next_emit_ = 0;
  record::worst_second_finder worst_;
  std::vector<record::live_counts> worker_live_;  // each worker's last handed-over counts
  record::live_counts live_;
  std::uint64_t queue_depth_ = 0;
};

}  // namespace punctual::engine
