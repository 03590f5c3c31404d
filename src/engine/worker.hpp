// A worker: one thread, one poller, a share of the connections, and its own recorder. Its load
// model (load_model.hpp) says what is due; a due request goes to a free slot on a connection
// of the worker (its user's own slot when users own slots), else waits in its queue
// (docs/design.md, "Workers and connections"). The worker decides where requests go and what has
// run out of time; the pacer decides how it waits and the poller carries the wait out, the
// transports move the bytes and the codecs frame them. Every part comes in through
// worker_parts, so the same worker runs on real sockets or in the simulation (tests/sim).
#pragma once

#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/codec_events.hpp"
#include "engine/config.hpp"
#include "engine/connection.hpp"
#include "engine/deadline.hpp"
#include "engine/load_model.hpp"
#include "engine/pacer.hpp"
#include "engine/parts.hpp"
#include "engine/request_queue.hpp"
#include "engine/retry.hpp"
#include "engine/retry_home.hpp"
#include "engine/slot.hpp"
#include "http/h2_memory.hpp"
#include "net/clock.hpp"
#include "net/poller.hpp"
#include "net/transport.hpp"
#include "record/recorder.hpp"
#include "run/result.hpp"

namespace punctual::engine {

// Shared between the coordinator and the workers; written only by the coordinator.
struct run_control {
  std::atomic<bool> interrupted{false};
  std::atomic<std::int64_t> interrupted_at_ns{0};  // CLOCK_MONOTONIC
};

using worker_stats = run::worker_stats;

class worker final : private model_host, private record::outcome_listener {
 public:
  worker(const run_config& config, std::uint32_t id, std::uint32_t connections, worker_parts parts);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  // Opens every connection (with a connection per user: one, to check the target answers),
  // waiting at most the connect timeout. Returns how many connected; `first_error` gets the
  // first failure (kind and text). worker_setup.cpp.
  std::uint32_t open_connections(net::failure& first_error);

  // Sets the schedule's start (CLOCK_MONOTONIC), builds the recorder and starts the model.
  // Called before the worker's loop starts, so the collector never sees a worker without one.
  void prepare(nanoseconds start);

  // The loop from the prepared start through the drain: begin, then turns, each followed by a
  // wait, until a turn finds the run over, then end. run() does all of it on the worker's
  // thread; the simulation calls the steps itself and lets virtual time pass in the waits.
  // Never inlined: bench/callgrind.sh counts what it and its callees execute.
  [[gnu::noinline]] void run(const run_control& control);
  void begin(const run_control& control);
  // Acts on everything due by now and plans the wait (plan()); false once the run is over.
  bool turn();
  const net::wait_plan& plan() const noexcept { return plan_; }
  // Carries out the planned wait and handles the events it ends with.
  void wait_and_handle();
  // Every request still open ends unfinished; the worker's own costs are taken.
  void end();
  // Ends the current wait (used on interruption); safe from another thread.
  void wake() noexcept { poller_->wake(); }

  record::recorder& recorder() noexcept override { return *recorder_; }
  // What this worker's first TLS handshake negotiated, if it made one.
  const std::optional<net::tls_state>& first_tls() const noexcept { return first_tls_; }
  const worker_stats& stats() const noexcept { return stats_; }
  // On the worker's thread before run(): the CPU its thread was pinned to (--pin).
  void pinned_to(int cpu) noexcept { stats_.pinned_cpu = cpu; }

 private:
  // model_host: what the load model may ask.
  void dispatched(record::request_times& t, nanoseconds now) override;
  void enqueue(const record::request_times& t, nanoseconds now) override;
  nanoseconds slot_ready_at(std::uint32_t slot, nanoseconds now) const noexcept override;
  nanoseconds send_instant(nanoseconds due) const noexcept override {
    return pacer_.send_instant(due);
  }
  // outcome_listener: every final outcome goes on to the model (and the tap).
  void on_final(const record::request_times& t, record::outcome o,
                nanoseconds at) noexcept override;

