// The worker's FIFO of due requests waiting for a free connection. A ring buffer that starts
// with room for a few thousand requests and doubles when full, up to its limit (--max-queue):
// memory is taken for requests that really waited, never for a bound that is only a ceiling, and
// once the ring has grown to a run's deepest queue nothing is allocated per request.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "record/recorder.hpp"

namespace punctual::engine {

class request_queue {
 public:
  // The room a queue starts with: 4096 requests (under 0.5 MB) when its limit allows it.
  static constexpr std::size_t initial_room = 4096;

  // limit: the most requests it will be asked to hold (the worker drops beyond it); 0: none.
  explicit request_queue(std::size_t limit = 0)
      : ring_(std::clamp<std::size_t>(limit ? limit : initial_room, 16, initial_room)),
        limit_(limit) {}

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The requests it has room for before it must grow again.
  std::size_t capacity() const noexcept { return ring_.size(); }
  record::request_times& front() noexcept { return ring_[head_]; }
  const record::request_times& front() const noexcept { return ring_[head_]; }

  void push(const record::request_times& t) {
    if (size_ == ring_.size()) grow();
    ring_[(head_ + size_) % ring_.size()] = t;
    ++size_;
  }
  void pop() noexcept {
    head_ = (head_ + 1) % ring_.size();
    --size_;
  }

 private:
  // Doubles, but not past the limit (a ring already at its limit still takes one more).
  void grow() {
    std::size_t room = ring_.size() * 2;
    if (limit_ != 0) room = std::min(room, std::max(limit_, ring_.size() + 1));
    std::vector<record::request_times> bigger(room);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(bigger);
    head_ = 0;
  }

  std::vector<record::request_times> ring_;
  std::size_t limit_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace punctual::engine
