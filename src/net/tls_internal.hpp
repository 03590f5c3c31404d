// Shared by the TLS context and the TLS transport; not part of the net unit's interface.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "net/clock.hpp"
#include "net/tls.hpp"

namespace punctual::net {

// The context's new-session callback: the connection keeps its latest session to resume with.
int keep_new_session(SSL* ssl, SSL_SESSION* session);
std::unique_ptr<transport> make_tls_transport(SSL_CTX* ctx, const tls_client_config& config,
                                              const clock& time);
bool is_address_literal(const std::string& host) noexcept;

}  // namespace punctual::net
