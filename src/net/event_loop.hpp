// A per-thread epoll instance with nanosecond timeouts (epoll_pwait2). It knows file descriptors
// and time, nothing about HTTP.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <span>

namespace punctual::net {

class event_loop {
 public:
  event_loop();
  ~event_loop();
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  // `token` comes back in epoll_event.data.u64.
  bool add(int fd, std::uint32_t events, std::uint64_t token) noexcept;
  bool modify(int fd, std::uint32_t events, std::uint64_t token) noexcept;
  void remove(int fd) noexcept;

  // Waits at most `timeout` (0: poll, negative: forever). Returns the ready events; an
  // interrupted wait returns none.
  std::span<epoll_event> wait(std::span<epoll_event> buffer,
                              std::chrono::nanoseconds timeout) noexcept;

  // How many times wait() actually blocked (timeout != 0): the sleeps that cost ~35 us each.
  std::uint64_t sleeps() const noexcept { return sleeps_; }

 private:
  int epoll_fd_ = -1;
  std::uint64_t sleeps_ = 0;
  bool pwait2_missing_ = false;  // epoll_pwait2 failed with ENOSYS: epoll_wait from then on
};

}  // namespace punctual::net
