// A worker: one thread, one epoll loop, a share of the connections, and its own recorder.
// Due requests go to a free slot on any connection of the worker, else wait in its queue
// (docs/design.md, "Workers and connections"). The worker decides what is due and what has run
// out of time; the pacer decides how it waits, the transports move the bytes, the codec frames
// them and the request source says what to send.
#pragma once

#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/codec_events.hpp"
#include "engine/config.hpp"
#include "engine/connection.hpp"
#include "engine/deadline.hpp"
#include "engine/pacer.hpp"
#include "engine/request_queue.hpp"
#include "engine/request_source.hpp"
#include "engine/retry.hpp"
#include "engine/sessions.hpp"
#include "engine/slot.hpp"
#include "http/h2_memory.hpp"
#include "net/clock.hpp"
#include "net/event_loop.hpp"
#include "net/transport.hpp"
#include "record/recorder.hpp"
#include "run/result.hpp"
#include "schedule/schedule.hpp"

namespace punctual::engine {

// Shared between the coordinator and the workers; written only by the coordinator.
struct run_control {
  std::atomic<bool> interrupted{false};
  std::atomic<std::int64_t> interrupted_at_ns{0};  // CLOCK_MONOTONIC
};

using worker_stats = run::worker_stats;

// What the workers share, read-only: how to make a connection's transport and codec, and what
// to send.
struct worker_parts {
  net::transport_factory& transports;
  const request_source& requests;
};

class worker {
 public:
  worker(const run_config& config, const schedule::plan* plan, std::uint32_t id,
         std::uint32_t connections, const worker_parts& parts);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  // Opens every connection, waiting at most the connect timeout. Returns how many connected;
  // `first_error` gets the first failure (kind and text).
  std::uint32_t open_connections(net::failure& first_error);

  // Sets the schedule's start (CLOCK_MONOTONIC) and builds the recorder. Called before the
  // worker thread starts, so the collector never sees a worker without a recorder.
  void prepare(nanoseconds start);
  // Runs the schedule from the prepared start through the drain.
  void run(const run_control& control);
  // Wakes run() from its wait (used on interruption).
  void wake() noexcept;

  record::recorder& recorder() noexcept { return *recorder_; }
  // What this worker's first TLS handshake negotiated, if it made one.
  const std::optional<net::tls_state>& first_tls() const noexcept { return first_tls_; }
  const worker_stats& stats() const noexcept { return stats_; }

 private:
  // worker.cpp: what is due, where it goes, and what has run out of time
  bool next_entry() noexcept;
  void dispatch_due(nanoseconds now);
  void dispatch_closed_model(nanoseconds now);
  void begin_closed_request(slot& s, nanoseconds now);
  // The closed model: a free slot of `c` whose user is due by `now`, moved to the top of the
  // connection's free stack (where mark_busy takes it), or null.
  slot* due_user(connection& c, nanoseconds now) noexcept;
  nanoseconds users_due(const connection& c) const noexcept;
  void dispatch_arrivals(nanoseconds now);
  void dispatch_sessions(nanoseconds now);
  void dispatch_retries(nanoseconds now);
  void admit(record::request_times& t, nanoseconds now);
  void enqueue(const record::request_times& t, nanoseconds now);
  bool retry(const record::request_times& t, record::retry_cause why, nanoseconds now,
             bool answered);
  void serve_queue(nanoseconds now);
  bool assign(const record::request_times& t, nanoseconds now);
  slot* free_slot(const record::request_times& t, nanoseconds now) noexcept;
  slot* least_loaded(nanoseconds now) noexcept;
  void close_ended_users(nanoseconds now);
  void check_deadlines(nanoseconds now);
  void check_deadline(slot& s, nanoseconds now);
  void check_connect_timeout(connection& c, nanoseconds now);
  void time_out(const record::request_times& t, const attempt_ending& e, nanoseconds now);
  nanoseconds next_wake(nanoseconds now) noexcept;
  void scan_connections(nanoseconds now) noexcept;
  std::span<epoll_event> wait_for_work(nanoseconds now) noexcept;
  bool finished(nanoseconds now) const noexcept;
  void observe_interruption(const run_control& control, nanoseconds now) noexcept;
  void finish_unfinished();

