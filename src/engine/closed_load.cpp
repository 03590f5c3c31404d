#include "engine/closed_load.hpp"

#include <algorithm>

namespace punctual::engine {

void closed_load::start(model_host& host, nanoseconds start, nanoseconds window_end) {
  host_ = &host;
  start_ = start;
  window_end_ = window_end;
  for (auto& u : users_) u.next_send = start;
}

// Users in slot order, so the users of one connection go in its slots' order.
void closed_load::dispatch(nanoseconds now) {
  if (now >= window_end_) return;
  for (std::uint32_t k = 0; k < users_.size(); ++k) {
    user& u = users_[k];
    if (u.waiting || u.next_send > now || host_->slot_ready_at(k, now) > now) continue;
    u.waiting = true;
    record::request_times t;
    t.intended = now;
    t.index = sent_++;  // names it apart from the user's other requests
    t.user = k + 1;
    host_->recorder().on_planned(now);
    host_->dispatched(t, now);
    host_->enqueue(t, now);
  }
}

nanoseconds closed_load::next_due(nanoseconds now) const noexcept {
  if (now >= window_end_) return nanoseconds::max();
  nanoseconds due = nanoseconds::max();
  for (std::uint32_t k = 0; k < users_.size(); ++k) {
    const user& u = users_[k];
    if (u.waiting || u.next_send >= due) continue;
    due = std::min(due, std::max(u.next_send, host_->slot_ready_at(k, now)));
  }
  return due;
}

void closed_load::on_final(const record::request_times& t, record::outcome,
                           nanoseconds at) noexcept {
  if (t.user == 0 || t.user > users_.size()) return;
  user& u = users_[t.user - 1];
  u.waiting = false;
  u.next_send = at + think_;
}

}  // namespace punctual::engine
