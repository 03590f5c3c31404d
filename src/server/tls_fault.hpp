// Hostile TLS behaviour of the test server (`punctual serve --tls-fault KIND[:after=N]`), for
// testing how a client handles a TLS server that misbehaves during the handshake. The first N
// connections the server accepts handshake normally, so a load generator's connections opened
// before its start succeed and the faults hit its reconnections mid-run; every later one gets
// the fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace punctual::server {

enum class tls_fault_kind : std::uint8_t {
  none,
  garbage_hello,       // the ClientHello is answered with bytes that are not TLS, then close
  stall_handshake,     // the ClientHello is read and never answered; the socket stays open
  close_in_handshake,  // the ServerHello is sent alone, then close
  plaintext_answer,    // a plaintext "HTTP/1.1 400 Bad Request", then close (a plain server)
};

// "garbage-hello", "stall-handshake", "close-in-handshake", "plaintext-answer".
std::string_view tls_fault_name(tls_fault_kind kind);
std::optional<tls_fault_kind> tls_fault_from_name(std::string_view name);

struct tls_fault_spec {
  tls_fault_kind kind = tls_fault_kind::none;
  std::uint64_t after = 0;  // connections accepted before the first faulted one
  friend bool operator==(const tls_fault_spec&, const tls_fault_spec&) = default;
};

// "stall-handshake", "garbage-hello:after=10". Throws std::invalid_argument naming the text.
tls_fault_spec parse_tls_fault(std::string_view text);

// TLS options of the server. TLS is on with a certificate file or a self-signed certificate.
struct tls_options {
  std::string cert_path;  // PEM certificate chain, leaf first
  std::string key_path;   // PEM private key, not encrypted (empty: in the certificate file)
  bool self_signed = false;
  tls_fault_spec fault;

  bool enabled() const { return self_signed || !cert_path.empty(); }
};

// Throws std::invalid_argument when the options contradict each other (both a certificate and
// --tls-self-signed, a key without a certificate, a fault without TLS).
void validate_tls_options(const tls_options& tls);

}  // namespace punctual::server
