// The protocol options of `punctual run`: --http 1.1|2|auto, --max-streams and
// --request-id-header, checked against the requests before anything is sent.
#pragma once

#include "cli/run_options.hpp"
#include "run/config.hpp"

namespace punctual::cli {

// Sets config.http, config.max_streams and what TLS offers by ALPN. Refuses (usage_error, exit
// 2) an unknown version, --max-streams without HTTP/2 or with the closed model, --no-keepalive
// with --http 2, and with --http 2 any request (of -H, --requests or --scenario) that carries a
// header only HTTP/1.1 has. Runs once every request of the run is encoded. Returns a note (else
// empty) for --http auto with such a header: it goes only over the connections that speak
// HTTP/1.1.
std::string apply_http_options(const run_options& o, run::config& config);

// Sets config.request_id_header from --request-id-header. Refuses (usage_error, exit 2) a name
// that is not an HTTP token, a header HTTP gives a meaning (Host, Content-Length, Connection...),
// the closed model (it has no schedule) and a header the run's requests already set. Runs once
// the model is built and every request is encoded.
void apply_request_id_header(const run_options& o, run::config& config);

}  // namespace punctual::cli
