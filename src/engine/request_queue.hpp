// The worker's FIFO of due requests waiting for a free connection. A ring buffer reserved up
// front; it grows (doubling) only if the reservation was too small, never per request.
#pragma once

#include <cstddef>
#include <vector>

#include "record/recorder.hpp"

namespace punctual::engine {

class request_queue {
 public:
  explicit request_queue(std::size_t reserve) : ring_(reserve < 16 ? 16 : reserve) {}

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
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
  void grow() {
    std::vector<record::request_times> bigger(ring_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(bigger);
    head_ = 0;
  }

  std::vector<record::request_times> ring_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace punctual::engine
