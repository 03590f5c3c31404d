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
      claims_(plan, worker, board) {}

void open_load::start(model_host& host, nanoseconds start, nanoseconds window_end) {
  host_ = &host;
  recorder_ = &host.recorder();
  // Only a fixed-rate Poisson run's first-attempt sends follow a law their gaps can be fitted
  // to (run::config::sends_fixed_poisson); the gap histogram costs a cache miss per request.
  if (fits_send_gaps_) recorder_->keep_send_gaps();
  arrivals_.start(start, window_end);
  claims_.start(arrivals_, host, start, window_end);
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
    if (!claims_.take(arrivals_, *this)) continue;
    record::request_times t = times_of(arrivals_);
    // The next entry is read before this one is sent: when it is due too, its send lag's slot
    // is fetched now, and this send's system call hides the fetch.
    arrivals_.advance();
    if (arrivals_.due(now)) recorder_->prefetch_send_lag(arrivals_.at(), now);
    recorder_->on_planned(t.intended, t.name);
    host_->dispatched(t, now);
    host_->enqueue(t, now);
  }
  claims_.turn_over(arrivals_, now, *this);
}

// Own requests another worker took: still planned here (the worker's share of the schedule),
// their outcomes are the claimer's.
void open_load::passed(const arrivals& own) {
  const record::request_times t = times_of(own);
  recorder_->on_planned(t.intended, t.name);
  recorder_->on_claimed_out(t.intended);
}

void open_load::claimed(const arrivals& other, nanoseconds now) {
  record::request_times t = times_of(other);
  recorder_->on_claimed_in(t.intended);
  host_->dispatched(t, now);
  host_->enqueue(t, now);
}

void open_load::interrupt(nanoseconds at) {
  arrivals_.cut(at);
  claims_.interrupt(at);
}

void open_load::finish() {
  claims_.finish(arrivals_, *this);
}

}  // namespace punctual::engine
