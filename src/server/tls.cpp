#include "server/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <stdexcept>

#include "schedule/prng.hpp"
#include "server/tls_certificate.hpp"

namespace punctual::server {

namespace {

// ---- the socket BIO ------------------------------------------------------------------------

int socket_of(BIO* bio) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio)));
}

bool retryable(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(socket_of(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && retryable(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::recv(socket_of(bio), data, static_cast<std::size_t>(size), 0);
  // OpenSSL tells a FIN from a failed read by BIO_eof(); see bio_ctrl.
  if (n == 0) BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
  if (n < 0 && retryable(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

long bio_ctrl(BIO* bio, int command, long, void*) {
  switch (command) {
    case BIO_CTRL_FLUSH:
      return 1;  // nothing is buffered here
    case BIO_CTRL_EOF:
      return BIO_test_flags(bio, BIO_FLAGS_IN_EOF) != 0;
    default:
      return 0;
  }
}

// Made once for the process; null if OpenSSL could not, and then no BIO can be made (a worker
// closes the connection rather than throw).
const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = []() -> BIO_METHOD* {
    const int index = BIO_get_new_index();
    BIO_METHOD* m =
        index < 0 ? nullptr : BIO_meth_new(index | BIO_TYPE_SOURCE_SINK, "punctual socket");
    if (!m || BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_read(m, bio_read) != 1 ||
        BIO_meth_set_ctrl(m, bio_ctrl) != 1) {
      BIO_meth_free(m);
      return nullptr;
    }
    return m;
  }();
  return method;
}

// ---- the context ---------------------------------------------------------------------------

// The one protocol the server speaks, in ALPN's wire format.
const unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
const unsigned char alpn_h2[] = {2, 'h', '2'};

// Only one protocol is spoken (`spoken`: alpn_http11 or alpn_h2); a client that offers no
// ALPN, or only other protocols, is served without ALPN rather than refused, as most HTTP/1.1
// servers do.
int select_alpn(SSL*, const unsigned char** out, unsigned char* out_size, const unsigned char* in,
                unsigned int in_size, void* spoken) {
  const auto* protocol = static_cast<const unsigned char*>(spoken);
  unsigned char* chosen = nullptr;
  unsigned char chosen_size = 0;
  if (SSL_select_next_proto(&chosen, &chosen_size, protocol, 1u + protocol[0], in, in_size) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = chosen;
  *out_size = chosen_size;
  return SSL_TLSEXT_ERR_OK;
}

SSL_CTX* new_server_context(bool http2) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) throw std::runtime_error("cannot make the TLS context: " + openssl_reason());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  // A client's half-close (FIN without close_notify) reads as the end of its stream, as it
  // does over plain TCP, and the responses still owed are written.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
  // A write is retried from wherever the connection's output buffer now lives, and may be
  // longer than the one that was cut short: responses are appended while one is pending.
  // AUTO_RETRY: a read goes on past non-application records until the socket is empty, which
  // the edge-triggered loop relies on.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_AUTO_RETRY);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  static const unsigned char id_context[] = "punctual serve";
  SSL_CTX_set_session_id_context(ctx, id_context, sizeof id_context - 1);
  SSL_CTX_set_alpn_select_cb(ctx, select_alpn,
                             const_cast<unsigned char*>(http2 ? alpn_h2 : alpn_http11));
  return ctx;
}

std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!bio || PEM_write_bio_X509(bio, cert) != 1) {
    BIO_free(bio);
    throw std::runtime_error("cannot write the certificate as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return pem;
}

// Random-looking, reproducible, and never the start of a TLS record: the first byte is no
// record type (20-24) and the second no TLS major version (3).
std::string make_garbage() {
  schedule::xoshiro256ss rng(0x6761726261676521ULL);
  std::string bytes(512, '\0');
  for (char& b : bytes) b = static_cast<char>(rng.next() >> 56);
  bytes[0] = static_cast<char>(0xc0 | (static_cast<unsigned char>(bytes[0]) & 0x3f));
  if (bytes[1] == 3) bytes[1] = 0x7f;
  return bytes;
}

}  // namespace

BIO* new_socket_bio(int fd) {
  const BIO_METHOD* method = socket_method();
  BIO* bio = method ? BIO_new(method) : nullptr;
  if (!bio) return nullptr;
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  BIO_set_init(bio, 1);
  return bio;
}

std::string sha256_fingerprint(const X509* certificate) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (X509_digest(certificate, EVP_sha256(), digest, &size) != 1) {
    throw std::runtime_error("cannot hash the certificate");
  }
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    if (i > 0) out += ':';
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 0xf];
  }
  return out;
}

