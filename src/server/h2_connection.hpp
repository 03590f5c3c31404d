// The HTTP/2 side of `punctual serve --http2`: one connection's protocol state, on libnghttp2.
// It plays the part request_reader and the response queue play for HTTP/1.1: bytes read from
// the socket (or TLS) go in, frames to write come out, and the owning `connection` does the
// I/O, so TLS, the stall gate and the worker's timers are the same for both protocols.
//
// Every stream is one request. Its response (the same status, headers and body as HTTP/1.1)
// is due at arrival + service time; streams are independent, so a slow one never holds a
// later one back, unlike HTTP/1.1's responses in request order.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/arrival_log.hpp"
#include "server/connection.hpp"
#include "server/responses.hpp"
#include "server/server_config.hpp"

typedef struct nghttp2_session nghttp2_session;
typedef struct nghttp2_session_callbacks nghttp2_session_callbacks;

namespace punctual::server {

class h2_connection;

// What every HTTP/2 connection of one worker shares: nghttp2's callback table (copied by each
// session) and the response's header values and body, which outlive every stream because
// headers and body are handed to nghttp2 without copying.
class h2_shared {
 public:
  // Throws std::runtime_error when nghttp2 cannot allocate its tables.
  h2_shared(const server_config& config, const response_set& responses);
  ~h2_shared();
  h2_shared(const h2_shared&) = delete;
  h2_shared& operator=(const h2_shared&) = delete;

  // A new server session that has queued its SETTINGS; null when nghttp2 is out of memory.
  std::unique_ptr<h2_connection> make() const;

  std::uint32_t max_streams() const { return max_streams_; }
  std::string_view body() const { return body_; }
  const std::string& id_header() const { return id_header_; }
  const std::string& content_length() const { return content_length_; }

 private:
  nghttp2_session_callbacks* callbacks_ = nullptr;
  std::uint32_t max_streams_;
  std::string body_;
  std::string content_length_;
  std::string id_header_;  // the header whose value the arrival log keeps (empty: none)
};

class h2_connection {
 public:
  h2_connection(const h2_shared& shared, nghttp2_session* session);
  ~h2_connection();
  h2_connection(const h2_connection&) = delete;
  h2_connection& operator=(const h2_connection&) = delete;

  // Feeds bytes read at `arrival`; each stream whose request ends in them is queued with its
  // service time. False when the bytes are not HTTP/2 (an HTTP/1.1 client, say): a GOAWAY is
  // queued and nothing more should be read.
  bool on_bytes(std::string_view data, std::chrono::nanoseconds arrival, answer_policy& policy);

  // When produce() must next run without I/O: now, if reading queued frames (SETTINGS ACK,
  // WINDOW_UPDATE...), or the earliest due response. Empty: only I/O can change anything.
  std::optional<std::chrono::nanoseconds> next_wakeup() const;

  // Submits every response due at `now` (recording its answer), then appends frames to `out`
  // while fewer than a budget of bytes (256 KiB, counting the `unsent` ones already there)
  // wait for the socket. True when it stopped at the budget with more to write.
  bool produce(std::chrono::nanoseconds now, arrival_recorder& recorder, std::string& out,
               std::size_t unsent);

  // Queues a GOAWAY: no new streams are taken (the idle limit, the end of the connection).
  void go_away();
  // No response is waiting for its due time and nghttp2 has nothing to write.
  bool idle() const;
  // nghttp2 wants neither to read nor to write: the connection is over (after a GOAWAY).
  bool finished() const;
  // Records the responses that will never be written (arrival log: answered 0).
  void abandon(arrival_recorder& recorder);

 private:
  struct stream_state {
    std::int32_t id = 0;
    std::chrono::nanoseconds arrival{0};
    std::size_t sent = 0;  // body bytes handed to nghttp2
    request_tag tag;       // for the arrival log
    bool queued = false;   // its request is complete and its answer due (else only its tag came)
    bool late = false;
    bool answered = false;
    bool closed = false;  // the client reset it before its answer: nothing to submit
  };
  struct due_stream {
    std::chrono::nanoseconds due;
    stream_state* state;
  };

  // nghttp2's callbacks, with the exact signatures of its typedefs (h2_connection.cpp).
  friend struct h2_callbacks;

  void on_request(std::int32_t stream_id);
  void on_id(std::int32_t stream_id, std::string_view value);
  stream_state& state_of(std::int32_t stream_id);
  void submit(stream_state& state);
  stream_state* take_state();
  void release(stream_state* state);

  const h2_shared& shared_;
  nghttp2_session* session_;
  std::deque<stream_state> states_;  // a deque: the pointers nghttp2 holds stay valid
  std::vector<stream_state*> free_states_;
  std::vector<due_stream> due_;  // a min-heap on due
  // What the callbacks need to queue a request: the last read's time, and the policy (set
  // during on_bytes() only).
  std::chrono::nanoseconds arrival_{0};
  answer_policy* policy_ = nullptr;
  bool kick_ = false;    // bytes were read since the last produce(): there may be frames to send
  bool broken_ = false;  // nghttp2 failed to write: nothing more can be said on it
};

}  // namespace punctual::server
