#include "net/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "net/syscalls.hpp"

namespace punctual::net {
namespace {

std::string format_address(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
  inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
}

}  // namespace

bool resolve(std::string_view host, std::uint16_t port, address& out, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string host_text(host);
  const std::string port_text = std::to_string(port);
  const int rc = getaddrinfo(host_text.c_str(), port_text.c_str(), &hints, &list);
  if (rc != 0 || list == nullptr) {
    error = "cannot resolve '" + host_text + "': " + gai_strerror(rc);
    return false;
  }
  std::memcpy(&out.storage, list->ai_addr, list->ai_addrlen);
  out.length = list->ai_addrlen;
  freeaddrinfo(list);
  out.text = format_address(out.storage);
  return true;
}

bool is_loopback(const address& addr) noexcept {
  if (addr.storage.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr.storage);
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr.storage.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr.storage);
    return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
  }
  return false;
}

void reserve_descriptors(std::uint32_t count) noexcept {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  const rlim_t highest = std::min<rlim_t>(count, lim.rlim_cur) - 1;
  if (count == 0 || highest < 3) return;
  // A descriptor at the highest number makes the kernel size the table for it; F_DUPFD takes
  // the lowest free number from there, so no descriptor in use is touched.
  const int probe = eventfd(0, EFD_CLOEXEC);
  if (probe < 0) return;
  const int high = fcntl(probe, F_DUPFD_CLOEXEC, static_cast<int>(highest));
  if (high >= 0) close(high);
  close(probe);
}

int start_connect(const address& addr) noexcept {
  const int fd = socket(addr.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0 &&
      errno != EINPROGRESS) {
    const int err = errno;
    close(fd);
    return -err;
  }
  return fd;
}

int finish_connect(int fd) noexcept {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

namespace {

// The outcome of a recvmsg(2) that returned n, with errno set when n < 0.
io_result read_result(ssize_t n) noexcept {
  if (n > 0) return {io_status::done, static_cast<std::size_t>(n)};
  if (n == 0) return {io_status::closed, 0};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {io_status::would_block, 0};
  if (errno == ECONNRESET || errno == EPIPE) return {io_status::reset, 0};
  return {io_status::failed, 0};
}

}  // namespace

bool enable_receive_timestamps(int fd) noexcept {
  const int one = 1;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) == 0;
}

io_result read_stamped(int fd, char* buffer, std::size_t size,
                       std::chrono::nanoseconds& stamp) noexcept {
  return read_result(recv_stamped(fd, buffer, size, stamp));
}

ssize_t recv_stamped(int fd, char* buffer, std::size_t size,
                     std::chrono::nanoseconds& stamp) noexcept {
  iovec iov{buffer, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  stamp = std::chrono::nanoseconds{0};
  const ssize_t n = sys::recvmsg(fd, &msg, 0);
  if (n > 0) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      stamp = std::chrono::nanoseconds{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 +
                                       ts.tv_nsec};
    }
  }
  return n;
}

io_result write_some(int fd, const char* data, std::size_t size) noexcept {
  const ssize_t n = sys::send(fd, data, size, MSG_NOSIGNAL);
  if (n >= 0) return {io_status::done, static_cast<std::size_t>(n)};
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return {io_status::would_block, 0};
  if (errno == ECONNRESET || errno == EPIPE) return {io_status::reset, 0};
  return {io_status::failed, 0};
}

void close_socket(int fd) noexcept {
  if (fd < 0) return;
  linger lg{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  close(fd);
}

}  // namespace punctual::net
