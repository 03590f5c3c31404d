// TLS over a non-blocking TCP socket, edge-triggered. The socket is read through a BIO of our
// own that calls recvmsg and keeps the kernel's receive stamp of every packet it reads, so the
// stamp of the last read that supplied a record's bytes dates what that record decrypts to.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

#include "net/clock.hpp"
#include "net/tls_internal.hpp"

namespace punctual::net {
namespace {

// OpenSSL's reason for the newest error on the queue ("wrong version number"), then cleared.
void reason_text(std::string& out, const char* fallback) {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  const char* reason = e ? ERR_reason_error_string(e) : nullptr;
  out = reason ? reason : fallback;
}

class tls_transport final : public transport {
 public:
  tls_transport(SSL_CTX* ctx, const tls_client_config& config, const clock& time)
      : ctx_(ctx), config_(config), clock_(time) {
    name_is_address_ = is_address_literal(config_.server_name);
  }
  ~tls_transport() override {
    close();
    if (session_) SSL_SESSION_free(session_);
  }

  setup_status open(const address& to, poller& loop, std::uint64_t token) noexcept override {
    loop_ = &loop;
    token_ = token;
    state_ = tls_state{};
    const int fd = start_connect(to);
    if (fd < 0) return fail(connect_failure_kind(-fd), std::strerror(-fd));
    enable_receive_timestamps(fd);
    fd_ = fd;
    connected_ = false;
    loop.add(fd_, transport_write_events, token_);
    return setup_status::in_progress;
  }

  setup_status advance() noexcept override {
    if (!connected_) {
      const int err = finish_connect(fd_);
      if (err != 0) return fail(connect_failure_kind(err), std::strerror(err));
      if (!begin_handshake())
        return fail(failure_kind::tls_handshake, "cannot start a TLS session");
      connected_ = true;
      handshake_started_ = clock_.now();
    }
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) return handshake_done();
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ:
        loop_->modify(fd_, transport_read_events, token_);
        return setup_status::in_progress;
      case SSL_ERROR_WANT_WRITE:
        loop_->modify(fd_, transport_read_events | transport_write_events, token_);
        return setup_status::in_progress;
      default:
        return handshake_failed();
    }
  }

  const failure& last_failure() const noexcept override { return failure_; }

  // The error queue is kept empty (every failure path clears it), as SSL_get_error needs, so
  // the steady path does not clear it before each call.
  io_result read(char* buffer, std::size_t size, nanoseconds& stamp) noexcept override {
    stamp = nanoseconds{0};
    if (!ssl_) return {io_status::would_block, 0};  // still connecting: no session yet
    const int n = SSL_read(ssl_, buffer, static_cast<int>(size));
    if (n > 0) {
      stamp = last_stamp_;
      return {io_status::done, static_cast<std::size_t>(n)};
    }
    return io_failure(n);
  }

  io_result write(const char* data, std::size_t size) noexcept override {
    if (!ssl_) return {io_status::would_block, 0};
    const int n = SSL_write(ssl_, data, static_cast<int>(size));
    if (n > 0) return {io_status::done, static_cast<std::size_t>(n)};
    return io_failure(n);
  }

  bool drained_after_short_read() const noexcept override {
    return socket_drained_ && SSL_has_pending(ssl_) == 0;
  }
  void watch_writable(bool on) noexcept override {
    loop_->modify(fd_, on ? transport_read_events | transport_write_events : transport_read_events,
                  token_);
  }

  void close() noexcept override {
    if (ssl_) {
      // Freed without close_notify, a session is marked not resumable: say it was shut down, so
      // the next connection can resume it (requests are over when a connection closes).
      SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
      SSL_free(ssl_);  // frees the BIO too
      ssl_ = nullptr;
    }
    if (fd_ < 0) return;
    loop_->remove(fd_);
    close_socket(fd_);
    fd_ = -1;
  }
  bool is_open() const noexcept override { return fd_ >= 0; }
  const tls_state& tls() const noexcept override { return state_; }
  void forget_session() noexcept override {
    if (session_) SSL_SESSION_free(session_);
    session_ = nullptr;
  }

  // The context's new-session callback lands here (TLS 1.3 sends tickets after the handshake).
  void keep(SSL_SESSION* session) noexcept {
    if (session_) SSL_SESSION_free(session_);
    session_ = session;
  }

  static BIO_METHOD* bio_method();

 private:
  bool begin_handshake() noexcept;
  setup_status handshake_done() noexcept;
  setup_status handshake_failed() noexcept;
  io_result io_failure(int n) noexcept;
  setup_status fail(failure_kind kind, const char* text) noexcept {
    failure_.kind = kind;
    failure_.text = text;
    return setup_status::failed;
  }

  static int bio_read(BIO* bio, char* out, int size);
  static int bio_write(BIO* bio, const char* data, int size);
  static long bio_ctrl(BIO* bio, int cmd, long num, void* ptr);

