// The system calls on the request path, made without libc's wrappers.
//
// In a process with threads, libc's recvmsg, send and epoll_pwait2 are cancellation points:
// each call switches asynchronous cancellation on before the system call and off after it.
// That was about 2% of a worker's instructions (valgrind --tool=callgrind, a coarse run), and
// punctual never cancels a thread. syscall(2) is no cancellation point, and it returns -1 with
// errno set exactly as the wrappers do.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <ctime>

namespace punctual::net::sys {

inline ssize_t recvmsg(int fd, msghdr* msg, int flags) noexcept {
  return ::syscall(SYS_recvmsg, fd, msg, flags);
}

inline ssize_t send(int fd, const void* data, std::size_t size, int flags) noexcept {
  return ::syscall(SYS_sendto, fd, data, size, flags, nullptr, 0);
}

// No signal mask is passed, so the mask's size is not read.
inline int epoll_pwait2(int epoll_fd, epoll_event* events, int max_events,
                        const timespec* timeout) noexcept {
  return static_cast<int>(
      ::syscall(SYS_epoll_pwait2, epoll_fd, events, max_events, timeout, nullptr, 0));
}

}  // namespace punctual::net::sys
