// One server thread: an epoll loop that accepts, reads requests and writes the responses
// that are due, sleeping with ns resolution (epoll_pwait2) until the next one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "net/clock.hpp"
#include "server/arrival_log.hpp"
#include "server/connection.hpp"
#include "server/h2_connection.hpp"
#include "server/server_config.hpp"
#include "server/stall_gate.hpp"
#include "server/tls.hpp"

namespace punctual::server {

class worker {
 public:
  // listen_fd is shared by all workers (EPOLLEXCLUSIVE spreads the accepts); so is `tls`
  // (null: plain HTTP).
  worker(int index, const server_config& config, int listen_fd, const stall_gate& gate,
         const response_set& responses, tls_context* tls);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  void run();   // the thread body; returns after request_stop()
  void wake();  // makes the loop look at the gate and the stop flag again
  void request_stop();

  stall_gate::writer_slot& writer() { return writer_; }
  const arrival_recorder& recorder() const { return recorder_; }

 private:
  bool play_connection_fault(int fd);
  struct due_entry {
    std::chrono::nanoseconds due;
    std::uint32_t slot;
    std::uint32_t generation;
    bool operator>(const due_entry& o) const { return due > o.due; }
  };

  void wait_for_events();
  void accept_all();
  void on_connection_event(std::uint32_t slot, std::uint32_t events);
  void read_all(std::uint32_t slot);
  void read_hello(std::uint32_t slot);
  std::chrono::nanoseconds arrival_of(std::chrono::nanoseconds stamp) noexcept;
  bool finish_handshake(std::uint32_t slot);
  void flush_due();
  void mark_ready(std::uint32_t slot);
  void arm(std::uint32_t slot);
  void close_connection(std::uint32_t slot);

  const stall_gate& gate_;
  const response_set& responses_;
  tls_context* tls_;
  int listen_fd_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  stall_gate::writer_slot writer_;
  answer_policy policy_;
  std::unique_ptr<h2_shared> h2_;  // null: connections speak HTTP/1.1
  arrival_recorder recorder_;

  std::vector<std::unique_ptr<connection>> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint32_t next_generation_ = 1;
  std::vector<std::uint32_t> ready_;
  std::vector<std::uint32_t> flushing_;
  std::priority_queue<due_entry, std::vector<due_entry>, std::greater<>> due_;
  std::vector<char> read_buffer_;
  // Plain connections date a request by the kernel's receive stamp of the read that completed
  // it, so the arrival log holds when it reached the socket, not when this thread woke to read
  // it (later by tens of microseconds, at times milliseconds: docs/design.md, "Host
  // measurements").
  net::realtime_to_mono to_mono_;
};

}  // namespace punctual::server
