// TLS for the generator's connections (OpenSSL 3): a transport that runs TLS over a
// non-blocking TCP socket, read through a BIO of our own that calls recvmsg and keeps the
// kernel's receive stamp, so a response's completion is still when its last record's packet
// arrived. This kernel has no kernel TLS to stamp decrypted bytes for us.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "net/transport.hpp"

namespace punctual::net {

struct tls_client_config {
  bool enabled = false;
  bool verify = true;       // false: --insecure
  std::string server_name;  // SNI (for a name, not an address) and what the certificate must name
  std::string ca_file;      // --cacert: trusted beside the system store
  std::string cert_file;    // --cert and --key: a client certificate (mutual TLS)
  std::string key_file;
};

// Checks the files and settings before anything is sent: one line naming the problem (an
// unreadable or malformed CA file, a certificate and key that do not match), or nothing.
std::optional<std::string> check_tls_client(const tls_client_config& config);

// A factory whose transports share one TLS context. Throws std::runtime_error with one line
// when the context cannot be built (check_tls_client() first gives users the exit-2 message).
std::unique_ptr<transport_factory> tls_transport_factory(const tls_client_config& config);

}  // namespace punctual::net
