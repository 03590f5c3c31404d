// TLS for the test server: one SSL_CTX shared by every worker, and each connection's TLS state
// on its non-blocking socket. Nothing here blocks: a call that needs the socket ready reports
// EAGAIN (or `pending`), and the worker's epoll loop calls again on the next edge.
#pragma once

#include <openssl/types.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "server/tls_fault.hpp"

namespace punctual::server {

// The server's certificate, key, session cache and session-ticket keys. Being one SSL_CTX for
// every worker is what lets a client resume its session whichever worker accepts it.
class tls_context {
 public:
  // Loads the certificate chain and key, or makes a self-signed certificate. Throws
  // std::invalid_argument (one line) when a file cannot be read, holds no PEM certificate or
  // usable key, or the key does not match the certificate. ALPN offers h2 alone with
  // `http2`, else http/1.1 alone.
  explicit tls_context(const tls_options& options, bool http2 = false);
  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  SSL_CTX* native() const { return ctx_; }
  bool self_signed() const { return self_signed_; }
  // The leaf certificate as PEM, and its SHA-256 fingerprint "AB:CD:...".
  const std::string& certificate_pem() const { return certificate_pem_; }
  const std::string& fingerprint() const { return fingerprint_; }

  // Counts one more accepted connection and returns the fault it gets (none for the first
  // `after`). Called by every worker: the count is the server's.
  tls_fault_kind next_connection_fault();

  // garbage-hello: bytes no TLS client can take for a record.
  const std::string& garbage() const { return garbage_; }
  // close-in-handshake: the first record this server answers `hello` with (its ServerHello),
  // or empty when `hello` is not a ClientHello it can answer.
  std::string first_server_record(std::string_view hello) const;

 private:
  SSL_CTX* ctx_ = nullptr;
  bool self_signed_ = false;
  std::string certificate_pem_;
  std::string fingerprint_;
  tls_fault_spec fault_;
  std::atomic<std::uint64_t> accepted_{0};
  std::string garbage_;
};

// One connection's TLS. read() and write() report as recv() and send() do: a byte count, 0 at
// the end of the stream (close_notify, or the peer's FIN), or -1 with errno (EAGAIN while
// OpenSSL waits for the socket in either direction).
class tls_session {
 public:
  // Null when OpenSSL cannot make the SSL object (out of memory).
  static std::unique_ptr<tls_session> open(SSL_CTX* ctx, int fd);
  ~tls_session();
  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;

  enum class step { pending, done, failed };
  step handshake();
  bool handshake_done() const { return done_; }

  ssize_t read(char* buffer, std::size_t size);
  ssize_t write(const char* data, std::size_t size);
  // Sends close_notify if the session is in good order; never waits for the peer's.
  void close_notify();

 private:
  explicit tls_session(SSL* ssl) : ssl_(ssl) {}
  ssize_t failed_io(int ret);

  SSL* ssl_;
  bool done_ = false;
  bool failed_ = false;  // OpenSSL forbids SSL_shutdown after a fatal error
};

// A BIO on a socket that never raises SIGPIPE (send with MSG_NOSIGNAL) and leaves the
// descriptor open when freed; null if OpenSSL cannot make one. Public so that tests can drive a
// client over it too.
BIO* new_socket_bio(int fd);

// "AB:CD:..." (upper-case hex, colons), as `openssl x509 -fingerprint -sha256` prints it.
std::string sha256_fingerprint(const X509* certificate);

}  // namespace punctual::server
