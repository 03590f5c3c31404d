// `punctual serve`: the stalling test server, until --duration ends or SIGINT/SIGTERM.
#pragma once

#include <string>
#include <vector>

#include "server/server_config.hpp"

namespace punctual::cli {

// The option values as typed; serve_command() checks them and completes `config`.
struct serve_options {
  server::server_config config;
  std::string service_text;
  std::string stall_text;
  std::string stall_at_text;
  std::string duration_text;
  std::vector<std::string> fault_texts;
  std::string idle_close_text;
  std::string mark_late_text;
  std::string cpu_text;  // --cpu-per-request
  std::string tls_fault_text;
  std::string cert_out;  // --cert-out FILE: the served certificate, as PEM, for --cacert
};

int serve_command(serve_options& options);

}  // namespace punctual::cli
