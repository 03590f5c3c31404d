#include "net/event_loop.hpp"

#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "net/syscalls.hpp"

namespace punctual::net {

event_loop::event_loop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

event_loop::~event_loop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool event_loop::add(int fd, std::uint32_t events, std::uint64_t token) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool event_loop::modify(int fd, std::uint32_t events, std::uint64_t token) noexcept {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void event_loop::remove(int fd) noexcept {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

std::span<epoll_event> event_loop::wait(std::span<epoll_event> buffer,
                                        std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout.count() >= 0) {
    ts.tv_sec = timeout.count() / 1'000'000'000;
    ts.tv_nsec = timeout.count() % 1'000'000'000;
    tsp = &ts;
  }
  if (timeout.count() != 0) ++sleeps_;
  const int max_events = static_cast<int>(buffer.size());
  int n = pwait2_missing_ ? -1 : sys::epoll_pwait2(epoll_fd_, buffer.data(), max_events, tsp);
  if (n < 0 && (pwait2_missing_ || errno == ENOSYS)) {
    // Kernels before 5.11 and valgrind lack epoll_pwait2: wait in whole milliseconds, rounded
    // up so a deadline is never woken for early.
    pwait2_missing_ = true;
    const int ms =
        timeout.count() < 0 ? -1 : static_cast<int>((timeout.count() + 999'999) / 1'000'000);
    n = epoll_wait(epoll_fd_, buffer.data(), max_events, ms);
  }
  if (n <= 0) return {};
  return buffer.first(static_cast<std::size_t>(n));
}

}  // namespace punctual::net
