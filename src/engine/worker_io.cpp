// The per-connection state machine: set up the transport, write the slot's request, read and
// frame the response with the codec.
#include <sys/epoll.h>

#include <algorithm>
#include <optional>
#include <span>

#include "engine/worker.hpp"
#include "net/clock.hpp"

namespace punctual::engine {
namespace {

// After a set-up that failed before any answer, a connection is not reopened for 10 ms, then
// twice as long after each further failure in a row, up to 1 s: a dead target, or one that
// breaks every connection, must not turn the worker into a connect loop. An answer resets it.
nanoseconds reopen_backoff(std::uint32_t failures) noexcept {
  constexpr nanoseconds first{10'000'000};
  constexpr nanoseconds most{1'000'000'000};
  const std::uint32_t doublings = std::min<std::uint32_t>(failures - 1, 7);
  return std::min(first * (1 << doublings), most);
}

record::socket_reason reason_of(net::failure_kind kind) noexcept {
  switch (kind) {
    case net::failure_kind::no_ports:
      return record::socket_reason::no_ports;
    case net::failure_kind::no_fds:
      return record::socket_reason::no_fds;
    case net::failure_kind::tls_handshake:
      return record::socket_reason::tls_handshake;
    case net::failure_kind::tls_verify:
      return record::socket_reason::tls_verify;
    case net::failure_kind::connect:
    case net::failure_kind::none:
      break;
  }
  return record::socket_reason::connect;
}

// The planned request an attempt belongs to, for a codec that names it on the wire: a session's
// step (it has an arrival) is named by its step too.
http::request_id id_of(const record::request_times& t) noexcept {
  return {t.index, t.arrival.count() != 0 ? static_cast<std::int32_t>(t.step) : -1};
}

// The --retry-on class of a socket failure, if it has one. A connection that dies mid-request,
// by RST or by FIN, counts as `reset`; a failed set-up as `connect`; a malformed response and a
// certificate that does not verify are not retried.
std::optional<record::retry_cause> retry_cause_of(record::socket_reason why) noexcept {
  switch (why) {
    case record::socket_reason::reset:
    case record::socket_reason::closed:
    case record::socket_reason::h2_rst:
    case record::socket_reason::goaway:
      return record::retry_cause::reset;
    case record::socket_reason::connect:
    case record::socket_reason::no_ports:
    case record::socket_reason::no_fds:
    case record::socket_reason::tls_handshake:
      return record::retry_cause::connect;
    default:
      return std::nullopt;
  }
}

std::optional<record::retry_cause> retry_cause_of(int status) noexcept {
  if (status == 429) return record::retry_cause::status_429;
  if (status >= 500 && status <= 599) return record::retry_cause::status_5xx;
  return std::nullopt;
}

}  // namespace

// Picks the codec the connection speaks now that it is set up: by ALPN over TLS with --http
// auto. False when --http 2 was asked for over TLS and the server did not agree to h2.
bool worker::speak(connection& c) {
  const net::tls_state& tls = c.transport->tls();
  const bool agreed_h2 = tls.handshaken && std::string_view(tls.alpn) == "h2";
  if (c.h2 && c.http1) {
    c.codec = agreed_h2 ? c.h2.get() : c.http1.get();
  } else if (c.h2 && tls.handshaken && !agreed_h2) {
    return false;
  }
  return true;
}

void worker::start_connect(connection& c, nanoseconds now) {
  c.connect_started = now;
  stats_.connections_opened++;
  const net::setup_status st = c.transport->open(config_.target, *poller_, index_of(c));
  did_io();
  if (st == net::setup_status::failed) {
    c.state = conn_state::closed;
    c.failed_setups++;
    c.retry_at = now + reopen_backoff(c.failed_setups);
    c.last_failure = reason_of(c.transport->last_failure().kind);
    if (c.in_flight) fail_connection(c, c.last_failure, now);
    return;
  }
  c.state = conn_state::connecting;
  if (st == net::setup_status::ready) on_set_up(c, now);
}

void worker::on_event(const epoll_event& ev) {
  connection& c = connections_[ev.data.u64];
  if (!c.transport->is_open()) return;
  if (c.state == conn_state::connecting) {
    const net::setup_status st = c.transport->advance();
    const nanoseconds now = read_clock();
    if (st == net::setup_status::failed) {
      const record::socket_reason why = reason_of(c.transport->last_failure().kind);
      if (c.in_flight) return fail_connection(c, why, now);
      c.last_failure = why;
      return close_connection(c, now, close_cause::failed);
    }
    if (st == net::setup_status::ready) on_set_up(c, now);
    return;
  }
  if ((ev.events & EPOLLOUT) && c.write_blocked) flush(c, read_clock());
  if (c.transport->is_open() && (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
    c.peer_closing = (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    on_readable(c, c.peer_closing);
  }
}

void worker::on_set_up(connection& c, nanoseconds now) {
  note_handshake(c.transport->tls(), now);
  if (!speak(c)) {
    if (c.in_flight) return fail_connection(c, record::socket_reason::h2_protocol, now);
    return close_connection(c, now, close_cause::failed);
  }
  recorder_->count_reconnect();
  count_protocol(c);
  c.codec->connected();
  const std::uint32_t generation = c.generation;
  // The requests bound to it while it connected go now, in their slots' order.
  for (std::uint32_t k = 0; k < c.slot_count && c.in_flight > 0; ++k) {
    slot& s = slots_[c.first_slot + k];
    if (s.busy && s.times.sent.count() == 0) send_request(s, now);
    if (c.generation != generation) return;  // a write failed
  }
  if (c.in_flight == 0) {
    flush(c, now);
    if (c.generation == generation) became_idle(c, now);
  } else if (multiplexed_) {
    serve_queue(now);
  }
}

void worker::note_handshake(const net::tls_state& tls, nanoseconds now) {
  if (!tls.handshaken) return;
  if (!first_tls_) first_tls_ = tls;
  if (recorder_) {
    recorder_->on_tls_handshake(now, tls.handshake_time, tls.resumed);
  } else {
    early_handshakes_.emplace_back(tls.handshake_time, tls.resumed);
  }
}

void worker::send_request(slot& s, nanoseconds now) {
  connection& c = connection_of(s);
  c.state = conn_state::busy;
  // The model's request: a hybrid user's step carries its own values, and keeps its response
  // for its captures and cookies.
  s.request = model_->request(s.times, s.room);
  s.keeps_response = model_->keeps_response(s.times);
  now = moment();
  if (c.in_flight == 1) c.busy_since = now;
  if (tap_) tap_->on_framing(id_, s.times, s.connection);
  const bool begun =
      c.codec->begin(local_index(s), {s.request.bytes, s.request.head, s.request.expect_body,
                                      s.keeps_response ? &s.response : nullptr, id_of(s.times)});
  if (!begun) return fail_connection(c, record::socket_reason::h2_protocol, now);
  if (!multiplexed_ || c.codec == c.http1.get()) {
    // Written at once: sent at the moment the request was given its slot, unless it waited
    // for a connect.
    mark_sent(s, now);
    return flush(c, now);
  }
  // HTTP/2 frames the requests of one turn of the loop together: one write per connection for
  // all of them (flush_deferred, before the worker waits), as a browser's or h2load's do. Each
  // is sent when that write is made.
  s.unwritten = true;
  c.unwritten.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
  if (!c.flush_pending) {
    c.flush_pending = true;
    to_flush_.push_back(index_of(c));
  }
}

// The request's bytes are written at `at`: its actual send. Unless it waited for its connection
// to open, what it waited for since it took its slot was this write (over HTTP/2, for the
// turn's other requests to be framed and the connections before its own written): queue wait,
// which runs to here.
void worker::mark_sent(slot& s, nanoseconds at) {
  s.times.sent = at;
  if (!s.times.had_to_connect) {
    s.times.assigned = at;
    recorder_->on_assigned(s.times);
  }
  const connection& c = connection_of(s);
  // A codec that counts at the send has the whole request to write when it is sent (HTTP/1.1
  // writes it at once): the bytes that go on the wire, with whatever a decorator added (the
  // request id header).
  recorder_->on_sent(s.times, c.codec->counts_per_stream() ? 0 : c.codec->output().size());
  if (tap_) tap_->on_sent(id_, s.times);
}

// A write went out at `at` on `c`: it carried the frames of every request framed since the last.
void worker::written(connection& c, nanoseconds at) {
  for (const std::uint32_t k : c.unwritten) {
    slot& s = slots_[k];
    if (!s.unwritten) continue;  // ended before the write, or listed again after a reuse
    s.unwritten = false;
    mark_sent(s, at);
  }
  c.unwritten.clear();
}

void worker::flush_deferred(nanoseconds now) {
  for (std::size_t i = 0; i < to_flush_.size(); ++i) {  // a flush that fails may add none
    connection& c = connections_[to_flush_[i]];
    c.flush_pending = false;
    if (c.state == conn_state::idle || c.state == conn_state::busy) flush(c, now);
  }
  to_flush_.clear();
}

// Writes what the codec has to send: a request, or HTTP/2's own frames (acknowledgements,
// window updates, resets).
void worker::flush(connection& c, nanoseconds now) {
  for (;;) {
    const std::string_view out = c.codec->output();
    if (out.empty()) break;
    const nanoseconds at = c.unwritten.empty() ? now : moment();
    const auto r = c.transport->write(out.data(), out.size());
    did_io();
    if (r.status == net::io_status::would_block) {
      // Rare (requests are small): watch for writability, then go back to reading only.
      if (!c.write_blocked) c.transport->watch_writable(true);
      c.write_blocked = true;
      return;
    }
    if (r.status != net::io_status::done) {
      return fail_connection(c,
                             r.status == net::io_status::reset ? record::socket_reason::reset
                                                               : record::socket_reason::write,
                             now);
    }
    c.codec->wrote(r.bytes);
    if (!c.unwritten.empty()) written(c, at);
  }
  if (c.write_blocked) {
    c.write_blocked = false;
    c.transport->watch_writable(false);
  }
}

// `read_to_end`: read until the transport has nothing more, even after a short read. Needed
// when the peer's FIN came with this event (it raises no further edge) and when a deadline check
// reads what arrived unnoticed. The clock is read after each read that returns something, and
// only then: a read that would block needs no time, and a request sent earlier in this turn of
// the loop may already be answered.
void worker::on_readable(connection& c, bool read_to_end) {
  // A FIN read alone carries no receive stamp. When it follows bytes read in this same call it
  // was already queued behind them (or came within microseconds): Linux merges a FIN that finds
  // data unread into that data's last buffer, which takes the FIN's stamp, so the read that took
  // those bytes is stamped with the FIN's arrival and dates the close (docs/design.md, "How the
  // times are taken", has the measurement).
  nanoseconds last_arrival{};
  for (;;) {
    nanoseconds stamp{};
    const auto r = c.transport->read(read_buffer_.data(), read_buffer_.size(), stamp);
    if (r.status == net::io_status::would_block) return did_io();
    const nanoseconds now = read_clock();
    if (r.status == net::io_status::done) {
      last_arrival = arrival_time(c, stamp, now);
      if (!on_bytes(c, read_buffer_.data(), r.bytes, now, last_arrival)) return;
      // A short read drained the socket and a later arrival raises a new edge, so the read that
      // would only return EAGAIN is skipped.
      if (r.bytes < read_buffer_.size() && !read_to_end &&
          c.transport->drained_after_short_read()) {
        return;
      }
      continue;
    }
    if (c.in_flight == 0) {
      c.last_failure = r.status == net::io_status::reset    ? record::socket_reason::reset
                       : r.status == net::io_status::closed ? record::socket_reason::closed
                                                            : record::socket_reason::read;
      return close_connection(c, now, close_cause::failed);
    }
    if (r.status == net::io_status::closed) return on_closed_by_peer(c, now, last_arrival);
    return fail_connection(c,
                           r.status == net::io_status::reset ? record::socket_reason::reset
                                                             : record::socket_reason::read,
                           now);
  }
}

// The peer closed with requests in flight: a close-delimited response completes (its end dated
// by the last bytes read), the others fail as closed (or, above a GOAWAY, are sent again).
void worker::on_closed_by_peer(connection& c, nanoseconds now, nanoseconds last_arrival) {
  const std::uint32_t generation = c.generation;
  codec_events_.list.clear();
  c.codec->finish_on_eof(codec_events_);
  act_on_events(c, now, last_arrival.count() != 0 ? last_arrival : now, true);
  if (c.generation != generation) return;
  if (c.in_flight) return fail_connection(c, record::socket_reason::closed, now);
  close_connection(c, now, close_cause::failed);
}

// When bytes that were read late arrived: the kernel's receive stamp, kept between the send
// and the read so a stepped wall clock cannot date a response outside its own life. On TCP the
// stamp is that of the last packet the read consumed, so a response that arrived in several
// packets and was read in one go gets its first byte dated at its last packet.
nanoseconds worker::arrival_time(const connection& c, nanoseconds stamp,
                                 nanoseconds read_at) const noexcept {
  if (stamp.count() == 0) return read_at;
  return std::clamp(to_mono_(stamp), std::min(c.busy_since, read_at), read_at);
}

// Returns false when the connection was closed and must not be read further. `arrived`: when
// the bytes reached the socket; `now`: when they were read.
bool worker::on_bytes(connection& c, const char* data, std::size_t size, nanoseconds now,
                      nanoseconds arrived) {
  if (!c.codec->counts_per_stream()) {  // HTTP/1.1: the bytes are the one request's response
    const slot& s = slots_[c.first_slot];
    if (!s.busy || c.state != conn_state::busy) {
      // Bytes nobody asked for (a banner, an h2c server's SETTINGS): the connection is out of
      // step. It closes, counted once, and is not reopened before a request needs it.
      stats_.unsolicited_closes++;
      c.last_failure = record::socket_reason::parse;
      close_connection(c, now, close_cause::failed);
      return false;
    }
    recorder_->on_received_bytes(s.times.accounted_at(), size);
  }
  const std::uint32_t generation = c.generation;
  codec_events_.list.clear();
  const std::size_t consumed = c.codec->feed(data, size, codec_events_);
  act_on_events(c, now, arrived, false);
  // Completing may have closed the connection, and reopened it: then these bytes' socket is gone.
  if (c.generation != generation) return false;
  if (consumed != size) {  // bytes after the response: the connection is out of step
    if (c.in_flight) {
      fail_connection(c, record::socket_reason::parse, now);
    } else {
      close_connection(c, now, close_cause::failed);
    }
    return false;
  }
  flush(c, now);  // HTTP/2 answers SETTINGS and PING and opens windows at once
  if (c.generation != generation) return false;
  if (c.in_flight == 0 && c.codec->capacity() == 0) {  // a GOAWAY while idle
    close_connection(c, now);
    return false;
  }
  return true;
}

// Acts on what the codec found, in order, until the connection closes.
void worker::act_on_events(connection& c, nanoseconds now, nanoseconds arrived, bool at_eof) {
  const std::uint32_t generation = c.generation;
  for (std::size_t i = 0; i < codec_events_.list.size() && c.generation == generation; ++i) {
    const codec_event e = codec_events_.list[i];
    if (e.what == codec_event::kind::protocol_error) {
      // A response cut short by the close counts as the close, as before any byte of it.
      const auto why =
          at_eof                                           ? record::socket_reason::closed
          : e.error == http::parse_error::header_too_large ? record::socket_reason::header_too_large
          : e.error == http::parse_error::h2_protocol      ? record::socket_reason::h2_protocol
                                                           : record::socket_reason::parse;
      return fail_connection(c, why, now);
    }
    slot& s = slots_[c.first_slot + e.slot];
    if (!s.busy) continue;
    if (e.what == codec_event::kind::first_byte) {
      if (s.times.first_byte.count() == 0) s.times.first_byte = arrived;
      continue;
    }
    if (c.codec->counts_per_stream()) count_stream_bytes(s, e.bytes);
    if (e.what == codec_event::kind::response) {
      complete(
          c, s,
          at_eof ? http::response_end{e.response.status, false, e.response.body_found} : e.response,
          now, arrived);
    } else {
      on_stream_failed(s, e, now);
    }
  }
}

// An HTTP/2 stream that ended without a response. One the server never processed is sent
// again, once, transparently (on the connection with the fewest streams; a connection after
// GOAWAY takes none); a reset follows the retry policy like a lost connection.
void worker::on_stream_failed(slot& s, const codec_event& e, nanoseconds now) {
  const bool unprocessed =
      e.failure == http::stream_failure::refused || e.failure == http::stream_failure::goaway;
  if (unprocessed && !s.times.resent) {
    recorder_->on_h2_unprocessed(s.times);
    record::request_times again = s.times;
    again.resent = true;
    again.sent = again.first_byte = nanoseconds{};
    again.had_to_connect = false;
    mark_free(s);
    return enqueue(again, now);
  }
  if (e.failure == http::stream_failure::reset || e.failure == http::stream_failure::refused) {
    recorder_->on_h2_reset(s.times, e.code);
    return fail_slot(s, record::socket_reason::h2_rst, now);
  }
  fail_slot(s,
            e.failure == http::stream_failure::goaway ? record::socket_reason::goaway
                                                      : record::socket_reason::closed,
            now);
}

void worker::complete(connection& c, slot& s, const http::response_end& response, nanoseconds now,
                      nanoseconds done) {
  c.answered = true;
  settle_response(s, response, done);
  mark_free(s);
  // HTTP/2 keeps its connection whatever a response says (GOAWAY ends it).
  const bool keep = c.codec->counts_per_stream() || (response.keep_alive && config_.keep_alive);
  if (!keep) return close_connection(c, now);
  if (c.in_flight == 0) return became_idle(c, now);
  serve_queue(now);
}
// A whole response, dated `done` by its receive stamp: its status decides if it arrived in
// time; after the deadline it is a timeout, however early it was read.
void worker::settle_response(slot& s, const http::response_end& response, nanoseconds done) {
  const attempt_ending e = settle(deadlines_, s.times, done);
  if (!e.in_time) return time_out(s.times, e, done);
  const auto& statuses =
      s.request.expected_status ? *s.request.expected_status : config_.expected_status;
  const int status = response.status;
  const bool expected = status >= 0 && status < 600 && statuses.test(status);
  const auto cause = retry_cause_of(status);
  if (!cause || !retry(s.times, *cause, done, true)) {
    // Cookies are kept from any final response, as a browser keeps them; captures only from one
    // that passed its other checks.
    const bool checks_pass = expected && response.body_found;
    const bool captured =
        !s.keeps_response || model_->take_response(s.times, s.response, checks_pass);
    auto failed = record::response_check::none;
    if (expected && !response.body_found) {
      failed = record::response_check::body;
    } else if (checks_pass && !captured) {
      failed = record::response_check::capture;
    }
    recorder_->on_response(s.times, done, status,
                           expected && failed == record::response_check::none, failed);
  }
}

// A failure is dated when it was seen; seen at or after the deadline, the request had already
// run out of time, and that is its outcome.
void worker::fail_slot(slot& s, record::socket_reason why, nanoseconds now) {
  if (!s.busy) return;
  const attempt_ending e = settle(deadlines_, s.times, now);
  const auto cause = retry_cause_of(why);
  if (!e.in_time) {
    time_out(s.times, e, now);
  } else if (!cause || !retry(s.times, *cause, now, false)) {
    recorder_->on_socket_error(s.times, now, why);
  }
  mark_free(s);
}

void worker::count_stream_bytes(const slot& s, const http::stream_bytes& bytes) noexcept {
  recorder_->on_sent_bytes(s.times.accounted_at(), bytes.sent);
  recorder_->on_received_bytes(s.times.accounted_at(), bytes.received);
}

// The connection failed: each request it carries fails once (with the bytes its stream had
// moved, where the protocol counts per stream), and it closes.
void worker::fail_connection(connection& c, record::socket_reason why, nanoseconds now) {
  for (std::uint32_t k = 0; k < c.slot_count && c.in_flight > 0; ++k) {
    slot& s = slots_[c.first_slot + k];
    if (s.busy && c.codec->counts_per_stream()) count_stream_bytes(s, c.codec->bytes_of(k));
    fail_slot(s, why, now);
  }
  c.last_failure = why;
  if (c.transport->is_open()) close_connection(c, now, close_cause::failed);
}

// Every connection broke before answering and waits out its backoff: a request due now would
// only wait for a connection the server keeps breaking, so it fails at once, for the reason the
// last of them broke, as it would have on a connection of its own (and none is opened for it).
std::optional<record::socket_reason> worker::all_broken(nanoseconds now) const noexcept {
  if (traits_.users_own_slots) return std::nullopt;
  std::optional<record::socket_reason> why;
  for (const auto& c : connections_) {
    if (c.state != conn_state::closed || c.failed_setups == 0 || c.retry_at <= now) {
      return std::nullopt;
    }
    why = c.last_failure;
  }
  return why;
}

// A request that fails before it is sent: as a failed attempt, under the retry policy.
void worker::fail_unsent(const record::request_times& t, record::socket_reason why,
                         nanoseconds now) {
  const attempt_ending e = settle(deadlines_, t, now);
  const auto cause = retry_cause_of(why);
  if (!e.in_time) return time_out(t, e, now);
  if (!cause || !retry(t, *cause, now, false)) recorder_->on_socket_error(t, now, why);
}

// With the -c connections kept open, each attempt bound to a slot may cost one connection more:
// never more than that, whatever the server does to them.
bool worker::may_open_ahead() const noexcept {
  return stats_.connections_opened < connections_.size() + assigned_;
}

void worker::close_connection(connection& c, nanoseconds now, close_cause cause) {
  c.transport->close();
  did_io();
  c.generation++;
  c.unwritten.clear();  // their slots ended with the connection
  for (std::size_t i = 0; i < idle_.size(); ++i) {
    if (&connections_[idle_[i]] == &c) {
      idle_[i] = idle_.back();
      idle_.pop_back();
      break;
    }
  }
  c.state = conn_state::closed;
  c.write_blocked = false;
  c.peer_closing = false;
  const bool broke = cause == close_cause::failed && !c.answered;
  c.answered = false;
  c.failed_setups = broke ? c.failed_setups + 1 : 0;
  c.retry_at = broke ? now + reopen_backoff(c.failed_setups) : now;
  // Reopen at once while the run needs connections, so the next request finds one ready; a
  // user's own connection opens again only for that user's next request, and one that broke
  // before answering only for a request, after its backoff.
  if (!broke && now < window_end_ && !interrupted_ && traits_.connections_ahead &&
      may_open_ahead()) {
    start_connect(c, now);
  }
}

void worker::became_idle(connection& c, nanoseconds now) {
  // After the server's GOAWAY, or with its close already read, the connection takes no more
  // requests: open a new one.
  if (c.codec->capacity() == 0 || c.peer_closing) return close_connection(c, now);
  c.state = conn_state::idle;
  // HTTP/2 picks the least loaded connection by scanning, and users that own slots take their
  // own: the stack is for HTTP/1.1's shared connections.
  if (!multiplexed_ && !traits_.users_own_slots) idle_.push_back(index_of(c));
  serve_queue(now);
}

}  // namespace punctual::engine
