// A request in flight. Slots are separate from connections: dispatch, deadlines, accounting and
// the end of a run work on slots, and a connection carries as many as its codec allows (one for
// HTTP/1.1), so a protocol that multiplexes requests changes neither. A slot knows nothing of
// the load model; where its user owns it, request_times::user names it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/request_source.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

struct slot {
  bool busy = false;               // `times` describes a live attempt
  bool keeps_response = false;     // its response is kept whole for the model (response_room)
  bool unwritten = false;          // HTTP/2: framed, waiting for its connection's next write
  std::uint32_t connection = 0;    // the connection that carries it
  std::uint32_t in_flight_at = 0;  // while busy: its place in the worker's in-flight list
  record::request_times times;
  wire_request request;  // its bytes
  // Room for a request the model renders for it, and for its response kept whole (a hybrid
  // step's user data: cookies, captures). Both keep their room from one request to the next.
  std::string room;
  std::string response;
};

}  // namespace punctual::engine
