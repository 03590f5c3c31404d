// One accepted connection of the test server: reads requests, queues their responses in
// arrival order with their due times, writes those that are due.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/arrival_log.hpp"
#include "server/request_reader.hpp"
#include "server/service_time.hpp"

namespace punctual::server {

enum class response_kind : std::uint8_t { ok, ok_close, bad_request };

// The three responses the server ever sends, built once.
struct response_set {
  std::string ok;
  std::string ok_close;
  std::string bad_request;

  static response_set make(std::size_t body_size);
  const std::string& bytes(response_kind kind) const;
};

struct pending_response {
  std::chrono::nanoseconds arrival{0};
  std::chrono::nanoseconds due{0};
  response_kind kind = response_kind::ok;
};

// FIFO ring that keeps its storage: pushing allocates only when it outgrows its capacity.
class pending_queue {
 public:
  pending_queue() : items_(16) {}
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  const pending_response& front() const { return items_[head_]; }
  void push(const pending_response& r);
  void pop();

 private:
  std::vector<pending_response> items_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

class connection {
 public:
  connection(int fd, std::uint32_t generation);
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  int fd() const { return fd_; }
  std::uint32_t generation() const { return generation_; }

  // Parses bytes read at `arrival`; queues a response per request (due = arrival + service,
  // never before the previous one). Returns true if the queue went from empty to non-empty.
  bool on_bytes(std::string_view data, std::chrono::nanoseconds arrival, service_sampler& service);
  void on_peer_closed() { reading_closed_ = peer_closed_ = true; }

  bool reading_closed() const { return reading_closed_; }
  bool has_pending() const { return !pending_.empty(); }
  std::chrono::nanoseconds next_due() const { return pending_.front().due; }

  enum class status { open, close };
  // Writes every response due at `now` (plus leftovers of earlier writes).
  status flush(std::chrono::nanoseconds now, const response_set& responses,
               arrival_recorder& recorder);
  // Records the responses that will never be written (arrival log: answered 0).
  void abandon(arrival_recorder& recorder);

  bool in_ready = false;  // queued on the worker's flush list

 private:
  void queue(std::chrono::nanoseconds arrival, std::chrono::nanoseconds due, response_kind kind);
  status write_out();

  int fd_;
  std::uint32_t generation_;
  request_reader reader_;
  pending_queue pending_;
  std::chrono::nanoseconds last_due_{0};
  std::string out_;
  std::size_t out_sent_ = 0;
  bool reading_closed_ = false;  // after Connection: close, a bad request or EOF
  bool peer_closed_ = false;
  bool close_after_write_ = false;
};

}  // namespace punctual::server
