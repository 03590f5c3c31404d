// The closed model's dispatch: each slot is a user that sends when its last request ended,
// plus think time (docs/design.md, "Workload models").
#include "engine/worker.hpp"

#include <algorithm>
#include <utility>

namespace punctual::engine {
namespace {

// Set up: it takes its users' requests now (up to its codec's capacity).
bool set_up(const connection& c) noexcept {
  return c.state == conn_state::idle || c.state == conn_state::busy;
}

}  // namespace

// Closed model: each user sends its next request when its previous one is done (plus think
// time). A user is a slot: one per connection, or --max-streams of them on an HTTP/2 connection.
// There is no intended time other than the send itself. A connection that was lost and could
// not be reopened is reopened for its users' next requests, as in the open model: they wait
// for the connect, and a failed connect is counted for each, so every failure is counted and
// the run never goes on quietly with fewer users.
void worker::dispatch_closed_model(nanoseconds now) {
  if (now >= window_end_) return;
  for (auto& c : connections_) {
    const bool open = set_up(c);
    const bool reopen = c.state == conn_state::closed && c.retry_at <= now;
    if (!open && !reopen) continue;  // connecting: its users wait for it
    const std::uint32_t generation = c.generation;
    bool bound = false;
    // Over HTTP/2 the server's SETTINGS may allow fewer streams than the connection has users.
    while (!open || c.in_flight < c.codec->capacity()) {
      slot* s = due_user(c, now);
      if (!s) break;
      begin_closed_request(*s, now);
      if (!open) {
        s->times.had_to_connect = bound = true;
        continue;
      }
      send_request(*s, now);
      if (c.generation != generation) break;  // a write failed
    }
    if (bound) start_connect(c, now);
  }
}

slot* worker::due_user(connection& c, nanoseconds now) noexcept {
  auto& stack = c.free_slots;
  for (std::size_t i = stack.size(); i-- > 0;) {
    if (slots_[stack[i]].next_send > now) continue;
    std::swap(stack[i], stack.back());
    return &slots_[stack.back()];
  }
  return nullptr;
}

// The closed model: when one of the connection's waiting users can send next (max: none can).
nanoseconds worker::users_due(const connection& c) const noexcept {
  const bool open = set_up(c);
  if ((!open && c.state != conn_state::closed) || (open && c.in_flight >= c.codec->capacity())) {
    return nanoseconds::max();
  }
  nanoseconds due = nanoseconds::max();
  for (const std::uint32_t k : c.free_slots) due = std::min(due, slots_[k].next_send);
  if (c.state == conn_state::closed && due != nanoseconds::max()) due = std::max(due, c.retry_at);
  return due;
}

void worker::begin_closed_request(slot& s, nanoseconds now) {
  s.times = record::request_times{};
  s.times.intended = s.times.dispatched = s.times.assigned = now;
  mark_busy(s);
  recorder_->on_planned(now);
  recorder_->on_dispatched(s.times);
  recorder_->on_assigned(s.times);
}

}  // namespace punctual::engine
