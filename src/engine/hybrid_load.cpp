#include "engine/hybrid_load.hpp"

#include "engine/pacer.hpp"

namespace punctual::engine {
namespace {

// This worker's share of max_users, split as the connections are. With a connection per user,
// the worker's slots are its users' (the CLI sized the connections).
std::uint32_t user_slots(const run_config& config, std::uint32_t worker, std::uint32_t slots) {
  const run::hybrid_model& h = *config.hybrid();
  if (h.per_user) return slots;
  const std::uint32_t cap = h.max_users;
  if (cap == 0) return 0;
  const std::uint32_t share = cap / config.threads + (worker < cap % config.threads ? 1 : 0);
  return std::max<std::uint32_t>(share, 1);
}

}  // namespace

hybrid_load::hybrid_load(const run_config& config, std::uint32_t worker, std::uint32_t slots,
                         const request_source& requests, claim_board* board)
    : arrivals_(config.hybrid()->plan, worker),
      requests_(requests),
      per_user_(config.hybrid()->per_user),
      graceful_stop_(config.hybrid()->graceful_stop),
      sessions_(*config.hybrid(), config.seed, user_slots(config, worker, slots)),
      // A user that holds its own connection cannot move: its arrivals are not claimable.
      claims_(config.hybrid()->plan, worker, per_user_ ? nullptr : board) {
  if (per_user_) sessions_.hold_ended_slots();
  sessions_.set_read_horizon(pacer::harvest_horizon);
}

void hybrid_load::start(model_host& host, nanoseconds start, nanoseconds window_end) {
  host_ = &host;
  host.recorder().keep_steps();  // each step's requests, reported apart
  arrivals_.start(start, window_end);
  sessions_.attach(host.recorder(), window_end + graceful_stop_);
  claims_.start(arrivals_, host, start, window_end);
}

void hybrid_load::dispatch(nanoseconds now) {
  dispatch_arrivals(now);
  // Sessions' next steps that are due, and arrivals that got a user slot (already dispatched).
  record::request_times t;
  while (sessions_.next_due(now, t)) {
    if (t.dispatched.count() == 0) host_->dispatched(t, now);
    host_->enqueue(t, now);
  }
  claims_.turn_over(arrivals_, now, *this);
}

void hybrid_load::dispatch_arrivals(nanoseconds now) {
  while (arrivals_.due(now)) {
    if (!claims_.take(arrivals_, *this)) continue;
    record::request_times first;
    place(sessions_.arrive(arrivals_.next().index, arrivals_.at(), first), first, now);
    arrivals_.advance();
  }
}

// Another worker's user, claimed here: it runs here from its first step on.
void hybrid_load::claimed(const arrivals& other, nanoseconds now) {
  record::request_times first;
  place(sessions_.arrive_claimed(other.next().index, other.at(), first), first, now);
}

// Each arrival is a user: its first step is sent now, or waits for a user slot (dispatched now,
// so the wait is queue wait), or is dropped with its session.
void hybrid_load::place(session_driver::arrival_fate fate, record::request_times& first,
                        nanoseconds now) {
  switch (fate) {
    case session_driver::arrival_fate::admit:
      host_->dispatched(first, now);
      host_->enqueue(first, now);
      break;
    case session_driver::arrival_fate::wait:
      host_->dispatched(first, now);
      sessions_.wait_for_slot(first);
      break;
    case session_driver::arrival_fate::dropped:
      break;
  }
}

}  // namespace punctual::engine