  // worker_io.cpp: the per-connection state machine over its transport and codec
  void start_connect(connection& c, nanoseconds now);
  void on_event(const epoll_event& ev);
  void on_set_up(connection& c, nanoseconds now);
  bool speak(connection& c);
  void count_protocol(const connection& c) noexcept {
    (c.codec == c.h2.get() ? stats_.h2_connections : stats_.http1_connections)++;
  }
  void settle_before_start(connection& c, net::failure& error);
  void note_handshake(const net::tls_state& tls, nanoseconds now);
  void send_request(slot& s, nanoseconds now);
  void flush(connection& c, nanoseconds now);
  void flush_deferred(nanoseconds now);
  void on_readable(connection& c, bool read_to_end);
  void on_closed_by_peer(connection& c, nanoseconds now, nanoseconds last_arrival);
  bool on_bytes(connection& c, const char* data, std::size_t size, nanoseconds now,
                nanoseconds arrived);
  void act_on_events(connection& c, nanoseconds now, nanoseconds arrived, bool at_eof);
  void on_stream_failed(slot& s, const codec_event& e, nanoseconds now);
  nanoseconds arrival_time(const connection& c, nanoseconds stamp, nanoseconds read_at) const noexcept;
  void complete(connection& c, slot& s, const http::response_end& response, nanoseconds now,
                nanoseconds done);
  void settle_response(slot& s, const http::response_end& response, nanoseconds done);
  void fail_slot(slot& s, record::socket_reason why, nanoseconds now);
  void count_stream_bytes(const slot& s, const http::stream_bytes& bytes) noexcept;
  void fail_connection(connection& c, record::socket_reason why, nanoseconds now);
  void close_connection(connection& c, nanoseconds now, bool connect_failed = false);
  void became_idle(connection& c, nanoseconds now);
  // The slot a new request on `c` takes (mark_busy takes it off the connection's free stack).
  slot* next_free(connection& c) noexcept {
    return c.free_slots.empty() ? nullptr : &slots_[c.free_slots.back()];
  }
  connection& connection_of(const slot& s) noexcept { return connections_[s.connection]; }
  std::uint32_t local_index(const slot& s) const noexcept {
    return static_cast<std::uint32_t>(&s - slots_.data()) - connections_[s.connection].first_slot;
  }
  std::uint64_t token_of(const connection& c) const noexcept {
    return static_cast<std::uint64_t>(&c - connections_.data());
  }

  const run_config& config_;
  const deadline_rule deadlines_;
  const request_source& requests_;
  pacer pacer_;
  std::optional<schedule::worker_stream> stream_;
  schedule::entry next_{};
  bool has_next_ = false;
  // Responses may wait unread for the next due wake-up: the open and hybrid models, with a codec
  // that allows it (the closed model needs each response at once to send the next request).
  bool reads_may_wait_ = false;
  // The event-loop token of the worker's own eventfd (connections use their index).
  static constexpr std::uint64_t wake_token = ~std::uint64_t{0};
  // connection: per_user (hybrid): connection i belongs to session slot i, opened by its user's
  // first step and closed when the session ends; never shared, never opened ahead.
  bool per_user_ = false;
  // per_user: the slots with a step in flight. The per-wake scans walk these, not every user's
  // slot: thousands of users think while a few hundred steps are in flight.
  std::vector<std::uint32_t> in_flight_;
  void mark_busy(slot& s) noexcept;
  void mark_free(slot& s, nanoseconds now) noexcept;

  // HTTP/2 (--http 2 or auto): connections carry many requests at once, and a due request
  // takes the one with the fewest in flight.
  bool multiplexed_ = false;
  http::h2_memory h2_memory_;  // every HTTP/2 session's memory; declared before connections_
  codec_events codec_events_;
  std::vector<std::uint32_t> to_flush_;  // HTTP/2 connections with requests framed, not written

  net::event_loop loop_;
  // Holds only wake_fd_: sleeping on it lets responses wait for the next due wake-up, where
  // their kernel receive stamps date them (wait_for_work).
  net::event_loop tick_loop_;
  int wake_fd_ = -1;
  net::realtime_to_mono to_mono_;
  // The last scan of the connections (next_wake): its earliest deadline, when it ran, and
  // whether a request waits on a connect or a blocked write.
  struct connection_scan {
    nanoseconds wake{};
    nanoseconds at{};
    bool awaits_socket = false;
  } scan_;
  nanoseconds no_free_at_{std::chrono::hours(-1)};  // free_slot's last search that found nothing
  std::vector<connection> connections_;
  std::vector<slot> slots_;
  std::vector<std::uint32_t> idle_;  // indices of idle connections (a stack)
  request_queue queue_;
  // Retries waiting for their backoff to end: a min-heap on `due`, reserved up front.
  std::vector<record::request_times> retries_;
  retry_budget budget_;
  std::optional<record::recorder> recorder_;
  std::optional<session_driver> sessions_;  // the hybrid model's users
  // TLS handshakes made before the recorder exists (the connections opened before the start):
  // how long each took and whether it resumed.
  std::vector<std::pair<nanoseconds, bool>> early_handshakes_;
  std::optional<net::tls_state> first_tls_;

  nanoseconds start_{};
  nanoseconds window_end_{};
  nanoseconds drain_until_{nanoseconds::max()};
  nanoseconds interrupted_at_{nanoseconds::max()};
  bool interrupted_ = false;
  worker_stats stats_;
  std::array<epoll_event, 256> events_{};
  std::array<char, 64 * 1024> read_buffer_{};
};

}  // namespace punctual::engine
