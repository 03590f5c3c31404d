// A protocol codec: response bytes in, completed responses out, knowing nothing of sockets or
// time. Requests in flight are numbered slots; the codec says which slot a response belongs to,
// so that a protocol that carries many requests on one connection at once (HTTP/2) changes the
// codec, not the engine's dispatch, deadlines or accounting. HTTP/1.1 carries one at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "http/response_parser.hpp"

namespace punctual::http {

// What a whole response showed.
struct response_end {
  int status = 0;
  bool keep_alive = false;
  bool body_found = true;  // the needle begin() was given was in the body (true without one)
};

// Where the codec hands what it found.
class codec_sink {
 public:
  // A whole response for `slot`.
  virtual void on_response(std::uint32_t slot, const response_end& response) = 0;
  // The connection's bytes broke the protocol: every slot on it has failed.
  virtual void on_protocol_error(parse_error error) = 0;

 protected:
  ~codec_sink() = default;
};

class codec {
 public:
  virtual ~codec() = default;

  // The request in `slot` is on its way: expect its response. HEAD responses have no body. A
  // needle (it outlives the response) is searched for in the body. `keep`, when given, receives
  // the response's bytes (up to max_kept_response; a longer one is cut there).
  virtual void begin(std::uint32_t slot, bool head_request, const body_needle* needle,
                     std::string* keep) noexcept = 0;
  static constexpr std::size_t max_kept_response = 1 << 20;
  // Feeds response bytes; returns how many belonged to responses begun. Bytes beyond them
  // (HTTP/1.1: after the one response expected) are left: the connection is out of step.
  virtual std::size_t feed(const char* data, std::size_t size, codec_sink& sink) = 0;
  // The peer closed the connection: a close-delimited response completes, any other in flight
  // is reported as a protocol error (truncated).
  virtual void finish_on_eof(codec_sink& sink) = 0;
  // Some bytes of the current response have arrived (time to first byte).
  virtual bool started() const noexcept = 0;

  // How many requests one connection carries at once.
  virtual std::uint32_t max_slots() const noexcept = 0;
  // Whether a connection's bytes may wait unread for the worker's next due wake-up (they are
  // dated by their receive stamps). A protocol with its own traffic to answer promptly (HTTP/2's
  // PING and SETTINGS, window updates) refuses.
  virtual bool allows_deferred_reads() const noexcept = 0;
};

std::unique_ptr<codec> make_http1_codec();

}  // namespace punctual::http
