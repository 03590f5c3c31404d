// The server's TLS identity: a certificate chain and key from PEM files, or an ephemeral key
// and a self-signed certificate made in memory (`serve --tls-self-signed`).
#pragma once

#include <openssl/types.h>

#include <string>

namespace punctual::server {

// The names the self-signed certificate is good for (subjectAltName), and for how long.
inline constexpr const char* self_signed_names = "DNS:localhost,IP:127.0.0.1,IP:::1";
inline constexpr long self_signed_lifetime_seconds = 24 * 60 * 60;

// Puts a fresh P-256 key and a self-signed certificate for self_signed_names, valid from now
// for self_signed_lifetime_seconds, into `ctx`. Throws std::runtime_error if OpenSSL fails.
void use_self_signed(SSL_CTX* ctx);

// Puts the chain of `cert_path` and the key of `key_path` into `ctx`. Throws
// std::invalid_argument (one line, naming the file) when a file cannot be read, holds no PEM
// certificate or no usable key, or the key does not match the certificate.
void use_pem_files(SSL_CTX* ctx, const std::string& cert_path, const std::string& key_path);

// OpenSSL's reason for the oldest queued error ("key values mismatch"), and clears the queue.
std::string openssl_reason();

}  // namespace punctual::server
