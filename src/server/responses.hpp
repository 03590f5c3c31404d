// Every response the test server sends, built once at start so answering never formats.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace punctual::server {

struct response_set {
  std::string ok;           // 200, Content-Length, keep-alive
  std::string ok_close;     // the same with Connection: close
  std::string late;         // "299 Late" (see server_config::mark_late), keep-alive
  std::string late_close;   // the same with Connection: close
  std::string bad_request;  // 400 with Connection: close

  // Fault responses (see fault.hpp).
  std::string garbage;          // not an HTTP status line
  std::string close_delimited;  // 200, no length, no chunking: ends at close
  std::string huge_headers;     // 200 whose header section exceeds 64 KiB
  std::string trickle_head;     // 200 head announcing trickle_body.size() bytes
  std::string trickle_body;     // written one byte per trickle_interval
  std::string continue_;        // 100 Continue, 103 Early Hints, then `ok`
  std::string chunked;          // chunk extensions and a trailer; body "ok\n"
  std::string http10;           // HTTP/1.0 200 with Content-Length, no keep-alive
  std::string unavailable;      // 503, keep-alive
  std::string too_many;         // 429, keep-alive

  static constexpr std::chrono::milliseconds trickle_interval{100};
  // Bigger than the 64 KiB a client may reasonably allow for a header section.
  static constexpr std::size_t huge_header_bytes = 66 * 1024;

  static response_set make(std::size_t body_size);
};

}  // namespace punctual::server
