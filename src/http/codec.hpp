// A protocol codec: requests in, bytes out; bytes in, completions out. It knows nothing of
// sockets or time. Requests in flight are numbered slots (0 .. the connection's slot count - 1);
// the codec says which slot a response belongs to, so that a protocol that carries many
// requests on one connection at once (HTTP/2) changes the codec, not the engine's dispatch,
// deadlines or accounting. HTTP/1.1 carries one at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "http/body_needle.hpp"
#include "http/response_parser.hpp"

namespace punctual::http {

// What a whole response showed.
struct response_end {
  int status = 0;
  bool keep_alive = false;
  bool body_found = true;  // the needle begin() was given was in the body (true without one)
};

// Why a request that multiplexing carried ended without a response (HTTP/2 only).
enum class stream_failure : std::uint8_t {
  reset,    // the server reset the stream (RST_STREAM; code: its error code)
  refused,  // the server refused it unprocessed (REFUSED_STREAM): safe to send again
  goaway,   // above the last stream id of the server's GOAWAY: never processed, safe to send again
  closed,   // the connection ended (closed, or after a GOAWAY) before the response did
};

// What a multiplexed request's frames weighed, reported when it ends: the frames of its own
// stream, 9-byte frame headers included (connection-wide frames belong to no request).
struct stream_bytes {
  std::size_t sent = 0;
  std::size_t received = 0;
};

// Where the codec hands what it found.
class codec_sink {
 public:
  // The first bytes of `slot`'s response (time to first byte).
  virtual void on_first_byte(std::uint32_t slot) = 0;
  // A whole response for `slot`.
  virtual void on_response(std::uint32_t slot, const response_end& response,
                           const stream_bytes& bytes) = 0;
  // `slot` ended without a response; the connection carries on (or `why` says it closed).
  virtual void on_stream_failed(std::uint32_t slot, stream_failure why, std::uint32_t code,
                                const stream_bytes& bytes) = 0;
  // The connection's bytes broke the protocol: every slot on it has failed.
  virtual void on_protocol_error(parse_error error) = 0;

 protected:
  ~codec_sink() = default;
};

// Which planned request an attempt belongs to, the same for its retries and resends: its index
// in the schedule and, for a step of a session, the step's position in its scenario.
struct request_id {
  std::uint64_t index = 0;
  std::int32_t step = -1;  // -1: not a session's step
};

// A request to send, as the engine holds it: HTTP/1.1 bytes (a codec for another protocol
// translates them), whether it is a HEAD request (no response body), a needle searched for in
// the body (it outlives the response) and, when given, where the response is kept whole (up to
// max_kept_response; a longer one is cut there). The bytes stay valid until the slot ends. The
// id is for a codec that names the request on the wire (request_id_codec.hpp); others ignore it.
struct outgoing_request {
  std::string_view bytes;
  bool head = false;
  const body_needle* needle = nullptr;
  std::string* keep = nullptr;
  request_id id{};
};

class codec {
 public:
  virtual ~codec() = default;

  // A new connection (or a reconnect) is ready to carry bytes: forget the last one's state, and
  // queue what the protocol sends first (HTTP/2: its preface and SETTINGS).
  virtual void connected() = 0;
  // The request in `slot` goes out: its bytes (output()) and what its response must show. False
  // when it cannot be carried (an HTTP/2 session that refused the stream).
  virtual bool begin(std::uint32_t slot, const outgoing_request& request) = 0;
  static constexpr std::size_t max_kept_response = 1 << 20;
  // Bytes to write now (empty: none), valid until the next call; wrote() says how many went.
  virtual std::string_view output() = 0;
  virtual void wrote(std::size_t n) noexcept = 0;
  // Whether the bytes a request's send counts are its own (HTTP/1.1), or known per stream only
  // when it ends (stream_bytes).
  virtual bool counts_per_stream() const noexcept = 0;
  // What `slot`'s request weighed so far, for one that ends with no event of the codec's (a
  // timeout, a failed connection). Zero for a protocol that counts at the send.
  virtual stream_bytes bytes_of(std::uint32_t slot) const noexcept = 0;

  // Feeds response bytes; returns how many the protocol expected. Bytes beyond them (HTTP/1.1:
  // after the one response expected, or with none expected) are left: the connection is out of
  // step.
  virtual std::size_t feed(const char* data, std::size_t size, codec_sink& sink) = 0;
  // The peer closed the connection: a close-delimited response completes, every other in
  // flight is reported (HTTP/1.1: as a protocol error, truncated; HTTP/2: as failed streams).
  virtual void finish_on_eof(codec_sink& sink) = 0;
  // Gives up on `slot`'s request (its deadline passed). True when the connection carries on
  // (HTTP/2 resets the stream); false when it must close (HTTP/1.1).
  virtual bool cancel(std::uint32_t slot) noexcept = 0;

  // How many requests the connection may carry at once right now: fixed for HTTP/1.1; for
  // HTTP/2 the server's SETTINGS limit within the local one, and 0 once the server sent GOAWAY.
  virtual std::uint32_t capacity() const noexcept = 0;
  // Whether the connection's set-up is complete (HTTP/2: the server's SETTINGS arrived).
  virtual bool settled() const noexcept = 0;
  // Whether a connection's bytes may wait unread for the worker's next due wake-up (they are
  // dated by their receive stamps). A protocol with its own traffic to answer promptly (HTTP/2's
  // PING and SETTINGS, window updates) refuses.
  virtual bool allows_deferred_reads() const noexcept = 0;
  // The protocol's name as reports give it: "http/1.1", "h2".
  virtual std::string_view protocol() const noexcept = 0;
};

std::unique_ptr<codec> make_http1_codec();

}  // namespace punctual::http
