// TLS for the generator's connections (OpenSSL 3): a transport that runs TLS over a
// non-blocking TCP socket, read through a BIO of our own that calls recvmsg and keeps the
// kernel's receive stamp, so a response's completion is still when its last record's packet
// arrived. This kernel has no kernel TLS to stamp decrypted bytes for us.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "net/clock.hpp"
#include "net/transport.hpp"

namespace punctual::net {

struct tls_client_config {
  bool enabled = false;
  bool verify = true;       // false: --insecure
  std::string server_name;  // SNI (for a name, not an address) and what the certificate must name
  std::string ca_file;      // --cacert: trusted beside the system store
  std::string cert_file;    // --cert and --key: a client certificate (mutual TLS)
  std::string key_file;
  // What ALPN offers: http/1.1, h2 alone (--http 2), or h2 then http/1.1 (--http auto).
  enum class alpn_offer { http1, h2, h2_or_http1 } alpn = alpn_offer::http1;
};

// Checks the files and settings before anything is sent: one line naming the problem (an
// unreadable or malformed CA file, a certificate and key that do not match), or nothing.
std::optional<std::string> check_tls_client(const tls_client_config& config);

// Where an allocator gets and returns memory.
struct allocator_functions {
  void* (*malloc)(std::size_t) = nullptr;
  void* (*realloc)(void*, std::size_t) = nullptr;
  void (*free)(void*) = nullptr;
};

// Routes OpenSSL's allocations through a per-thread cache of small blocks, so that reading and
// writing records allocates nothing once the cache is warm (OpenSSL 3.0 allocates small blocks
// per record). Must run before OpenSSL allocates anything: first thing in the program. `next`:
// where the cache gets memory (malloc/realloc/free unless given; the allocation test passes
// counting ones). False when it is too late.
bool install_tls_allocator(const allocator_functions& next = {}) noexcept;

// A factory whose transports share one TLS context and time their handshakes on `time`. Throws
// std::runtime_error with one line when the context cannot be built (check_tls_client() first
// gives users the exit-2 message).
std::unique_ptr<transport_factory> tls_transport_factory(const tls_client_config& config,
                                                         const clock& time);

}  // namespace punctual::net
