// Fault modes of the test server (`punctual serve --fault KIND:FRACTION`): each request
// independently gets at most one fault, drawn from a seeded xoshiro256**, so a seed and the
// per-thread request order reproduce the same faults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace punctual::server {

enum class fault_kind : std::uint8_t {
  none,
  reset,            // SO_LINGER 0 + close after N bytes of the response
  garbage,          // a status line that is not HTTP, then close
  close_delimited,  // 200 with neither Content-Length nor chunking: the body ends at close
  huge_headers,     // a 200 whose header section is over 64 KiB
  trickle,          // Content-Length 5, the body written 1 byte every 100 ms
  continue_,        // 100 Continue and 103 Early Hints before the 200
  chunked,          // chunked body with chunk extensions and a trailer
  http10,           // HTTP/1.0 200 with Content-Length, no keep-alive, then close
  close_after,      // an ordinary 200 (no Connection: close), then close
  never,            // the request is never answered; the connection stays open
  unavailable,      // "503": 503 Service Unavailable, keep-alive (what retries are tested with)
  too_many,         // "429": 429 Too Many Requests, keep-alive
};

inline constexpr std::size_t fault_kind_count = 13;

// The CLI name: "reset", "garbage", "close-delimited", ..., "close-after", "never", "503", "429".
std::string_view fault_name(fault_kind kind);
std::optional<fault_kind> fault_from_name(std::string_view name);

struct fault_spec {
  fault_kind kind = fault_kind::none;
  double fraction = 0;                // of all requests, in [0, 1]
  std::size_t reset_after_bytes = 0;  // reset only: "reset=N"
  friend bool operator==(const fault_spec&, const fault_spec&) = default;
};

// Faults of a whole connection, drawn once as it is accepted, before any request:
// "banner:F" writes a line at once (as an SMTP or SSH server greets), "reset-at-accept:F" resets
// it (SO_LINGER 0, then close). Their fractions add up to at most 1, apart from the requests'.
enum class connection_fault : std::uint8_t { none, banner, reset_at_accept };

struct connection_fault_spec {
  connection_fault kind = connection_fault::none;
  double fraction = 0;  // of all accepted connections, in [0, 1]
  friend bool operator==(const connection_fault_spec&, const connection_fault_spec&) = default;
};

// A connection fault's text, or nullopt when `text` names no connection fault (it may name a
// request's). Throws std::invalid_argument for a bad fraction.
std::optional<connection_fault_spec> parse_connection_fault(std::string_view text);
void validate_connection_faults(const std::vector<connection_fault_spec>& faults);

// "reset=10:0.1", "garbage:0.05". Throws std::invalid_argument naming the text.
fault_spec parse_fault(std::string_view text);
// Throws std::invalid_argument when a fraction is outside [0, 1], a kind repeats or the
// fractions add up to more than 1.
void validate_faults(const std::vector<fault_spec>& faults);

}  // namespace punctual::server
