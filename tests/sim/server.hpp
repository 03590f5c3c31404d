// The simulation's scripted server: what `punctual serve` does, on the in-memory network and in
// virtual time. Each request gets a service time from a distribution, answers due inside a stall
// window wait for its end (and every other byte the server would write waits with them), and a
// share of requests meet a fault: a 5xx or 429, a reset, a close-delimited response, a trickled
// one, or none at all. Over HTTP/2 (an nghttp2 server session) a stream can be refused
// (REFUSED_STREAM) or reset (RST_STREAM), and a connection can be sent away (GOAWAY) after some
// requests. New connections can be refused, left hanging, reset, or greeted with a banner. It
// logs when it read and answered each request, by the x-sim-id header the test's codecs add.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "network.hpp"
#include "server/responses.hpp"

namespace punctual::sim {

struct service_time {
  enum class kind : std::uint8_t { constant, exponential, uniform } shape = kind::constant;
  nanoseconds a{100'000};  // constant: the time; exponential: the mean; uniform: the low end
  nanoseconds b{};         // uniform: the high end
  nanoseconds draw(world& w) const;
};

// A window in which the server answers nothing, from the schedule's start (set_origin).
struct stall {
  nanoseconds from{};
  nanoseconds until{};
};

// What a request meets; the shares are of all requests (the rest are answered 200).
enum class fate : std::uint8_t {
  ok,
  status_503,
  status_429,
  reset,            // RST instead of an answer
  close_delimited,  // no Content-Length: the FIN ends the body
  trickle,          // the response in small pieces, trickle_gap apart
  never,            // no answer; the connection stays open
  refused,          // HTTP/2: REFUSED_STREAM
  stream_reset,     // HTTP/2: RST_STREAM(INTERNAL_ERROR)
  // serve's other HTTP/1.1 faults, with serve's own bytes (server/responses.hpp):
  garbage,       // not an HTTP status line
  huge_headers,  // a header section over 64 KiB
  continue_,     // 100 Continue and 103 Early Hints before the 200
  chunked,       // chunk extensions and a trailer
  http10,        // HTTP/1.0 200, no keep-alive: the server closes after it
  close_after,   // a keep-alive 200, then the server closes
  reset_after,   // the first reset_after_bytes of the 200, then a RST
  malformed,     // HTTP/2: a frame that breaks the protocol instead of the answer
};
inline constexpr std::size_t fate_count = 17;
int status_of(fate f) noexcept;  // the status its answer carries

struct server_script {
  bool http2 = false;
  service_time service;
  std::vector<stall> stalls;
  double shares[fate_count] = {};  // by fate; the ok share is what the others leave
  nanoseconds trickle_gap{2'000'000};
  std::size_t body_bytes = 32;
  std::uint32_t max_streams = 100;  // HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS
  std::uint32_t goaway_after = 0;   // HTTP/2: GOAWAY after this many requests on a connection
  std::optional<nanoseconds>
      close_after_goaway;    // HTTP/2: and close the connection this long after
  bool zero_window = false;  // HTTP/2: SETTINGS_INITIAL_WINDOW_SIZE 0, never a WINDOW_UPDATE
  // HTTP/2, fate::malformed: the frame it writes (a DATA frame on stream 0 by default), and how
  // long after it the server closes the connection (none: only when the client does).
  std::string malformed_frame{"\x00\x00\x01\x00\x00\x00\x00\x00\x00x", 10};
  std::optional<nanoseconds> close_after_break;
  std::size_t reset_after_bytes = 20;  // fate::reset_after
  // fate::close_delimited: the server closes this long after writing the body (0: at once).
  nanoseconds close_delimited_fin_after{};
  // HTTP/1.1: closes a keep-alive connection idle this long (serve's --idle-close); 0: never.
  nanoseconds idle_close{};
  // HTTP/1.1: when set, the answer of a request that meets fate::ok is what this returns for its
  // head (e.g. a Set-Cookie, a JSON body to capture from), instead of serve's 200.
  std::function<std::string(std::string_view request_head)> answer;
  // New connections.
  double refuse_share = 0;
  double hang_share = 0;
  double reset_share = 0;
  bool banner = false;  // write a line as soon as a connection is accepted
  // HTTP/1.1: serve --cpu-per-request on one thread: every request takes the server this long,
  // one after another over all connections, so its capacity is 1 / cpu_per_request; 0: none.
  // busy_at_start: work left over from before (a previous run's backlog).
  nanoseconds cpu_per_request{};
  nanoseconds busy_at_start{};
  // HTTP/1.1: a request whose path (the request line's, query and all) is one of these has its
  // drawn service time multiplied by the factor: one name of a mix, or one step of a scenario,
  // slower than the rest.
  std::vector<std::pair<std::string, double>> slower_paths;
};

// One request as the server saw it.
struct served_request {
  std::uint64_t sim_id = 0;      // from its x-sim-id header (0: none)
  std::uint64_t connection = 0;  // its connection's serial
  fate what = fate::ok;
  int status = 200;
  nanoseconds read_at{};         // its last byte reached the server
  nanoseconds answer_at{};       // the server began its answer (or reset, or refused it)
  bool answered = false;         // its whole answer was written
  std::uint64_t end_offset = 0;  // the server's stream offset just past the answer's last byte
  bool unprocessed = false;      // HTTP/2: above a GOAWAY's last stream, never processed
  // HTTP/1.1: the request's head as it arrived (x-sim-id included); HTTP/2: its header fields
  // as "name: value" lines, the pseudo-headers first.
  std::string head;
};

class scripted_server final : public server_end {
 public:
  scripted_server(world& w, network& net, server_script script);
  ~scripted_server();

