// The system calls on the request path, made without libc's wrappers.
//
// In a process with threads, libc's recvmsg, send and epoll_pwait2 are cancellation points:
// each call switches asynchronous cancellation on before the system call and off after it.
// That was about 2% of a worker's instructions (valgrind --tool=callgrind, a coarse run), and
// punctual never cancels a thread. syscall(2) is no cancellation point, and it returns -1 with
// errno set exactly as the wrappers do.
//
// Under AddressSanitizer and ThreadSanitizer the wrappers stay: their interceptors check the
// buffers a call reads and writes (and, for TSan, order the threads that meet on a socket),
// which a raw syscall(2) would hide from them.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <ctime>

#include "platform/sanitizers.hpp"

namespace punctual::net::sys {

#if defined(PUNCTUAL_SANITIZED)

inline ssize_t recvmsg(int fd, msghdr* msg, int flags) noexcept {
  return ::recvmsg(fd, msg, flags);
}

inline ssize_t send(int fd, const void* data, std::size_t size, int flags) noexcept {
  return ::send(fd, data, size, flags);
}

inline int epoll_pwait2(int epoll_fd, epoll_event* events, int max_events,
                        const timespec* timeout) noexcept {
  return ::epoll_pwait2(epoll_fd, events, max_events, timeout, nullptr);
}

#else

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

#endif

}  // namespace punctual::net::sys
