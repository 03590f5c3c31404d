#include "engine/open_load.hpp"

namespace punctual::engine {

open_load::open_load(const schedule::plan& plan, std::uint32_t worker,
                     const request_source& requests, claim_board* board)
    : source_requests(requests),
      arrivals_(plan, worker),
      // With constant arrivals every wait has the same length; Poisson and trace gaps have
      // every length (the pacer's early wake-ups, pacer.hpp).
      uneven_(plan.arrival != schedule::arrival_kind::constant),
      fits_send_gaps_(plan.fixed_poisson()),
      worker_(worker),
      board_(board) {
  if (!board_) return;
  others_.reserve(board_->workers() - 1);
  for (std::uint32_t k = 0; k < board_->workers(); ++k) {
    if (k != worker) others_.push_back({k, arrivals(plan, k)});
  }
}

void open_load::start(model_host& host, nanoseconds start, nanoseconds window_end) {
  host_ = &host;
  recorder_ = &host.recorder();
  // Only a fixed-rate Poisson run's first-attempt sends follow a law their gaps can be fitted
  // to (run::config::sends_fixed_poisson); the gap histogram costs a cache miss per request.
  if (fits_send_gaps_) recorder_->keep_send_gaps();
  arrivals_.start(start, window_end);
  for (auto& o : others_) o.stream.start(start, window_end);
  if (board_) publish(start);
}

record::request_times open_load::times_of(const arrivals& a) const noexcept {
  record::request_times t;
  t.intended = a.at();
  t.index = a.next().index;
  t.name = requests_.name_of(t.index);
  return t;
}

void open_load::dispatch(nanoseconds now) {
  while (arrivals_.due(now)) {
    if (board_ && !board_->take(worker_, taken_)) {
      pass_claimed(board_->taken(worker_));
      continue;
    }
    ++taken_;
    record::request_times t = times_of(arrivals_);
    // The next entry is read before this one is sent: when it is due too, its send lag's slot
    // is fetched now, and this send's system call hides the fetch.
    arrivals_.advance();
    if (arrivals_.due(now)) recorder_->prefetch_send_lag(arrivals_.at(), now);
    recorder_->on_planned(t.intended, t.name);
    host_->dispatched(t, now);
    host_->enqueue(t, now);
  }
  if (!board_) return;
  publish(now);
  claim(now);
}

// Own requests another worker took: still planned here (the worker's share of the schedule),
// their outcomes are the claimer's.
void open_load::pass_claimed(std::uint64_t taken) {
  while (taken_ < taken && !arrivals_.exhausted()) {
    const record::request_times t = times_of(arrivals_);
    recorder_->on_planned(t.intended, t.name);
    recorder_->on_claimed_out(t.intended);
    arrivals_.advance();
    ++taken_;
  }
}

void open_load::publish(nanoseconds now) noexcept {
  board_->publish(worker_,
                  arrivals_.over() ? nanoseconds::max()
                                   : host_->send_instant(arrivals_.at()) + board_->threshold(),
                  now);
}

void open_load::claim(nanoseconds now) {
  recheck_at_ = nanoseconds::max();
  for (auto& o : others_) {
    if (const nanoseconds hint = board_->claimable_at(o.worker); hint > now) {
      if (board_->overdue(o.worker, now)) recheck_at_ = std::min(recheck_at_, hint);
      continue;
    }
    while (claim_next(o, now)) {
    }
  }
}

// Claims `o`'s next request if it is due past the threshold; false when there is none to claim.
bool open_load::claim_next(other& o, nanoseconds now) {
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
  record::request_times t = times_of(o.stream);
  o.stream.advance();
  recorder_->on_claimed_in(t.intended);
  host_->dispatched(t, now);
  host_->enqueue(t, now);
  return true;
}

void open_load::interrupt(nanoseconds at) {
  interrupted_ = true;
  arrivals_.cut(at);
  for (auto& o : others_) o.stream.cut(at);
}

// Nothing of this worker's can be claimed any more; whatever others claimed that its own walk
// did not reach (past an interruption's cut) is counted.
void open_load::finish() {
  if (!board_) return;
  board_->publish(worker_, nanoseconds::max(), nanoseconds::max());
  pass_claimed(board_->close(worker_));
}

}  // namespace punctual::engine
