// A request in flight. Slots are separate from connections: dispatch, deadlines, accounting and
// the end of a run work on slots, and a connection carries as many as its codec allows (one for
// HTTP/1.1), so a protocol that multiplexes requests changes neither.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/request_source.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

struct slot {
  bool busy = false;             // `times` describes a live attempt
  std::uint32_t connection = 0;  // the connection that carries it
  record::request_times times;
  wire_request request;      // its bytes
  std::size_t written = 0;   // how many of them are written
};

}  // namespace punctual::engine
