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

// After a failed connect, a connection is not reopened for this long, so a dead target does
// not turn the worker into a connect loop.
constexpr nanoseconds reconnect_backoff{10'000'000};

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

// A failure that happened while setting a connection up: the next attempt waits for the
// reconnect backoff.
bool is_setup_failure(record::socket_reason why) noexcept {
  switch (why) {
    case record::socket_reason::connect:
    case record::socket_reason::no_ports:
    case record::socket_reason::no_fds:
    case record::socket_reason::tls_handshake:
    case record::socket_reason::tls_verify:
      return true;
    default:
      return false;
  }
}

// The --retry-on class of a socket failure, if it has one. A connection that dies mid-request,
// by RST or by FIN, counts as `reset`; a failed set-up as `connect`; a malformed response and a
// certificate that does not verify are not retried.
std::optional<record::retry_cause> retry_cause_of(record::socket_reason why) noexcept {
  switch (why) {
    case record::socket_reason::reset:
    case record::socket_reason::closed:
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

// What one feed of bytes (or the peer's close) did to the response in flight.
struct response_sink final : http::codec_sink {
  bool completed = false;
  bool broken = false;
  http::response_end response;
  http::parse_error error = http::parse_error::none;

  void on_response(std::uint32_t, const http::response_end& r) override {
    completed = true;
    response = r;
  }
  void on_protocol_error(http::parse_error e) override {
    broken = true;
    error = e;
  }
};

}  // namespace

std::uint32_t worker::open_connections(net::failure& first_error) {
  const nanoseconds begin = net::mono_now();
  // With a connection per user, users open their own: one is opened here only to learn that
  // the target answers (and that its certificate verifies), then closed.
  const std::span<connection> opened =
      per_user_ ? std::span<connection>(connections_).first(1) : std::span<connection>(connections_);
  for (auto& c : opened) start_connect(c, begin);
  const auto note = [&first_error](const net::failure& f) {
    // A certificate that does not verify is the failure to tell: it will not go away.
    if (first_error.kind == net::failure_kind::none ||
        (f.kind == net::failure_kind::tls_verify && first_error.kind != f.kind)) {
      first_error = f;
    }
  };
  for (auto& c : opened) {
    if (c.state == conn_state::closed) note(c.transport->last_failure());
  }
  for (;;) {
    const nanoseconds now = net::mono_now();
    std::uint32_t pending = 0;
    for (auto& c : opened) {
      if (c.state != conn_state::connecting) continue;
      if (c.connect_started + config_.connect_timeout <= now) {
        close_connection(c, now, true);
        note({net::failure_kind::connect, "connect timed out"});
      } else {
        ++pending;
      }
    }
    if (pending == 0) break;
    for (const auto& ev : loop_.wait(events_, std::chrono::milliseconds(10))) {
      if (ev.data.u64 == wake_token) continue;
      connection& c = connections_[ev.data.u64];
      if (c.state != conn_state::connecting) continue;
      const net::setup_status st = c.transport->advance();
      if (st == net::setup_status::ready) {
        note_handshake(c.transport->tls(), net::mono_now());
        c.state = conn_state::idle;
        idle_.push_back(static_cast<std::uint32_t>(ev.data.u64));
      } else if (st == net::setup_status::failed) {
        note(c.transport->last_failure());
        close_connection(c, net::mono_now(), true);
      }
    }
  }
  const auto ready = static_cast<std::uint32_t>(idle_.size());
  if (per_user_) {
    for (auto& c : opened) {
      if (c.state != conn_state::closed) close_connection(c, net::mono_now());
      c.transport->forget_session();  // the first user must not resume the check's session
    }
  }
  return ready;
}

void worker::start_connect(connection& c, nanoseconds now) {
  c.connect_started = now;
  const net::setup_status st = c.transport->open(config_.target, loop_, token_of(c));
  if (st == net::setup_status::failed) {
    c.state = conn_state::closed;
    c.last_connect_failed = true;
    c.retry_at = now + reconnect_backoff;
    if (slot_of(c).busy) fail(c, reason_of(c.transport->last_failure().kind), now);
    return;
  }
  c.state = conn_state::connecting;
  if (st == net::setup_status::ready) on_set_up(c, now);
}

void worker::on_event(const epoll_event& ev, nanoseconds now) {
  if (ev.data.u64 == wake_token) {
    std::uint64_t drained = 0;
    [[maybe_unused]] const auto n = read(wake_fd_, &drained, sizeof drained);
    return;
  }
  connection& c = connections_[ev.data.u64];
  if (!c.transport->is_open()) return;
  if (c.state == conn_state::connecting) {
    const net::setup_status st = c.transport->advance();
    if (st == net::setup_status::failed) {
      const record::socket_reason why = reason_of(c.transport->last_failure().kind);
      if (slot_of(c).busy) return fail(c, why, now);
      return close_connection(c, now, true);
    }
    if (st == net::setup_status::ready) on_set_up(c, now);
    return;
  }
  slot& s = slot_of(c);
  if ((ev.events & EPOLLOUT) && c.state == conn_state::busy && s.written < s.request.bytes.size()) {
    continue_write(s, now);
  }
  if (c.transport->is_open() && (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
    on_readable(c, now, (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
  }
}

void worker::on_set_up(connection& c, nanoseconds now) {
  c.last_connect_failed = false;
  note_handshake(c.transport->tls(), now);
  recorder_->count_reconnect();
  if (slot_of(c).busy) return send_request(slot_of(c), now);
  became_idle(c, now);
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
  s.written = 0;
  s.request = requests_.request(s.times.name);
  s.keeps_response = false;
  if (sessions_) {  // a hybrid user's step: its own values in, its captures out
    sessions_->personalize(s.times, s.request, s.rendered);
    s.keeps_response = sessions_->wants_response(s.times);
  }
  // The actual send is the moment just before the first write, not when this batch began.
  now = net::mono_now();
  s.times.sent = now;
  c.codec->begin(c.first_slot, s.request.head, s.request.expect_body,
                 s.keeps_response ? &s.response : nullptr);
  recorder_->on_sent(s.times, s.request.bytes.size());
  continue_write(s, now);
}

void worker::continue_write(slot& s, nanoseconds now) {
  connection& c = connection_of(s);
  const std::string_view bytes = s.request.bytes;
  while (s.written < bytes.size()) {
    const auto r = c.transport->write(bytes.data() + s.written, bytes.size() - s.written);
    if (r.status == net::io_status::would_block) {
      // Rare (requests are small): watch for writability, then go back to reading only.
      c.write_blocked = true;
      c.transport->watch_writable(true);
      return;
    }
    if (r.status != net::io_status::done) {
      return fail(c, r.status == net::io_status::reset ? record::socket_reason::reset
                                                       : record::socket_reason::write,
                  now);
    }
    s.written += r.bytes;
  }
  if (c.write_blocked) {
    c.write_blocked = false;
    c.transport->watch_writable(false);
  }
}

// `read_to_end`: read until the transport has nothing more, even after a short read. Needed
// when the peer's FIN came with this event (it raises no further edge) and when a deadline check
// reads what arrived unnoticed.
void worker::on_readable(connection& c, nanoseconds now, bool read_to_end) {
  // A FIN read alone carries no receive stamp. When it follows bytes read in this same call it
  // was already queued behind them (or came within microseconds), and the kernel stamps a read
  // with the newest packet it consumed, the FIN's: so those bytes' arrival dates the close.
  nanoseconds last_arrival{};
  for (;;) {
    nanoseconds stamp{};
    const auto r = c.transport->read(read_buffer_.data(), read_buffer_.size(), stamp);
    if (r.status == net::io_status::would_block) return;
    now = net::mono_now();  // a request sent earlier in this loop may already be answered
    if (r.status == net::io_status::done) {
      last_arrival = arrival_time(slot_of(c), stamp, now);
      if (!on_bytes(c, read_buffer_.data(), r.bytes, now, last_arrival)) return;
      // A short read drained the socket and a later arrival raises a new edge, so the read that
      // would only return EAGAIN is skipped.
      if (r.bytes < read_buffer_.size() && !read_to_end && c.transport->drained_after_short_read()) {
        return;
      }
      continue;
    }
    slot& s = slot_of(c);
    if (!s.busy) return close_connection(c, now);
    if (r.status == net::io_status::closed) {
      response_sink sink;
      c.codec->finish_on_eof(sink);
      if (sink.completed) {
        sink.response.keep_alive = false;
        return complete(c, s, sink.response, now, last_arrival.count() != 0 ? last_arrival : now);
      }
      return fail(c, record::socket_reason::closed, now);
    }
    return fail(c, r.status == net::io_status::reset ? record::socket_reason::reset
                                                     : record::socket_reason::read,
                now);
  }
}

// When bytes that were read late arrived: the kernel's receive stamp, kept between the send
// and the read so a stepped wall clock cannot date a response outside its own life. On TCP the
// stamp is that of the last packet the read consumed, so a response that arrived in several
// packets and was read in one go gets its first byte dated at its last packet.
nanoseconds worker::arrival_time(const slot& s, nanoseconds stamp,
                                 nanoseconds read_at) const noexcept {
  if (stamp.count() == 0) return read_at;
  return std::clamp(to_mono_(stamp), std::min(s.times.sent, read_at), read_at);
}

// Returns false when the connection was closed and must not be read further. `arrived`: when
// the bytes reached the socket; `now`: when they were read.
bool worker::on_bytes(connection& c, const char* data, std::size_t size, nanoseconds now,
                      nanoseconds arrived) {
  slot& s = slot_of(c);
  if (!s.busy || c.state != conn_state::busy) {
    close_connection(c, now);  // bytes nobody asked for: the connection is out of step
    return false;
  }
  recorder_->on_received_bytes(s.times.accounted_at(), size);
  if (s.times.first_byte.count() == 0) s.times.first_byte = arrived;
  response_sink sink;
  const std::size_t consumed = c.codec->feed(data, size, sink);
  if (sink.broken) {
    fail(c, sink.error == http::parse_error::header_too_large ? record::socket_reason::header_too_large
                                                              : record::socket_reason::parse,
         now);
    return false;
  }
  if (!sink.completed) return true;
  const bool stray = consumed != size;
  complete(c, s, sink.response, now, arrived);
  // Completing may have closed the connection, and reopened it: then these bytes' socket is gone.
  const bool carried_on = c.state == conn_state::idle || c.state == conn_state::busy;
  if (stray && carried_on) {
    close_connection(c, now);
    return false;
  }
  return carried_on;
}

void worker::complete(connection& c, slot& s, const http::response_end& response, nanoseconds now,
                      nanoseconds done) {
  settle_response(s, response, done);
  mark_free(s);
  if (!response.keep_alive || !config_.keep_alive) return close_connection(c, now);
  became_idle(c, now);
}

// A whole response, dated `done` by its receive stamp: its status decides if it arrived in
// time; after the deadline it is a timeout, however early it was read.
void worker::settle_response(slot& s, const http::response_end& response, nanoseconds done) {
  const attempt_ending e = settle(deadlines_, s.times, done);
  if (!e.in_time) return time_out(s.times, e, done);
  const auto& statuses = s.request.expected_status ? *s.request.expected_status : config_.expected_status;
  const int status = response.status;
  const bool expected = status >= 0 && status < 600 && statuses.test(status);
  const auto cause = retry_cause_of(status);
  if (!cause || !retry(s.times, *cause, done, true)) {
    // Cookies are kept from any final response, as a browser keeps them; captures only from one
    // that passed its other checks.
    const bool checks_pass = expected && response.body_found;
    const bool captured = !s.keeps_response || sessions_->take_response(s.times, s.response, checks_pass);
    auto failed = record::response_check::none;
    if (expected && !response.body_found) {
      failed = record::response_check::body;
    } else if (checks_pass && !captured) {
      failed = record::response_check::capture;
    }
    recorder_->on_response(s.times, done, status, expected && failed == record::response_check::none, failed);
  }
}

// A failure is dated when it was seen; seen at or after the deadline, the request had already
// run out of time, and that is its outcome.
void worker::fail(connection& c, record::socket_reason why, nanoseconds now) {
  slot& s = slot_of(c);
  if (s.busy) {
    const attempt_ending e = settle(deadlines_, s.times, now);
    const auto cause = retry_cause_of(why);
    if (!e.in_time) {
      time_out(s.times, e, now);
    } else if (!cause || !retry(s.times, *cause, now, false)) {
      recorder_->on_socket_error(s.times, now, why);
    }
  }
  mark_free(s);
  if (c.transport->is_open()) close_connection(c, now, is_setup_failure(why));
}

void worker::close_connection(connection& c, nanoseconds now, bool connect_failed) {
  c.transport->close();
  for (std::size_t i = 0; i < idle_.size(); ++i) {
    if (&connections_[idle_[i]] == &c) {
      idle_[i] = idle_.back();
      idle_.pop_back();
      break;
    }
  }
  c.state = conn_state::closed;
  c.write_blocked = false;
  c.last_connect_failed = connect_failed;
  c.retry_at = connect_failed ? now + reconnect_backoff : now;
  c.next_send = now + config_.think;  // closed model: the next request follows this one's end
  // Reopen at once while the run needs connections, so the next request finds one ready; a
  // user's own connection opens again only for that user's next step.
  if (!connect_failed && now < window_end_ && !interrupted_ && !per_user_) start_connect(c, now);
}

void worker::became_idle(connection& c, nanoseconds now) {
  c.state = conn_state::idle;
  c.next_send = now + config_.think;
  if (per_user_) return;  // it waits for its own user's next step
  idle_.push_back(static_cast<std::uint32_t>(&c - connections_.data()));
  serve_queue(now);
}

}  // namespace punctual::engine
