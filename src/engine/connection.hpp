// One generator connection: a transport (plain TCP or TLS) and a protocol codec. States:
// closed -> connecting -> idle <-> busy; any failure goes back to closed. A request can be bound
// to a connection while it connects (or handshakes): the connect time then counts for that
// request. The requests it carries are slots (engine/slot.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "http/codec.hpp"
#include "net/transport.hpp"

namespace punctual::engine {

enum class conn_state : std::uint8_t { closed, connecting, idle, busy };

struct connection {
  std::unique_ptr<net::transport> transport;
  std::unique_ptr<http::codec> codec;
  conn_state state = conn_state::closed;
  bool last_connect_failed = false;
  bool write_blocked = false;  // writability is watched until the request is fully written
  std::chrono::nanoseconds connect_started{};
  std::chrono::nanoseconds retry_at{};   // closed after a failed connect: not before this
  std::chrono::nanoseconds next_send{};  // closed model: when this connection sends next
  std::uint32_t first_slot = 0;  // its slots: first_slot .. first_slot + slot_count - 1
  std::uint32_t slot_count = 1;  // codec->max_slots()
};

}  // namespace punctual::engine
