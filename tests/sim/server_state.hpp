// What the scripted server keeps per connection; shared by its HTTP/1.1 and HTTP/2 parts.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <map>
#include <string>

#include "server.hpp"

namespace punctual::sim {

struct scripted_server::conn_state {
  scripted_server* server = nullptr;
  connection* conn = nullptr;
  bool gone = false;  // closed or reset by either side
  std::uint32_t requests = 0;
  // HTTP/1.1
  std::string in;         // bytes not yet parsed
  nanoseconds free_at{};  // when the last answer began (answers go in order)
  // HTTP/2
  nghttp2_session* session = nullptr;
  std::uint64_t h2_out = 0;      // bytes mem_send has returned
  std::string frame_head;        // the part of a frame header not yet complete
  std::uint64_t frame_left = 0;  // payload bytes of the current frame still to come
  bool flush_pending = false;
  bool goaway_sent = false;
  struct stream {
    std::uint64_t sim_id = 0;
    std::size_t log = ~std::size_t{0};  // its entry in the server's log
    std::size_t body_sent = 0;
    std::string head;  // its header fields so far, as "name: value" lines
  };
  std::map<std::int32_t, stream> streams;

  ~conn_state() {
    if (session) nghttp2_session_del(session);
  }
};

}  // namespace punctual::sim
