// The open model (docs/design.md, "Workload models"): request i is due at its intended time from
// the schedule, whatever the server does, and is the request the request source names for i. An
// outcome leads to nothing, and a response may always wait unread for the next due wake-up.
#pragma once

#include "engine/arrivals.hpp"
#include "engine/load_model.hpp"

namespace punctual::engine {

class open_load final : public source_requests {
 public:
  open_load(const schedule::plan& plan, std::uint32_t worker, const request_source& requests)
      : source_requests(requests),
        arrivals_(plan, worker),
        // With constant arrivals every wait has the same length; Poisson and trace gaps have
        // every length (the pacer's early wake-ups, pacer.hpp).
        uneven_(plan.arrival != schedule::arrival_kind::constant),
        fits_send_gaps_(plan.fixed_poisson()) {}

  model_traits traits() const noexcept override { return {false, true, uneven_, false}; }
  void start(model_host& host, nanoseconds start, nanoseconds window_end) override {
    host_ = &host;
    recorder_ = &host.recorder();
    // Only a fixed-rate Poisson run's first-attempt sends follow a law their gaps can be fitted
    // to (run::config::sends_fixed_poisson); the gap histogram costs a cache miss per request.
    if (fits_send_gaps_) recorder_->keep_send_gaps();
    arrivals_.start(start, window_end);
  }
  void dispatch(nanoseconds now) override;
  nanoseconds next_due(nanoseconds) const noexcept override { return arrivals_.next_due(); }
  bool idle(nanoseconds) const noexcept override { return arrivals_.over(); }
  void on_final(const record::request_times&, record::outcome, nanoseconds) noexcept override {}
  bool reads_may_wait() const noexcept override { return true; }
  void interrupt(nanoseconds at) override { arrivals_.cut(at); }
  void finish() override {}

 private:
  arrivals arrivals_;
  bool uneven_;
  bool fits_send_gaps_;
  model_host* host_ = nullptr;
  record::recorder* recorder_ = nullptr;
};

}  // namespace punctual::engine
