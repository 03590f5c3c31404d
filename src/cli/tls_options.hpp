// The https:// options of `punctual run`: trust (--cacert, --insecure), a client certificate
// (--cert, --key) and where to connect (--resolve), checked before anything is sent.
#pragma once

#include "cli/run_options.hpp"
#include "http/url.hpp"
#include "run/config.hpp"

namespace punctual::cli {

// Fills config.tls for an https:// target, refuses TLS options for http:// ones, and checks the
// files (exit 2 with one line, as usage_error).
void apply_tls_options(const run_options& o, const http::url& target, run::config& config);

// The address the last --resolve HOST:PORT:ADDR matching the target names; empty when none
// does. Throws usage_error for a malformed --resolve.
std::string resolved_address(const run_options& o, const http::url& target);

// Where to connect: the target's host, or the address a matching --resolve HOST:PORT:ADDR
// names. Throws usage_error for a malformed --resolve or a name that does not resolve.
net::address connect_address(const run_options& o, const http::url& target);

}  // namespace punctual::cli
