// The closed model (docs/design.md, "Workload models"): each user is a slot of its own, one per
// connection or --max-streams of them on an HTTP/2 connection, and sends its next request when
// its last one ended plus the think time. A request is intended when its user sends it: there is
// no schedule, no rate and no queue. A user waits for its connection when that is lost: a
// request bound to a connection that (re)connects carries the connect time, and a failed
// connect counts for each request bound to it, so a closed run never goes on quietly with fewer
// users. Its responses are read at once: a user waits on each.
#pragma once

#include <vector>

#include "engine/load_model.hpp"

namespace punctual::engine {

class closed_load final : public source_requests {
 public:
  closed_load(nanoseconds think, std::uint32_t users, const request_source& requests)
      : source_requests(requests), think_(think), users_(users) {}

  model_traits traits() const noexcept override { return {true, true, false, false}; }
  void start(model_host& host, nanoseconds start, nanoseconds window_end) override;
  void dispatch(nanoseconds now) override;
  nanoseconds next_due(nanoseconds now) const noexcept override;
  bool idle(nanoseconds now) const noexcept override { return now >= window_end_; }
  void on_final(const record::request_times& t, record::outcome o,
                nanoseconds at) noexcept override;
  bool reads_may_wait() const noexcept override { return false; }
  void interrupt(nanoseconds at) override {
    window_end_ = std::min(window_end_, std::max(at, start_));
  }
  void finish() override {}

 private:
  struct user {
    nanoseconds next_send{};  // when it sends next (its last request's end plus think time)
    bool waiting = false;     // a request of its is in flight
  };

  nanoseconds think_;
  std::vector<user> users_;
  model_host* host_ = nullptr;
  std::uint64_t sent_ = 0;
  nanoseconds start_{};
  nanoseconds window_end_{};
};

}  // namespace punctual::engine
