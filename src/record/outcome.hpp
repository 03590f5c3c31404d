// The vocabulary of accounting: one outcome per planned request, socket-error reasons, and the
// latency views punctual records (docs/design.md, "Terms").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace punctual::record {

// `skipped` belongs to the hybrid model (a step its session never started); the other models
// report it as 0, so every report has the same seven outcomes.
enum class outcome : std::uint8_t {
  ok,
  http_error,
  socket_error,
  timeout,
  dropped,
  skipped,
  unfinished
};
inline constexpr std::size_t outcome_count = 7;
inline constexpr std::array<std::string_view, outcome_count> outcome_names{
    "ok", "http_error", "socket_error", "timeout", "dropped", "skipped", "unfinished"};

// The first six are the named reasons every report lists; the rest are documented extras
// (docs/report.schema.json): header_too_large is a parse error named apart; no_ports and no_fds
// are the generator running out of local resources (ephemeral ports, file descriptors);
// tls_handshake and tls_verify are TLS set-ups that failed mid-run; h2_rst is an HTTP/2 stream
// the server reset, goaway one it never processed before its GOAWAY (sent again once already),
// h2_protocol an HTTP/2 connection whose frames broke the protocol. All of them together sum to
// the socket_error outcome.
enum class socket_reason : std::uint8_t {
  connect,
  read,
  write,
  reset,
  closed,
  parse,
  header_too_large,
  no_ports,
  no_fds,
  tls_handshake,
  tls_verify,
  h2_rst,
  goaway,
  h2_protocol,
};
inline constexpr std::size_t socket_reason_count = 14;
inline constexpr std::size_t named_socket_reasons = 6;
inline constexpr std::array<std::string_view, socket_reason_count> socket_reason_names{
    "connect",  "read",   "write",         "reset",      "closed", "parse",  "header_too_large",
    "no_ports", "no_fds", "tls_handshake", "tls_verify", "h2_rst", "goaway", "h2_protocol"};

// Why an attempt failed in a way a retry policy may retry (--retry-on).
enum class retry_cause : std::uint8_t { status_5xx, status_429, timeout, reset, connect };
inline constexpr std::size_t retry_cause_count = 5;
inline constexpr std::array<std::string_view, retry_cause_count> retry_cause_names{
    "5xx", "429", "timeout", "reset", "connect"};

enum class view : std::uint8_t {
  response_time,
  response_time_ok,
  service_time,
  time_to_first_byte,
  send_lag,
  queue_wait,
  connect_time,
  tls_handshake,  // per TLS handshake (those before the start too); TLS runs only
};
inline constexpr std::size_t view_count = 8;
inline constexpr std::array<std::string_view, view_count> view_names{
    "response_time", "response_time_ok", "service_time", "time_to_first_byte",
    "send_lag",      "queue_wait",       "connect_time", "tls_handshake"};

constexpr std::size_t index(outcome o) noexcept {
  return static_cast<std::size_t>(o);
}
constexpr std::size_t index(socket_reason r) noexcept {
  return static_cast<std::size_t>(r);
}
constexpr std::size_t index(retry_cause c) noexcept {
  return static_cast<std::size_t>(c);
}
constexpr std::size_t index(view v) noexcept {
  return static_cast<std::size_t>(v);
}

// Whether a run reports view v: the TLS handshake view only when it spoke TLS.
constexpr bool reported(view v, bool tls) noexcept {
  return v != view::tls_handshake || tls;
}

}  // namespace punctual::record
