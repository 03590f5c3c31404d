// The open model (docs/design.md, "Workload models"): request i is due at its intended time from
// the schedule, whatever the server does, and is the request the request source names for i. An
// outcome leads to nothing, and a response may always wait unread for the next due wake-up.
// With a claim board (claims.hpp), a worker takes each of its own requests through it, and sends
// another worker's request that is due past the steal threshold, as its owner would have.
#pragma once

#include <vector>

#include "engine/arrivals.hpp"
#include "engine/claims.hpp"
#include "engine/load_model.hpp"

namespace punctual::engine {

class open_load final : public source_requests {
 public:
  // `board`: the shard's claim board, or null (one worker, claims off).
  open_load(const schedule::plan& plan, std::uint32_t worker, const request_source& requests,
            claim_board* board);

  model_traits traits() const noexcept override { return {false, true, uneven_, false}; }
  void start(model_host& host, nanoseconds start, nanoseconds window_end) override;
  void dispatch(nanoseconds now) override;
  // With claims, also when the worker this one guards may need a claim (claims.hpp).
  nanoseconds next_due(nanoseconds now) const noexcept override {
    // After an interruption nothing more starts: what the others published before it is no
    // reason to wait.
    if (interrupted_) return arrivals_.next_due();
    const nanoseconds planned = std::min(arrivals_.next_due(), recheck_at_);
    if (!board_) return planned;
    return std::min(planned, board_->guard_wake(worker_, now, planned));
  }
  // With claims, a worker whose own schedule is over stays to claim until the others have
  // nothing left that may be claimed: the tail of the run is covered too.
  bool idle(nanoseconds) const noexcept override {
    return arrivals_.over() && (!board_ || board_->others_done(worker_));
  }
  void on_final(const record::request_times&, record::outcome, nanoseconds) noexcept override {}
  bool reads_may_wait() const noexcept override { return true; }
  void interrupt(nanoseconds at) override;
  void finish() override;

 private:
  // Another worker's requests, walked as far as its lane says they were taken.
  struct other {
    std::uint32_t worker;
    arrivals stream;
    std::uint64_t position = 0;  // entries of `stream` passed
  };
  record::request_times times_of(const arrivals& a) const noexcept;
  void pass_claimed(std::uint64_t taken);
  void publish(nanoseconds now) noexcept;
  void claim(nanoseconds now);
  bool claim_next(other& o, nanoseconds now);

  arrivals arrivals_;
  bool uneven_;
  bool fits_send_gaps_;
  std::uint32_t worker_;
  claim_board* board_;
  std::uint64_t taken_ = 0;  // own requests passed: sent, or claimed by others
  std::vector<other> others_;
  // An other's request that becomes claimable then, seen by the last turn (its owner may be
  // paused, its published instant stale).
  nanoseconds recheck_at_ = nanoseconds::max();
  bool interrupted_ = false;
  model_host* host_ = nullptr;
  record::recorder* recorder_ = nullptr;
};

}  // namespace punctual::engine
