// The client side's TLS context: trust, the client certificate, ALPN and versions, and the
// session cache that lets a reconnecting connection resume.
#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fstream>
#include <stdexcept>

#include "net/tls.hpp"
#include "net/tls_internal.hpp"

namespace punctual::net {
namespace {

// ALPN in wire format: a length byte, then the name.
constexpr unsigned char alpn_http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr unsigned char alpn_h2[] = {2, 'h', '2'};
constexpr unsigned char alpn_h2_http11[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

std::string last_error_text(const char* fallback) {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return fallback;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  // "error:0A000086:SSL routines::certificate verify failed": keep the reason only.
  std::string text = buf;
  const auto colon = text.rfind(':');
  return colon == std::string::npos ? text : text.substr(colon + 1);
}

bool readable(const std::string& path) {
  return std::ifstream(path).good();
}

// Fails with one line; the context is freed by the caller's holder.
std::optional<std::string> configure(SSL_CTX* ctx, const tls_client_config& c) {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Servers often close without close_notify (a close-delimited response among them): treat
  // that as the end of the stream, as plain TCP would.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  switch (c.alpn) {
    case tls_client_config::alpn_offer::http1:
      SSL_CTX_set_alpn_protos(ctx, alpn_http11, sizeof alpn_http11);
      break;
    case tls_client_config::alpn_offer::h2:
      SSL_CTX_set_alpn_protos(ctx, alpn_h2, sizeof alpn_h2);
      break;
    case tls_client_config::alpn_offer::h2_or_http1:
      SSL_CTX_set_alpn_protos(ctx, alpn_h2_http11, sizeof alpn_h2_http11);
      break;
  }
  // Read what the socket holds in one recvmsg, not a record header and its body apart: half the
  // system calls, and a short read then means the socket is drained.
  SSL_CTX_set_read_ahead(ctx, 1);
  if (c.verify) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_set_default_verify_paths(ctx) != 1)
      return "--cacert: cannot load the system trust store";
  }
  if (!c.ca_file.empty()) {
    if (!readable(c.ca_file)) return "--cacert: cannot read '" + c.ca_file + "'";
    if (SSL_CTX_load_verify_locations(ctx, c.ca_file.c_str(), nullptr) != 1) {
      return "--cacert: '" + c.ca_file + "' holds no PEM certificate (" +
             last_error_text("unreadable") + ")";
    }
  }
  if (!c.cert_file.empty()) {
    if (!readable(c.cert_file)) return "--cert: cannot read '" + c.cert_file + "'";
    if (!readable(c.key_file)) return "--key: cannot read '" + c.key_file + "'";
    if (SSL_CTX_use_certificate_chain_file(ctx, c.cert_file.c_str()) != 1) {
      return "--cert: '" + c.cert_file + "' is not a PEM certificate (" +
             last_error_text("unreadable") + ")";
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, c.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      return "--key: '" + c.key_file + "' is not a PEM private key (" +
             last_error_text("unreadable") + ")";
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
      return "--key: '" + c.key_file + "' does not match the certificate in '" + c.cert_file + "'";
    }
  }
  // Sessions are kept by each connection (the new-session callback), not in a shared cache, so
  // a reconnect resumes its own connection's last session.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, keep_new_session);
  return std::nullopt;
}

struct ctx_holder {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ~ctx_holder() { SSL_CTX_free(ctx); }
};

class tls_factory final : public transport_factory {
 public:
  tls_factory(const tls_client_config& config, const clock& time) : config_(config), clock_(time) {
    if (!holder_.ctx)
      throw std::runtime_error("TLS: " + last_error_text("cannot create a context"));
    if (auto error = configure(holder_.ctx, config_)) throw std::runtime_error(*error);
  }
  std::unique_ptr<transport> make() override {
    return make_tls_transport(holder_.ctx, config_, clock_);
  }

 private:
  tls_client_config config_;
  const clock& clock_;
  ctx_holder holder_;
};

}  // namespace

bool is_address_literal(const std::string& host) noexcept {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::optional<std::string> check_tls_client(const tls_client_config& config) {
  ctx_holder holder;
  if (!holder.ctx) return "TLS: " + last_error_text("cannot create a context");
  return configure(holder.ctx, config);
}

std::unique_ptr<transport_factory> tls_transport_factory(const tls_client_config& config,
                                                         const clock& time) {
  return std::make_unique<tls_factory>(config, time);
}

}  // namespace punctual::net