tls_context::tls_context(const tls_options& options, bool http2)
    : ctx_(new_server_context(http2)),
      self_signed_(options.self_signed),
      fault_(options.fault),
      garbage_(make_garbage()) {
  try {
    if (options.self_signed) {
      use_self_signed(ctx_);
    } else {
      use_pem_files(ctx_, options.cert_path,
                    options.key_path.empty() ? options.cert_path : options.key_path);
    }
    X509* leaf = SSL_CTX_get0_certificate(ctx_);
    if (!leaf) throw std::invalid_argument("--tls-cert: no certificate loaded");
    certificate_pem_ = to_pem(leaf);
    fingerprint_ = sha256_fingerprint(leaf);
  } catch (...) {
    SSL_CTX_free(ctx_);
    throw;
  }
}

tls_context::~tls_context() {
  SSL_CTX_free(ctx_);
}

tls_fault_kind tls_context::next_connection_fault() {
  if (fault_.kind == tls_fault_kind::none) return tls_fault_kind::none;
  const std::uint64_t index = accepted_.fetch_add(1, std::memory_order_relaxed);
  return index < fault_.after ? tls_fault_kind::none : fault_.kind;
}

// Runs a throw-away server handshake on memory BIOs: the whole first flight lands in `out`,
// and only its first record is kept.
std::string tls_context::first_server_record(std::string_view hello) const {
  SSL* ssl = SSL_new(ctx_);
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (!ssl || !in || !out) {
    SSL_free(ssl);
    BIO_free(in);
    BIO_free(out);
    return {};
  }
  SSL_set_bio(ssl, in, out);  // the SSL owns both from here
  SSL_set_accept_state(ssl);
  BIO_write(in, hello.data(), static_cast<int>(std::min<std::size_t>(hello.size(), INT_MAX)));
  SSL_do_handshake(ssl);
  ERR_clear_error();
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::string record;
  if (size >= 5) {
    const auto* b = reinterpret_cast<const unsigned char*>(data);
    const std::size_t length = 5 + ((std::size_t{b[3]} << 8) | b[4]);
    record.assign(data, std::min(length, static_cast<std::size_t>(size)));
  }
  SSL_free(ssl);
  return record;
}

// ---- one connection ------------------------------------------------------------------------

std::unique_ptr<tls_session> tls_session::open(SSL_CTX* ctx, int fd) {
  SSL* ssl = SSL_new(ctx);
  BIO* bio = ssl ? new_socket_bio(fd) : nullptr;
  if (!bio) {
    SSL_free(ssl);
    ERR_clear_error();
    return nullptr;
  }
  SSL_set_bio(ssl, bio, bio);
  SSL_set_accept_state(ssl);
  return std::unique_ptr<tls_session>(new tls_session(ssl));
}

tls_session::~tls_session() {
  SSL_free(ssl_);
}

tls_session::step tls_session::handshake() {
  if (done_) return step::done;
  if (failed_) return step::failed;
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    done_ = true;
    return step::done;
  }
  const int error = SSL_get_error(ssl_, ret);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return step::pending;
  failed_ = true;
  ERR_clear_error();
  return step::failed;
}

ssize_t tls_session::failed_io(int ret) {
  const int saved = errno;
  const int error = SSL_get_error(ssl_, ret);
  ERR_clear_error();
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
    errno = EAGAIN;
    return -1;
  }
  if (error == SSL_ERROR_ZERO_RETURN) return 0;
  failed_ = true;
  errno = error == SSL_ERROR_SYSCALL && saved != 0 && !retryable(saved) ? saved : EPROTO;
  return -1;
}

ssize_t tls_session::read(char* buffer, std::size_t size) {
  ERR_clear_error();
  std::size_t n = 0;
  const int ret = SSL_read_ex(ssl_, buffer, size, &n);
  if (ret == 1) return static_cast<ssize_t>(n);
  return failed_io(ret);
}

ssize_t tls_session::write(const char* data, std::size_t size) {
  ERR_clear_error();
  std::size_t n = 0;
  const int ret = SSL_write_ex(ssl_, data, size, &n);
  if (ret == 1) return static_cast<ssize_t>(n);
  return failed_io(ret);
}

void tls_session::close_notify() {
  if (!done_ || failed_) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
}

}  // namespace punctual::server