  // The server process goes away: open connections get its FIN, new ones are refused.
  void go_away();
  // Where the stall windows count from (the schedule's start, known once connections are open).
  void set_origin(nanoseconds origin) noexcept { origin_ = origin; }
  const std::vector<served_request>& log() const noexcept { return log_; }
  const served_request* find(std::uint64_t sim_id) const noexcept;
  std::uint64_t accepted() const noexcept { return accepted_; }
  std::uint64_t connections_seen() const noexcept { return seen_; }
  // When the server's one CPU-bound thread is done with every request it has read.
  nanoseconds cpu_free_at() const noexcept { return cpu_free_at_; }

  accept_fate on_accept(connection& c) override;
  void on_data(connection& c, std::string_view bytes) override;
  void on_closed_by_client(connection& c) override;

  // The parts (server_http1.cpp, server_h2.cpp).
  struct conn_state;
  fate draw_fate();
  // When an answer meant for `at` can be written: after any stall it falls in.
  nanoseconds writable_at(nanoseconds at) const noexcept;
  served_request& record(std::uint64_t sim_id, const connection& c);
  std::string trickle_head() const;
  served_request& log_entry(std::size_t index) noexcept { return log_[index]; }

  world& world_;
  network& net_;
  server_script script_;
  server::response_set responses_;

 private:
  void http1_data(connection& c, conn_state& s, std::string_view bytes);
  void http1_answer(connection& c, std::size_t request);
  // A request's service time: drawn, and scaled when its path is one of slower_paths.
  nanoseconds service_of(std::string_view head);
  void idle_close_later(connection& c);
  // server_h2.cpp
  void h2_start(conn_state& s);
  void h2_data(connection& c, conn_state& s, std::string_view bytes);
  void h2_request(conn_state& s, std::int32_t stream, std::uint64_t sim_id);
  void h2_answer(conn_state& s, std::int32_t stream, std::size_t index);
  void h2_flush(conn_state& s);
  void h2_track(conn_state& s, std::string_view out);
  void close_later(conn_state& s, nanoseconds after);
  void frame_done(conn_state& s, std::uint64_t end);
  friend struct h2_callbacks;

  std::vector<served_request> log_;
  std::map<std::uint64_t, std::size_t> by_id_;
  std::map<std::uint64_t, std::unique_ptr<conn_state>> states_;
  std::uint64_t accepted_ = 0;
  std::uint64_t seen_ = 0;
  nanoseconds origin_ = std::chrono::hours(24 * 365);  // no stall before it is set
  nanoseconds cpu_free_at_{};
};

}  // namespace punctual::sim
