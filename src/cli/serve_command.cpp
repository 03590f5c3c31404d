// `punctual serve`: runs the stalling test server until --duration ends or SIGINT/SIGTERM.
#include "cli/serve_command.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/units.hpp"
#include "http/text.hpp"
#include "server/server.hpp"

namespace punctual::cli {

namespace {

using std::chrono::nanoseconds;

void parse_service_time(const std::string& text, server::server_config& config) {
  std::string_view value = text;
  if (value.substr(0, 4) == "exp:") {
    config.service = server::service_distribution::exponential;
    value.remove_prefix(4);
  }
  config.service_time = parse_duration("--service-time", value);
}

// "2s/10s": the last 2 s of every 10 s.
void parse_stall(const std::string& text, server::server_config& config) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) {
    throw usage_error("--stall: expected LEN/PERIOD such as 2s/10s, got '" + text + "'");
  }
  config.stall_length = parse_duration("--stall", std::string_view(text).substr(0, slash));
  config.stall_period = parse_duration("--stall", std::string_view(text).substr(slash + 1));
  if (config.stall_length.count() <= 0 || config.stall_period <= config.stall_length) {
    throw usage_error("--stall: need 0 < LEN < PERIOD, got '" + text + "'");
  }
}

// "3s:1s,7s:500ms": windows START:LENGTH from server start.
void parse_stall_at(const std::string& text, server::server_config& config) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      throw usage_error("--stall-at: expected START:LENGTH[,...] such as 3s:1s, got '" + text +
                        "'");
    }
    server::stall_window w;
    w.start = parse_duration("--stall-at", item.substr(0, colon));
    w.length = parse_duration("--stall-at", item.substr(colon + 1));
    if (w.length.count() <= 0) throw usage_error("--stall-at: a window needs a length > 0");
    config.stall_at.push_back(w);
  }
}

void parse_faults(const std::vector<std::string>& texts, server::server_config& config) {
  try {
    for (const auto& text : texts) {
      if (auto f = server::parse_connection_fault(text)) {
        config.connection_faults.push_back(*f);
      } else {
        config.faults.push_back(server::parse_fault(text));
      }
    }
    server::validate_faults(config.faults);
    server::validate_connection_faults(config.connection_faults);
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
}

// --arrival-log-id-header NAME: a header name, logged only where there is a log.
void check_id_header(const server::server_config& config) {
  const std::string& name = config.arrival_log_id_header;
  if (name.empty()) return;
  if (!std::all_of(name.begin(), name.end(), http::is_token_char)) {
    throw usage_error("--arrival-log-id-header " + http::quoted(name) +
                      ": expected a header name such as x-request-id");
  }
  if (config.arrival_log_path.empty()) {
    throw usage_error("--arrival-log-id-header: needs --arrival-log, where its values go");
  }
}

server::server_config finish_config(serve_options& o) {
  if (!o.cert_out.empty() && !o.config.tls.enabled()) {
    throw usage_error("--cert-out " + o.cert_out + ": needs --tls-self-signed or --tls-cert");
  }
  check_id_header(o.config);
  // Faults are HTTP/1.1 byte tricks (a garbled status line, a close-delimited body...).
  if (o.config.http2 && !o.fault_texts.empty()) {
    throw usage_error("--fault " + o.fault_texts.front() + " is not available with --http2");
  }
  parse_faults(o.fault_texts, o.config);
  try {
    if (!o.tls_fault_text.empty()) o.config.tls.fault = server::parse_tls_fault(o.tls_fault_text);
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  if (!o.idle_close_text.empty()) {
    o.config.idle_close = parse_duration("--idle-close", o.idle_close_text);
    if (o.config.idle_close.count() <= 0) throw usage_error("--idle-close: must be > 0");
  }
  if (!o.mark_late_text.empty()) {
    o.config.mark_late = parse_duration("--mark-late", o.mark_late_text);
    if (o.config.mark_late.count() <= 0) throw usage_error("--mark-late: must be > 0");
  }
  if (!o.cpu_text.empty()) {
    o.config.cpu_per_request = parse_duration("--cpu-per-request", o.cpu_text);
    if (o.config.cpu_per_request.count() <= 0) throw usage_error("--cpu-per-request: must be > 0");
  }
  if (!o.service_text.empty()) parse_service_time(o.service_text, o.config);
  if (!o.stall_text.empty()) parse_stall(o.stall_text, o.config);
  if (!o.stall_at_text.empty()) parse_stall_at(o.stall_at_text, o.config);
  if (!o.duration_text.empty()) {
    o.config.duration = parse_duration("--duration", o.duration_text);
    if (o.config.duration.count() <= 0) throw usage_error("--duration: must be > 0");
  }
  return o.config;
}

}  // namespace

// Signals are taken synchronously (sigtimedwait) so stopping runs in a normal thread context.
int serve_command(serve_options& options) {
  const server::server_config config = finish_config(options);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  // Blocked before the threads start, so they inherit the mask and only this thread takes them.
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::unique_ptr<server::server> srv;
  try {
    srv = std::make_unique<server::server>(config);
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  try {
    srv->start();
  } catch (const std::runtime_error& e) {
    throw run_error(e.what());
  }
  if (!options.cert_out.empty())
    write_file_atomically(options.cert_out, srv->tls()->certificate_pem());
  if (const server::tls_context* tls = srv->tls(); tls && tls->self_signed()) {
    // Lets a client pin the certificate it cannot otherwise verify; printed before the
    // "listening on" line, which callers wait for.
    std::printf("tls: self-signed certificate, SHA-256 fingerprint %s\n",
                tls->fingerprint().c_str());
  }
  std::printf("listening on %s\n", srv->address().c_str());
  std::fflush(stdout);
  bool interrupted = false;
  const timespec poll{0, 50'000'000};
  while (!srv->wait_for(nanoseconds{0})) {
    if (sigtimedwait(&stop_signals, nullptr, &poll) > 0) {
      interrupted = true;
      srv->stop();
    }
  }
  srv->wait();
  return interrupted ? exit_interrupted : exit_ok;
}

}  // namespace punctual::cli