  SSL_CTX* ctx_;
  const tls_client_config& config_;
  const clock& clock_;
  bool name_is_address_ = false;
  poller* loop_ = nullptr;
  std::uint64_t token_ = 0;
  int fd_ = -1;
  bool connected_ = false;
  SSL* ssl_ = nullptr;
  SSL_SESSION* session_ = nullptr;  // the last session the server gave: resumed on reconnect
  nanoseconds last_stamp_{};        // the newest receive stamp the BIO has read
  bool socket_drained_ = false;     // the BIO's last socket read returned less than it asked
  nanoseconds handshake_started_{};
  tls_state state_;
  failure failure_;
};

BIO_METHOD* tls_transport::bio_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "punctual socket");
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, [](BIO* b) {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

int tls_transport::bio_read(BIO* bio, char* out, int size) {
  auto* t = static_cast<tls_transport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  nanoseconds stamp{};
  const io_result r = read_stamped(t->fd_, out, static_cast<std::size_t>(size), stamp);
  t->socket_drained_ = r.status != io_status::done || r.bytes < static_cast<std::size_t>(size);
  if (r.status == io_status::done) {
    if (stamp.count() != 0) t->last_stamp_ = stamp;
    return static_cast<int>(r.bytes);
  }
  if (r.status == io_status::would_block) {
    BIO_set_retry_read(bio);
    return -1;
  }
  return r.status == io_status::closed ? 0 : -1;  // errno stays for SSL_ERROR_SYSCALL
}

int tls_transport::bio_write(BIO* bio, const char* data, int size) {
  auto* t = static_cast<tls_transport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const io_result r = write_some(t->fd_, data, static_cast<std::size_t>(size));
  if (r.status == io_status::done) return static_cast<int>(r.bytes);
  if (r.status == io_status::would_block) BIO_set_retry_write(bio);
  return -1;
}

long tls_transport::bio_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // writes go straight to the socket
}

bool tls_transport::begin_handshake() noexcept {
  ssl_ = SSL_new(ctx_);
  if (!ssl_) return false;
  SSL_set_app_data(ssl_, this);
  BIO* bio = BIO_new(bio_method());
  if (!bio) return false;
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);
  const char* name = config_.server_name.c_str();
  // SNI carries names only; an address is checked against the certificate's IP entries.
  if (!name_is_address_) SSL_set_tlsext_host_name(ssl_, name);
  if (config_.verify) {
    if (name_is_address_) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name);
    } else {
      SSL_set1_host(ssl_, name);
    }
  }
  if (session_) SSL_set_session(ssl_, session_);
  SSL_set_connect_state(ssl_);
  return true;
}

setup_status tls_transport::handshake_done() noexcept {
  loop_->modify(fd_, transport_read_events, token_);
  state_.handshaken = true;
  state_.resumed = SSL_session_reused(ssl_) == 1;
  state_.handshake_time = clock_.now() - handshake_started_;
  state_.version = SSL_get_version(ssl_);
  state_.cipher = SSL_get_cipher_name(ssl_);
  const unsigned char* alpn = nullptr;
  unsigned int alpn_length = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_length);
  const std::size_t n = std::min<std::size_t>(alpn_length, sizeof state_.alpn - 1);
  if (n > 0) std::memcpy(state_.alpn, alpn, n);
  state_.alpn[n] = '\0';
  return setup_status::ready;
}

setup_status tls_transport::handshake_failed() noexcept {
  const long verified = SSL_get_verify_result(ssl_);
  if (config_.verify && verified != X509_V_OK) {
    ERR_clear_error();
    return fail(failure_kind::tls_verify, X509_verify_cert_error_string(verified));
  }
  const int saved_errno = errno;
  reason_text(failure_.text, saved_errno ? std::strerror(saved_errno)
                                         : "the connection closed during the handshake");
  failure_.kind = failure_kind::tls_handshake;
  return setup_status::failed;
}

io_result tls_transport::io_failure(int n) noexcept {
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return {io_status::would_block, 0};
    case SSL_ERROR_ZERO_RETURN:
      return {io_status::closed, 0};
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      if (errno == ECONNRESET || errno == EPIPE) return {io_status::reset, 0};
      return {errno == 0 ? io_status::closed : io_status::failed, 0};
    default:
      ERR_clear_error();
      return {io_status::failed, 0};
  }
}

}  // namespace

int keep_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* t = static_cast<tls_transport*>(SSL_get_app_data(ssl));
  if (!t) return 0;
  t->keep(session);
  return 1;  // the transport owns the session now
}

std::unique_ptr<transport> make_tls_transport(SSL_CTX* ctx, const tls_client_config& config,
                                              const clock& time) {
  return std::make_unique<tls_transport>(ctx, config, time);
}

}  // namespace punctual::net
