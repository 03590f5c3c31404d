#include "engine/claim_walk.hpp"

namespace punctual::engine {

claim_walk::claim_walk(const schedule::plan& plan, std::uint32_t worker, claim_board* board)
    : worker_(worker), board_(board) {
  if (!board_) return;
  others_.reserve(board_->workers() - 1);
  for (std::uint32_t k = 0; k < board_->workers(); ++k) {
    if (k != worker) others_.push_back({k, arrivals(plan, k)});
  }
}

void claim_walk::start(const arrivals& own, model_host& host, nanoseconds start,
                       nanoseconds window_end) {
  host_ = &host;
  for (auto& o : others_) o.stream.start(start, window_end);
  if (board_) publish(own, start);
}

void claim_walk::pass(arrivals& own, std::uint64_t taken, model& m) {
  while (taken_ < taken && !own.exhausted()) {
    m.passed(own);
    own.advance();
    ++taken_;
  }
}

void claim_walk::publish(const arrivals& own, nanoseconds now) noexcept {
  board_->publish(
      worker_,
      own.over() ? nanoseconds::max() : host_->send_instant(own.at()) + board_->threshold(), now);
}

void claim_walk::turn_over(const arrivals& own, nanoseconds now, model& m) {
  if (!board_) return;
  publish(own, now);
  recheck_at_ = nanoseconds::max();
  for (auto& o : others_) {
    if (const nanoseconds hint = board_->claimable_at(o.worker); hint > now) {
      if (board_->overdue(o.worker, now)) recheck_at_ = std::min(recheck_at_, hint);
      continue;
    }
    while (claim_next(o, now, m)) {
    }
  }
}

// Claims `o`'s next entry if it is due past the threshold; false when there is none to claim.
bool claim_walk::claim_next(other& o, nanoseconds now, model& m) {
  const std::uint64_t n = board_->taken(o.worker);
  while (o.position < n && !o.stream.exhausted()) {
    o.stream.advance();
    ++o.position;
  }
  if (o.stream.over() || o.position != n) return false;
  const nanoseconds from = host_->send_instant(o.stream.at()) + board_->threshold();
  if (from > now) {
    recheck_at_ = std::min(recheck_at_, from);
    return false;
  }
  // Lost to its owner or another claimer: look again, unless its owner is done.
  if (!board_->take(o.worker, n)) return !board_->closed(o.worker);
  ++o.position;
  m.claimed(o.stream, now);
  o.stream.advance();
  return true;
}

void claim_walk::interrupt(nanoseconds at) {
  interrupted_ = true;
  for (auto& o : others_) o.stream.cut(at);
}

void claim_walk::finish(arrivals& own, model& m) {
  if (!board_) return;
  board_->publish(worker_, nanoseconds::max(), nanoseconds::max());
  pass(own, board_->close(worker_), m);
}

}  // namespace punctual::engine
