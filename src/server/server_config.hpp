// Options of `punctual serve`, the stalling test server. Durations are offsets from the
// instant the server starts (its monotonic origin), so a stall plan is reproducible.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/fault.hpp"
#include "server/tls_fault.hpp"

namespace punctual::server {

// One window [start, start + length) measured from server start.
struct stall_window {
  std::chrono::nanoseconds start{0};
  std::chrono::nanoseconds length{0};

  std::chrono::nanoseconds end() const { return start + length; }
  friend bool operator==(const stall_window&, const stall_window&) = default;
};

enum class service_distribution { fixed, exponential };

struct server_config {
  std::string host = "127.0.0.1";  // "127.0.0.1", "::1", "localhost" or any numeric address
  std::uint16_t port = 0;          // 0 picks a free port; start() returns the bound one
  int threads = 1;                 // one epoll loop per thread

  // Delay before a response is due (arrival + service time); not CPU burn.
  std::chrono::nanoseconds service_time{0};
  service_distribution service = service_distribution::fixed;  // exponential: mean service_time
  std::uint64_t seed = 1;
  // CPU burned on the serving thread for each request (0 = none): the thread answers at most
  // 1 / cpu_per_request requests per second, so the server's capacity is threads / it.
  std::chrono::nanoseconds cpu_per_request{0};

  std::size_t body_size = 3;  // bytes of the 200 body; 3 is "ok\n"

  // Periodic stall: the last stall_length of every stall_period (both 0 = none).
  std::chrono::nanoseconds stall_length{0};
  std::chrono::nanoseconds stall_period{0};
  // Explicit windows (may be combined with the periodic ones; overlaps merge).
  std::vector<stall_window> stall_at;

  // Each request independently gets at most one of these (fractions add up to <= 1).
  std::vector<fault_spec> faults;
  std::vector<connection_fault_spec> connection_faults;
  // Close keep-alive connections that have been idle this long (0 = never).
  std::chrono::nanoseconds idle_close{0};
  // Responses due this long or more after their request arrived are sent as
  // "299 Late" (0 = off). With a client timeout below it, a 299 can never be on time, so a
  // client that counts one has given a late response to another request.
  std::chrono::nanoseconds mark_late{0};

  // HTTPS instead of plain HTTP, and the hostile handshakes (tls_fault.hpp).
  tls_options tls;

  // HTTP/2 instead of HTTP/1.1 (h2c with prior knowledge, or h2 by ALPN over TLS), with this
  // SETTINGS_MAX_CONCURRENT_STREAMS. Faults are HTTP/1.1 byte tricks: refused with it.
  bool http2 = false;
  std::uint32_t max_streams = 100;

  std::string stall_log_path;    // empty = no stall log
  std::string arrival_log_path;  // empty = no arrival log
  // The request header whose value each arrival entry keeps (a third column); empty = none.
  std::string arrival_log_id_header;

  std::chrono::nanoseconds duration{0};  // 0 = run until stop()
};

}  // namespace punctual::server