  // worker.cpp: the worker's instant for what it stamps on requests (see moment())
  nanoseconds read_clock() noexcept;
  nanoseconds moment() noexcept { return io_since_read_ ? read_clock() : now_; }
  void did_io() noexcept { io_since_read_ = true; }

  // worker.cpp: where due requests go, and what has run out of time
  void admit(record::request_times& t, nanoseconds now);
  bool retry(const record::request_times& t, record::retry_cause why, nanoseconds now,
             bool answered);
  void dispatch_retries(nanoseconds now);
  void serve_queue(nanoseconds now);
  bool assign(const record::request_times& t, nanoseconds now);
  slot* free_slot(const record::request_times& t, nanoseconds now) noexcept;
  slot* user_slot(const record::request_times& t, nanoseconds now) noexcept;
  slot* least_loaded(nanoseconds now) noexcept;
  slot* reopenable(nanoseconds now, bool multiplexed) noexcept;
  void release_users(nanoseconds now);
  void check_deadlines(nanoseconds now);
  void check_deadline(slot& s, nanoseconds now);
  void check_connect_timeout(connection& c, nanoseconds now);
  void time_out(const record::request_times& t, const attempt_ending& e, nanoseconds now);
  nanoseconds next_wake(nanoseconds now) noexcept;
  void scan_connections(nanoseconds now) noexcept;
  void note_connection(const connection& c, nanoseconds& wake, bool& awaits_socket) const noexcept;
  void plan_wait(nanoseconds now) noexcept;
  bool finished(nanoseconds now) const noexcept;
  void observe_interruption(nanoseconds now) noexcept;
  void finish_unfinished();
  void mark_busy(slot& s) noexcept;
  void mark_free(slot& s) noexcept;

  // worker_setup.cpp: connections set up before the start
  void settle_before_start(connection& c, net::failure& error);

  // worker_io.cpp: the per-connection state machine over its transport and codec
  void start_connect(connection& c, nanoseconds now);
  void on_event(const epoll_event& ev);
  void on_set_up(connection& c, nanoseconds now);
  bool speak(connection& c);
  void count_protocol(const connection& c) noexcept {
    (c.codec == c.h2.get() ? stats_.h2_connections : stats_.http1_connections)++;
  }
  void note_handshake(const net::tls_state& tls, nanoseconds now);
  void send_request(slot& s, nanoseconds now);
  void mark_sent(slot& s, nanoseconds at);
  void flush(connection& c, nanoseconds now);
  void written(connection& c, nanoseconds at);
  void flush_deferred(nanoseconds now);
  void on_readable(connection& c, bool read_to_end);
  void on_closed_by_peer(connection& c, nanoseconds now, nanoseconds last_arrival);
  bool on_bytes(connection& c, const char* data, std::size_t size, nanoseconds now,
                nanoseconds arrived);
  void act_on_events(connection& c, nanoseconds now, nanoseconds arrived, bool at_eof);
  void on_stream_failed(slot& s, const codec_event& e, nanoseconds now);
  nanoseconds arrival_time(const connection& c, nanoseconds stamp,
                           nanoseconds read_at) const noexcept;
  void complete(connection& c, slot& s, const http::response_end& response, nanoseconds now,
                nanoseconds done);
  void settle_response(slot& s, const http::response_end& response, nanoseconds done);
  void fail_slot(slot& s, record::socket_reason why, nanoseconds now);
  void count_stream_bytes(const slot& s, const http::stream_bytes& bytes) noexcept;
  void fail_connection(connection& c, record::socket_reason why, nanoseconds now);
  std::optional<record::socket_reason> all_broken(nanoseconds now) const noexcept;
  void fail_unsent(const record::request_times& t, record::socket_reason why, nanoseconds now);
  // `failed`: the connection broke (a failed set-up, the server's reset or close, bytes nobody
  // asked for); else the worker closed it (a timeout, no keep-alive, a user's end, GOAWAY).
  enum class close_cause : std::uint8_t { ours, failed };
  void close_connection(connection& c, nanoseconds now, close_cause cause = close_cause::ours);
  bool may_open_ahead() const noexcept;
  void became_idle(connection& c, nanoseconds now);

