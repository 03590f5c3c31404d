// The worst second by intended time, and what made it so.
//
// The latency views are cut by completion time, like the .hlog. The question "what did the
// generator do during the worst second?" needs the other cut: the requests *intended* in one
// second, whatever became of them. Each worker keeps one small set of histograms per intended
// second (intended_seconds), only until no request of that second can still end (the timeout,
// plus a margin); then it hands the set to the collector, which adds the workers' sets of a
// second together and keeps the worst one seen (worst_second_finder). A run of any length holds
// about (timeout + 7 s) of them per worker, never one per second of the run.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "punctual/histogram/histogram.hpp"

namespace punctual::record {

// What a request's response time is made of (docs/design.md, "Terms").
enum class component : std::uint8_t { send_lag, queue_wait, connect_time, service_time };
inline constexpr std::size_t component_count = 4;
inline constexpr std::array<std::string_view, component_count> component_names{
    "send_lag", "queue_wait", "connect_time", "service_time"};
// The cause each component names when it is the largest, in words.
inline constexpr std::array<std::string_view, component_count> component_causes{
    "the generator", "queueing behind busy connections", "connecting", "server"};

// The requests intended in one second (or made of one step, for worst_step).
struct second_views {
  std::int64_t second = -1;
  hdr::histogram response_time;
  std::array<hdr::histogram, component_count> components;
  std::uint64_t planned = 0;    // requests that ended (each planned request ends once)
  std::uint64_t sent = 0;       // of them, those sent at least once
  std::uint64_t completed = 0;  // of them, those answered with a whole response

  second_views();
  hdr::histogram& operator[](component c) noexcept {
    return components[static_cast<std::size_t>(c)];
  }
  const hdr::histogram& operator[](component c) const noexcept {
    return components[static_cast<std::size_t>(c)];
  }
  void add(const second_views& other) noexcept;
  // Also gives the histograms' pages back: a slot of the ring holds one second after another,
  // and must not keep the pages of every value any of them saw (docs/design.md, "Memory").
  void reset() noexcept;
  std::size_t resident_bytes() const noexcept;
  static constexpr std::size_t histogram_count = 1 + component_count;
};

// Whether a ranks worse than b: higher response-time p99, then higher max, then earlier second.
bool worse_than(const second_views& a, const second_views& b) noexcept;

// One worker's ring of intended seconds. Worker side: at() and retire_through(); collector
// side: take_retired() and retired_through(). Slots move free -> recording (worker) ->
// retired (worker) -> free (collector), so each slot has one owner at a time.
class intended_seconds {
 public:
  // At least `slots` slots (rounded up to a power of two).
  explicit intended_seconds(std::size_t slots);

  // The set of `second`, or nullptr when its slot is not free (the collector has not taken the
  // second that held it before, or `second` is older than the ring): the sample is then counted
  // in lost() instead. Never allocates.
  second_views* at(std::int64_t second) noexcept;
  // The set at() would give for `second` if it is already recording, else nullptr; claims none.
  const second_views* peek(std::int64_t second) const noexcept;
  // Every second up to `second` is complete: hand them to the collector.
  void retire_through(std::int64_t second) noexcept;
  std::uint64_t lost() const noexcept { return lost_; }
  std::size_t slot_count() const noexcept { return size_; }
  // Resident bytes of every slot's histograms (any thread: it reads only page residency).
  std::size_t resident_bytes() const noexcept;

  // Collector side: gives every retired set to `take` (which adds it elsewhere), then frees it.
  template <class F>
  void take_retired(F&& take) {
    for (std::size_t i = 0; i < size_; ++i) {
      slot& s = slots_[i];
      if (s.state.load(std::memory_order_acquire) != slot_state::retired) continue;
      take(static_cast<const second_views&>(s.views));
      s.views.reset();  // on the collector's thread: the worker never pays for the release
      s.state.store(slot_state::free, std::memory_order_release);
    }
  }
  // Every second up to this one has been retired (so far); read it before take_retired().
  std::int64_t retired_through() const noexcept {
    return retired_through_.load(std::memory_order_acquire);
  }

 private:
  enum class slot_state : std::uint8_t { free, recording, retired };
  struct slot {
    second_views views;
    std::atomic<slot_state> state{slot_state::free};
  };
  std::unique_ptr<slot[]> slots_;
  std::size_t size_;
  std::atomic<std::int64_t> retired_through_{-1};
  std::uint64_t lost_ = 0;
};

// The collector's side over all workers: adds their sets of each second, and once every worker
// has retired a second, compares it with the worst so far. Seconds outside [0, whole_seconds)
// (warm-up, or a last second the window does not cover whole) are never candidates.
class worst_second_finder {
 public:
  explicit worst_second_finder(std::int64_t whole_seconds) : whole_seconds_(whole_seconds) {}

  void add(const second_views& s);
  // Every worker has retired every second up to `second`.
  void complete_through(std::int64_t second);
  const std::optional<second_views>& worst() const noexcept { return worst_; }
  // The worst, moved out: a copy would write every page of its histograms.
  std::optional<second_views> take_worst() noexcept { return std::move(worst_); }
  // Resident bytes of the seconds added but not yet complete, and of the worst.
  std::size_t resident_bytes() const noexcept;
  // The window ended early: seconds from `whole_seconds` on are no longer whole.
  void limit(std::int64_t whole_seconds) noexcept {
    whole_seconds_ = std::min(whole_seconds_, whole_seconds);
  }

 private:
  std::int64_t whole_seconds_;
  std::map<std::int64_t, second_views> pending_;
  std::optional<second_views> worst_;
};

}  // namespace punctual::record
