// The open model (docs/design.md, "Workload models"): request i is due at its intended time from
// the schedule, whatever the server does, and is the request the request source names for i. An
// outcome leads to nothing, and a response may always wait unread for the next due wake-up.
// With a claim board (claims.hpp), a worker takes each of its own requests through it, and sends
// another worker's request that is due past the steal threshold, as its owner would have.
#pragma once

#include "engine/arrivals.hpp"
#include "engine/claim_walk.hpp"
#include "engine/load_model.hpp"

namespace punctual::engine {

class open_load final : public source_requests, private claim_walk::model {
 public:
  // `board`: the shard's claim board, or null (one worker, claims off).
  open_load(const schedule::plan& plan, std::uint32_t worker, const request_source& requests,
            claim_board* board);

  model_traits traits() const noexcept override { return {false, true, uneven_, false}; }
  void start(model_host& host, nanoseconds start, nanoseconds window_end) override;
  void dispatch(nanoseconds now) override;
  // With claims, also when the worker this one guards may need a claim (claims.hpp).
  nanoseconds next_due(nanoseconds now) const noexcept override {
    return claims_.next_due(now, arrivals_.next_due());
  }
  bool idle(nanoseconds) const noexcept override {
    return arrivals_.over() && claims_.others_done();
  }
  void on_final(const record::request_times&, record::outcome, nanoseconds) noexcept override {}
  bool reads_may_wait() const noexcept override { return true; }
  void interrupt(nanoseconds at) override;
  void finish() override;

 private:
  record::request_times times_of(const arrivals& a) const noexcept;
  void passed(const arrivals& own) override;
  void claimed(const arrivals& other, nanoseconds now) override;

  arrivals arrivals_;
  bool uneven_;
  bool fits_send_gaps_;
  claim_walk claims_;
  model_host* host_ = nullptr;
  record::recorder* recorder_ = nullptr;
};

}  // namespace punctual::engine
