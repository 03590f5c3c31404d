// One generator connection: a transport (plain TCP or TLS) and a protocol codec. States:
// closed -> connecting -> idle <-> busy (busy: it carries a request); any failure goes back to
// closed. Requests can be bound to a connection while it connects (or handshakes): the connect
// time then counts for them. The requests it carries are slots (engine/slot.hpp): one at a time
// for HTTP/1.1, up to the codec's capacity for HTTP/2.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "http/codec.hpp"
#include "net/transport.hpp"
#include "record/outcome.hpp"

namespace punctual::engine {

enum class conn_state : std::uint8_t { closed, connecting, idle, busy };

using nanoseconds = std::chrono::nanoseconds;

struct connection {
  std::unique_ptr<net::transport> transport;
  // The codecs it may speak (--http auto: both, chosen by ALPN at each set-up); `codec` is the
  // one it speaks now.
  std::unique_ptr<http::codec> http1;
  std::unique_ptr<http::codec> h2;
  http::codec* codec = nullptr;
  conn_state state = conn_state::closed;
  // This set-up completed a response (the server speaks the protocol here). A set-up that ends
  // without one, by a failure, counts in `failed_setups`, and the next waits a backoff.
  bool answered = false;
  std::uint32_t failed_setups = 0;  // set-ups in a row that failed before any answer
  record::socket_reason last_failure = record::socket_reason::connect;  // of the last of them
  bool write_blocked = false;  // writability is watched until the request is fully written
  bool flush_pending = false;  // HTTP/2: requests begun this turn wait for one write together
  // The peer's close came with the bytes being read (EPOLLRDHUP): once its last answer is read,
  // the connection takes no new request, which would only meet the close.
  bool peer_closing = false;
  std::chrono::nanoseconds connect_started{};
  std::chrono::nanoseconds retry_at{};  // closed: not reopened before this (the backoff)
  std::uint32_t first_slot = 0;         // its slots: first_slot .. first_slot + slot_count - 1
  std::uint32_t slot_count = 1;
  std::uint32_t in_flight = 0;            // its busy slots
  std::vector<std::uint32_t> free_slots;  // its free slots (a stack; the lowest on top)
  // HTTP/2: slots framed since its last write (slot::unwritten); the next write sends them.
  std::vector<std::uint32_t> unwritten;
  nanoseconds busy_since{};      // a send no later than every request it carries (dates reads)
  std::uint32_t generation = 0;  // counts closes: bytes read before one belong to no request
};

}  // namespace punctual::engine
