// The simulation's world: virtual time and the events that make it pass. One thread, no real
// sleep: an event runs at its virtual instant, in the order the instants and then the events
// were made, so a seed gives the same run on any machine (docs/design.md, "The simulation").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "net/clock.hpp"
#include "schedule/prng.hpp"

namespace punctual::sim {

using nanoseconds = std::chrono::nanoseconds;

class world {
 public:
  // Virtual CLOCK_MONOTONIC starts at `origin`; CLOCK_REALTIME is it plus a fixed offset.
  explicit world(std::uint64_t seed, nanoseconds origin = std::chrono::seconds(1000));

  // The instant as the event that runs now sees it: its own start plus what it spent.
  nanoseconds now() const noexcept { return now_ + spent_; }
  // The event that runs now is busy for `d` more (a system call's cost on its caller's clock):
  // its own clock moves on, while every other event keeps its instant, as another CPU's would.
  // Outside any event (the set-up before the run) time itself moves on.
  void spend(nanoseconds d) noexcept { (running_ ? spent_ : now_) += d; }
  // Runs `f` at `at` (not before the running event's start). Returns the event's number, for
  // cancel().
  std::uint64_t at(nanoseconds at, std::function<void()> f);
  void cancel(std::uint64_t event) noexcept { cancelled_.push_back(event); }
  // Runs the earliest event; false when none is left.
  bool step();
  // Runs events until `done` holds or the next event is after `limit`, then sets the time to
  // min(limit, when `done` first held). True when `done` held.
  bool run_until(const std::function<bool()>& done, nanoseconds limit);

  // The world's own random numbers (the network's splits, the server's draws): one stream,
  // drawn in event order.
  std::uint64_t next() noexcept { return random_.next(); }
  double unit() noexcept { return random_.next_unit(); }

  const net::clock& clock() const noexcept { return clock_; }
  static constexpr nanoseconds unix_offset{1'700'000'000'000'000'000};

 private:
  struct event {
    nanoseconds at;
    std::uint64_t number;
    std::function<void()> run;
  };
  struct later {
    bool operator()(const event& a, const event& b) const noexcept {
      return a.at != b.at ? a.at > b.at : a.number > b.number;
    }
  };
  class virtual_clock final : public net::clock {
   public:
    explicit virtual_clock(const world& w) : w_(w) {}
    nanoseconds now() const noexcept override { return w_.now(); }
    nanoseconds unix_now() const noexcept override { return w_.now() + unix_offset; }
    net::clock_mapping map() const noexcept override { return {w_.now(), w_.now() + unix_offset}; }
    nanoseconds thread_cpu() const noexcept override { return nanoseconds{0}; }

   private:
    const world& w_;
  };
  bool is_cancelled(std::uint64_t number) noexcept;

  nanoseconds now_;
  nanoseconds spent_{};   // by the event that runs now
  bool running_ = false;  // an event runs now
  std::uint64_t next_number_ = 0;
  std::priority_queue<event, std::vector<event>, later> events_;
  std::vector<std::uint64_t> cancelled_;
  schedule::xoshiro256ss random_;
  virtual_clock clock_{*this};
};

}  // namespace punctual::sim
