// One generator connection. States: closed -> connecting -> idle <-> busy; any failure goes back
// to closed. A request can be bound to a connection while it connects: the connect time then
// counts for that request, as docs/design.md requires.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "http/response_parser.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

enum class conn_state : std::uint8_t { closed, connecting, idle, busy };

struct connection {
  int fd = -1;
  conn_state state = conn_state::closed;
  bool has_request = false;  // `times` describes a live request
  bool last_connect_failed = false;
  bool write_blocked = false;  // EPOLLOUT is armed until the request is fully written
  record::request_times times;
  std::size_t written = 0;  // bytes of the request written so far
  std::chrono::nanoseconds connect_started{};
  std::chrono::nanoseconds retry_at{};   // closed after a failed connect: not before this
  std::chrono::nanoseconds next_send{};  // closed model: when this connection sends next
  http::response_parser parser;
};

}  // namespace punctual::engine
