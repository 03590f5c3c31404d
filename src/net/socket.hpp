// Sockets for the generator: address resolution (once, at start), non-blocking connects, and
// reads/writes whose failures are classified into the reasons punctual reports.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace punctual::net {

struct address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string text;  // e.g. "127.0.0.1:8080" or "[::1]:8080"
};

// Resolves host:port once (numeric or named, IPv4 or IPv6). On failure returns false with a
// one-line reason in `error`.
bool resolve(std::string_view host, std::uint16_t port, address& out, std::string& error);

// True when the address is on the loopback range (127.0.0.0/8 or ::1).
bool is_loopback(const address& addr) noexcept;

// Grows this process's descriptor table to hold `count` descriptors (at most the open-file
// limit), now. The kernel grows it by doubling as descriptors are opened, and in a process with
// several threads each growth waits for an RCU grace period (milliseconds: docs/design.md, "Host
// measurements"). Workers that open
// connections while the run goes on (a connection per user) would stall on it at 256, 512,
// 1024, ... descriptors; called before they start, it costs nothing.
void reserve_descriptors(std::uint32_t count) noexcept;

// Starts a non-blocking connect. Returns the fd (>= 0) or -errno.
int start_connect(const address& addr) noexcept;
// After the fd became writable: 0 when connected, else the errno of the failed connect.
int finish_connect(int fd) noexcept;

enum class io_status { done, would_block, closed, reset, failed };

struct io_result {
  io_status status;
  std::size_t bytes;
};

// Asks the kernel to stamp each packet this socket receives (SO_TIMESTAMPNS, CLOCK_REALTIME),
// so a response read late still has the time it arrived.
bool enable_receive_timestamps(int fd) noexcept;
// Reads what is there (recvmsg); `stamp` gets the kernel's receive stamp (CLOCK_REALTIME, ns since
// the epoch), or zero when there is none. On TCP one call can consume several packets, and the
// stamp is that of the LAST one consumed: the time the newest of the bytes returned arrived.
io_result read_stamped(int fd, char* buffer, std::size_t size,
                       std::chrono::nanoseconds& stamp) noexcept;
// The same as recv(2) reports it (a byte count, 0 at the peer's close, -1 with errno), for a
// caller that keeps recv's conventions.
ssize_t recv_stamped(int fd, char* buffer, std::size_t size,
                     std::chrono::nanoseconds& stamp) noexcept;
io_result write_some(int fd, const char* data, std::size_t size) noexcept;

// Closes with SO_LINGER 0 so the generator does not pile up TIME_WAIT sockets on resets.
void close_socket(int fd) noexcept;

}  // namespace punctual::net
