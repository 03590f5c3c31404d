// One connection's byte pipe, whatever carries it: plain TCP, or TLS over TCP. The engine drives
// every connection through this interface and never touches a socket itself (as wrk's `struct
// sock` swaps connect/read/write for its TLS build). A transport registers its own socket with
// the worker's poller, so readiness comes back to the worker under the connection's token.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "net/poller.hpp"
#include "net/socket.hpp"

namespace punctual::net {

using nanoseconds = std::chrono::nanoseconds;

// Where connection set-up stands: still connecting or handshaking, ready to carry bytes, or
// failed (why: transport::failure()).
enum class setup_status { in_progress, ready, failed };

// Why a transport failed, in the terms the reports count socket errors in.
enum class failure_kind {
  none,
  connect,        // the TCP connect failed or was refused
  no_ports,       // no local port left (EADDRNOTAVAIL)
  no_fds,         // no descriptor left (EMFILE, ENFILE)
  tls_handshake,  // the TLS handshake failed (not a verification failure)
  tls_verify,     // the server's certificate did not verify
};

struct failure {
  failure_kind kind = failure_kind::none;
  std::string text;  // one line: the errno text or the TLS library's reason
};

// What a TLS transport negotiated on its current connection; nothing for plain TCP. Kept
// without allocating: the library's names are static, ALPN is copied into a small buffer.
struct tls_state {
  bool handshaken = false;
  bool resumed = false;          // this connection resumed an earlier session
  nanoseconds handshake_time{};  // from the TCP connect's end to the handshake's
  const char* version = "";      // "TLSv1.3"
  const char* cipher = "";
  char alpn[24] = {};  // "http/1.1", or empty when the server chose none
};

class transport {
 public:
  virtual ~transport() = default;

  // Starts connecting to `to` (non-blocking) and registers the socket with `loop` under `token`.
  virtual setup_status open(const address& to, poller& loop, std::uint64_t token) noexcept = 0;
  // The socket became ready while setting up (connect done, handshake bytes to read or write).
  virtual setup_status advance() noexcept = 0;
  // Why open() or advance() failed.
  virtual const failure& last_failure() const noexcept = 0;

  // Application bytes. `stamp` gets the kernel's receive stamp (CLOCK_REALTIME) of the newest
  // packet that supplied them, or zero when there is none. would_block: nothing more for now.
  virtual io_result read(char* buffer, std::size_t size, nanoseconds& stamp) noexcept = 0;
  virtual io_result write(const char* data, std::size_t size) noexcept = 0;
  // After a read that returned fewer bytes than asked: whether the socket is drained, so that the
  // next arrival raises a new readiness edge and the read that would only say would_block can be
  // skipped. Always for TCP; for TLS when its own last socket read was short too and it holds no
  // decrypted bytes.
  virtual bool drained_after_short_read() const noexcept = 0;
  // Asks for writability events while a write is blocked, and stops asking afterwards.
  virtual void watch_writable(bool on) noexcept = 0;

  virtual void close() noexcept = 0;
  virtual bool is_open() const noexcept = 0;
  virtual const tls_state& tls() const noexcept = 0;
  // The connection will next be opened for someone else (another hybrid user): it must not
  // resume the last TLS session, as another browser could not. Nothing for plain TCP.
  virtual void forget_session() noexcept = 0;
};

// Edge-triggered readiness for a transport's socket. Writability is asked for only while
// connecting or while a write is blocked: otherwise every ACK that frees send-buffer space would
// wake the worker for nothing, and each wake-up costs tens of microseconds of CPU
// (docs/design.md, "Host measurements").
inline constexpr std::uint32_t transport_read_events = EPOLLIN | EPOLLRDHUP | EPOLLET;
inline constexpr std::uint32_t transport_write_events = EPOLLOUT | EPOLLET;

// A failed connect's errno, in the terms the reports count: out of local ports, out of
// descriptors (the generator's limits, not the server's fault), or the connect itself.
failure_kind connect_failure_kind(int err) noexcept;

// Makes each connection's transport (once, before the run). Shared by the workers.
class transport_factory {
 public:
  virtual ~transport_factory() = default;
  virtual std::unique_ptr<transport> make() = 0;
};

std::unique_ptr<transport_factory> tcp_transport_factory();

}  // namespace punctual::net