  // The slot a new request on `c` takes (mark_busy takes it off the connection's free stack).
  slot* next_free(connection& c) noexcept {
    return c.free_slots.empty() ? nullptr : &slots_[c.free_slots.back()];
  }
  connection& connection_of(const slot& s) noexcept { return connections_[s.connection]; }
  const connection& connection_of(const slot& s) const noexcept {
    return connections_[s.connection];
  }
  std::uint32_t local_index(const slot& s) const noexcept {
    return static_cast<std::uint32_t>(&s - slots_.data()) - connections_[s.connection].first_slot;
  }
  std::uint32_t index_of(const connection& c) const noexcept {
    return static_cast<std::uint32_t>(&c - connections_.data());
  }

  const run_config& config_;
  const std::uint32_t id_;
  const deadline_rule deadlines_;
  const net::clock& clock_;
  net::transport_factory& transports_;
  std::unique_ptr<net::poller> poller_;
  std::unique_ptr<load_model> model_;
  request_tap* tap_;
  const model_traits traits_;
  pacer pacer_;
  // Responses may wait unread for the next due wake-up, as far as the codecs go (HTTP/2 answers
  // its peer at once); the model and the state of the queue decide the rest (plan_wait).
  bool codecs_allow_deferred_reads_ = true;
  // HTTP/2 (--http 2 or auto): connections carry many requests at once, and a due request
  // takes the one with the fewest in flight.
  bool multiplexed_ = false;
  http::h2_memory h2_memory_;  // every HTTP/2 session's memory; declared before connections_
  codec_events codec_events_;
  std::vector<std::uint32_t> to_flush_;  // HTTP/2 connections with requests framed, not written

  net::realtime_to_mono to_mono_;
  // The last scan of the connections (next_wake): its earliest deadline, when it ran, and
  // whether a request waits on a connect or a blocked write.
  struct connection_scan {
    nanoseconds wake{};
    nanoseconds at{};
    bool awaits_socket = false;
  } scan_;
  nanoseconds no_free_at_{std::chrono::hours(-1)};  // free_slot's last search that found nothing
  // Attempts bound to a slot: with the -c kept open, the most connections the run may open
  // (may_open_ahead).
  std::uint64_t assigned_ = 0;
  std::vector<connection> connections_;
  std::vector<slot> slots_;
  // The busy slots. The per-wake scans walk these, not every slot: with a connection per user,
  // thousands of users think while a few hundred requests are in flight.
  std::vector<std::uint32_t> in_flight_;
  std::vector<std::uint32_t> idle_;  // indices of idle connections (a stack)
  request_queue queue_;
  // Retries waiting for their backoff to end, claimable by other workers when claims are on.
  retry_home retries_;
  retry_budget budget_;
  std::optional<record::recorder> recorder_;
  // TLS handshakes made before the recorder exists (the connections opened before the start):
  // how long each took and whether it resumed.
  std::vector<std::pair<nanoseconds, bool>> early_handshakes_;
  std::optional<net::tls_state> first_tls_;

  // The worker's last reading of the clock, and whether a system call (a write, a connect, a
  // read) has taken time since: moment() reads the clock again only then.
  nanoseconds now_{};
  bool io_since_read_ = false;
  const run_control* control_ = nullptr;
  net::wait_plan plan_;
  nanoseconds turn_at_{};  // when the last turn ran (the plan's origin)
  nanoseconds cpu_before_{};
  nanoseconds start_{};
  nanoseconds window_end_{};
  nanoseconds drain_until_{nanoseconds::max()};
  nanoseconds interrupted_at_{nanoseconds::max()};
  bool interrupted_ = false;
  worker_stats stats_;
  std::array<char, 64 * 1024> read_buffer_{};
};

}  // namespace punctual::engine
