// A request in flight. Slots are separate from connections: dispatch, deadlines, accounting and
// the end of a run work on slots, and a connection carries as many as its codec allows (one for
// HTTP/1.1), so a protocol that multiplexes requests changes neither.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/request_source.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

struct slot {
  bool busy = false;             // `times` describes a live attempt
  std::uint32_t connection = 0;  // the connection that carries it
  record::request_times times;
  wire_request request;      // its bytes
  // A hybrid user's step: the request rendered with the user's values, and the response kept
  // whole for its captures. Both keep their room from one request to the next.
  std::string rendered;
  std::string response;
  bool keeps_response = false;
  std::uint32_t in_flight_at = 0;  // per_user: its place in worker::in_flight_ while busy
  // The closed model: each slot is a user, which sends its next request this long after its
  // last one ended (think time).
  std::chrono::nanoseconds next_send{};
};

}  // namespace punctual::engine
