// A worker's side of the claim board (claims.hpp) for a model whose arrivals are a schedule: the
// open model's requests, the hybrid model's users. It takes the worker's own entries through the
// board, passes over those another worker took, publishes when its next may be claimed, and
// walks the other workers' shares of the schedule to claim theirs that are due past the steal
// threshold. The model says what an entry becomes (claim_walk::model).
#pragma once

#include <vector>

#include "engine/arrivals.hpp"
#include "engine/claims.hpp"
#include "engine/load_model.hpp"

namespace punctual::engine {

class claim_walk {
 public:
  // What the model does with an entry that changes hands.
  class model {
   public:
    virtual ~model() = default;
    // One of its own that another worker took: still planned here (this worker's share of the
    // schedule); its outcomes are the claimer's.
    virtual void passed(const arrivals& own) = 0;
    // Another worker's that this one took, due past the threshold at `now`: it runs it as the
    // owner would have.
    virtual void claimed(const arrivals& other, nanoseconds now) = 0;
  };

  // `board`: the shard's claim board, or null (one worker, or claims off): then every entry is
  // the worker's own and nothing is published or claimed.
  claim_walk(const schedule::plan& plan, std::uint32_t worker, claim_board* board);

  void start(const arrivals& own, model_host& host, nanoseconds start, nanoseconds window_end);

  // Before the worker runs its own due entry: true when it is the worker's to run (taken now);
  // false when another worker took it, and then it and every other taken since are passed.
  bool take(arrivals& own, model& m) {
    if (!board_) return true;
    if (board_->take(worker_, taken_)) {
      ++taken_;
      return true;
    }
    pass(own, board_->taken(worker_), m);
    return false;
  }
  // After the worker's turn: when its next entry may be claimed, then claims of others' due
  // entries.
  void turn_over(const arrivals& own, nanoseconds now, model& m);

  // When the worker must be awake for a claim, given its own next due instant `planned`.
  nanoseconds next_due(nanoseconds now, nanoseconds planned) const noexcept {
    if (!board_ || interrupted_) return planned;
    planned = std::min(planned, recheck_at_);
    return std::min(planned, board_->guard_wake(worker_, now, planned));
  }
  // A worker whose own schedule is over stays to claim until the others have nothing left that
  // may be claimed: the tail of the run is covered too.
  bool others_done() const noexcept { return !board_ || board_->others_done(worker_); }

  void interrupt(nanoseconds at);
  // Nothing of this worker's can be claimed any more; whatever others claimed that its own walk
  // did not reach (past an interruption's cut) is passed.
  void finish(arrivals& own, model& m);

 private:
  // Another worker's share, walked as far as its lane says it was taken.
  struct other {
    std::uint32_t worker;
    arrivals stream;
    std::uint64_t position = 0;  // entries of `stream` passed
  };
  void pass(arrivals& own, std::uint64_t taken, model& m);
  void publish(const arrivals& own, nanoseconds now) noexcept;
  bool claim_next(other& o, nanoseconds now, model& m);

  std::uint32_t worker_;
  claim_board* board_;
  std::uint64_t taken_ = 0;  // own entries passed: run here, or claimed by others
  std::vector<other> others_;
  // An other's entry that becomes claimable then, seen by the last turn (its owner may be
  // paused, its published instant stale).
  nanoseconds recheck_at_ = nanoseconds::max();
  bool interrupted_ = false;
  model_host* host_ = nullptr;
};

}  // namespace punctual::engine
