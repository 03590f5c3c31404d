// The per-connection state machine: connect, write the request, read and parse the response.
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "engine/worker.hpp"
#include "net/clock.hpp"
#include "net/socket.hpp"

namespace punctual::engine {
namespace {

// Edge-triggered. EPOLLOUT is asked for only while connecting or while a write is blocked:
// otherwise every ACK that frees send-buffer space would wake the worker for nothing, and each
// wake-up costs ~35 us of CPU on these VMs (docs/design.md).
constexpr std::uint32_t read_events = EPOLLIN | EPOLLRDHUP | EPOLLET;
constexpr std::uint32_t write_events = EPOLLOUT | EPOLLET;
// After a failed connect, a connection is not reopened for this long, so a dead target does
// not turn the worker into a connect loop.
constexpr nanoseconds reconnect_backoff{10'000'000};

// Running out of local ports or descriptors is the generator's limit, not the server's failure,
// so it is counted under its own reason.
record::socket_reason connect_failure_reason(int err) noexcept {
  if (err == EADDRNOTAVAIL) return record::socket_reason::no_ports;
  if (err == EMFILE || err == ENFILE) return record::socket_reason::no_fds;
  return record::socket_reason::connect;
}

// The --retry-on class of a socket failure, if it has one. A connection that dies mid-request,
// by RST or by FIN, counts as `reset`; a malformed response is not retried.
std::optional<record::retry_cause> retry_cause_of(record::socket_reason why) noexcept {
  switch (why) {
    case record::socket_reason::reset:
    case record::socket_reason::closed:
      return record::retry_cause::reset;
    case record::socket_reason::connect:
    case record::socket_reason::no_ports:
    case record::socket_reason::no_fds:
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

std::uint32_t worker::open_connections(std::string& first_error) {
  const nanoseconds begin = net::mono_now();
  for (auto& c : connections_) start_connect(c, begin);
  for (;;) {
    const nanoseconds now = net::mono_now();
    std::uint32_t pending = 0;
    for (auto& c : connections_) {
      if (c.state != conn_state::connecting) continue;
      if (c.connect_started + config_.connect_timeout <= now) {
        close_connection(c, now, true);
        if (first_error.empty()) first_error = "connect timed out";
      } else {
        ++pending;
      }
    }
    if (pending == 0) break;
    for (const auto& ev : loop_.wait(events_, std::chrono::milliseconds(10))) {
      if (ev.data.u64 == ~std::uint64_t{0}) continue;
      connection& c = connections_[ev.data.u64];
      if (c.state != conn_state::connecting) continue;
      const int err = net::finish_connect(c.fd);
      if (err == 0) {
        loop_.modify(c.fd, read_events, ev.data.u64);
        c.state = conn_state::idle;
        idle_.push_back(static_cast<std::uint32_t>(ev.data.u64));
      } else {
        if (first_error.empty()) first_error = std::strerror(err);
        close_connection(c, now, true);
      }
    }
  }
  return static_cast<std::uint32_t>(idle_.size());
}

void worker::start_connect(connection& c, nanoseconds now) {
  const int fd = net::start_connect(config_.target);
  c.connect_started = now;
  if (fd < 0) {
    c.state = conn_state::closed;
    c.last_connect_failed = true;
    c.retry_at = now + reconnect_backoff;
    if (c.has_request) fail(c, connect_failure_reason(-fd), now);
    return;
  }
  net::enable_receive_timestamps(fd);
  c.fd = fd;
  c.state = conn_state::connecting;
  loop_.add(fd, write_events, token_of(c));
}

void worker::on_event(const epoll_event& ev, nanoseconds now) {
  if (ev.data.u64 == ~std::uint64_t{0}) {
    std::uint64_t drained = 0;
    [[maybe_unused]] const auto n = read(wake_fd_, &drained, sizeof drained);
    return;
  }
  connection& c = connections_[ev.data.u64];
  if (c.fd < 0) return;
  if (c.state == conn_state::connecting) {
    if (!(ev.events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
    const int err = net::finish_connect(c.fd);
    if (err != 0) {
      if (c.has_request) fail(c, record::socket_reason::connect, now);
      return close_connection(c, now, true);
    }
    return on_connected(c, now);
  }
  if ((ev.events & EPOLLOUT) && c.state == conn_state::busy && c.written < config_.request.size()) {
    continue_write(c, now);
  }
  if (c.fd >= 0 && (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
    on_readable(c, now, (ev.events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
  }
}

void worker::on_connected(connection& c, nanoseconds now) {
  loop_.modify(c.fd, read_events, token_of(c));
  c.last_connect_failed = false;
  recorder_->count_reconnect();
  if (c.has_request) return send_request(c, now);
  became_idle(c, now);
}

void worker::send_request(connection& c, nanoseconds now) {
  c.state = conn_state::busy;
  c.written = 0;
  // The actual send is the moment just before the first write, not when this batch began.
  now = net::mono_now();
  c.times.sent = now;
  c.parser.reset(config_.head_request);
  recorder_->on_sent(c.times, config_.request.size());
  continue_write(c, now);
}

void worker::continue_write(connection& c, nanoseconds now) {
  while (c.written < config_.request.size()) {
    const auto r = net::write_some(c.fd, config_.request.data() + c.written,
                                   config_.request.size() - c.written);
    if (r.status == net::io_status::would_block) {
      // Rare (requests are small): wait for EPOLLOUT, then go back to reading only.
      c.write_blocked = true;
      loop_.modify(c.fd, read_events | write_events, token_of(c));
      return;
    }
    if (r.status != net::io_status::done) {
      return fail(c, r.status == net::io_status::reset ? record::socket_reason::reset
                                                       : record::socket_reason::write,
                  now);
    }
    c.written += r.bytes;
  }
  if (c.write_blocked) {
    c.write_blocked = false;
    loop_.modify(c.fd, read_events, token_of(c));
  }
}

void worker::on_readable(connection& c, nanoseconds now, bool peer_closed) {
  // A FIN read alone carries no receive stamp. When it follows bytes read in this same call it
  // was already queued behind them (or came within microseconds), and the kernel stamps a read
  // with the newest packet it consumed, the FIN's: so those bytes' arrival dates the close.
  nanoseconds last_arrival{};
  for (;;) {
    nanoseconds stamp{};
    const auto r = net::read_stamped(c.fd, read_buffer_.data(), read_buffer_.size(), stamp);
    if (r.status == net::io_status::would_block) return;
    now = net::mono_now();  // a request sent earlier in this loop may already be answered
    if (r.status == net::io_status::done) {
      last_arrival = arrival_time(c, stamp, now);
      if (!on_bytes(c, read_buffer_.data(), r.bytes, now, last_arrival)) return;
      // A short read drained the socket and a later arrival raises a new edge, so the read that
      // would only return EAGAIN is skipped. Not when the peer's FIN came with this event: it
      // raises no further edge, and must be read now.
      if (r.bytes < read_buffer_.size() && !peer_closed) return;
      continue;
    }
    if (!c.has_request) return close_connection(c, now);
    if (r.status == net::io_status::closed) {
      if (c.parser.finish_on_eof() == http::parse_status::complete) {
        return complete(c, now, last_arrival.count() != 0 ? last_arrival : now);
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
nanoseconds worker::arrival_time(const connection& c, nanoseconds stamp,
                                 nanoseconds read_at) const noexcept {
  if (stamp.count() == 0) return read_at;
  return std::clamp(to_mono_(stamp), std::min(c.times.sent, read_at), read_at);
}

// Returns false when the connection was closed and must not be read further. `arrived`: when
// the bytes reached the socket; `now`: when they were read.
bool worker::on_bytes(connection& c, const char* data, std::size_t size, nanoseconds now,
                      nanoseconds arrived) {
  if (!c.has_request || c.state != conn_state::busy) {
    close_connection(c, now);  // bytes nobody asked for: the connection is out of step
    return false;
  }
  recorder_->on_received_bytes(c.times.intended, size);
  if (c.times.first_byte.count() == 0) c.times.first_byte = arrived;
  const auto r = c.parser.feed(data, size);
  if (r.status == http::parse_status::error) {
    fail(c, c.parser.error() == http::parse_error::header_too_large
                ? record::socket_reason::header_too_large
                : record::socket_reason::parse,
         now);
    return false;
  }
  if (r.status == http::parse_status::need_more) return true;
  const bool stray = r.consumed != size;
  complete(c, now, arrived);
  if (stray && c.fd >= 0) {
    close_connection(c, now);
    return false;
  }
  return c.fd >= 0;
}

void worker::complete(connection& c, nanoseconds now, nanoseconds done) {
  settle_response(c, done);
  c.has_request = false;
  if (!c.parser.keep_alive() || !config_.keep_alive) return close_connection(c, now);
  became_idle(c, now);
}

// A whole response, dated `done` by its receive stamp: its status decides if it arrived in
// time; after the deadline it is a timeout, however early it was read.
void worker::settle_response(connection& c, nanoseconds done) {
  const attempt_ending e = settle(deadlines_, c.times, done);
  if (!e.in_time) return time_out(c.times, e, done);
  const int status = c.parser.status_code();
  const bool expected = status >= 0 && status < 600 && config_.expected_status.test(status);
  const auto cause = retry_cause_of(status);
  if (!cause || !retry(c.times, *cause, done, true)) {
    recorder_->on_response(c.times, done, status, expected);
  }
}

// A failure is dated when it was seen; seen at or after the deadline, the request had already
// run out of time, and that is its outcome.
void worker::fail(connection& c, record::socket_reason why, nanoseconds now) {
  if (c.has_request) {
    const attempt_ending e = settle(deadlines_, c.times, now);
    const auto cause = retry_cause_of(why);
    if (!e.in_time) {
      time_out(c.times, e, now);
    } else if (!cause || !retry(c.times, *cause, now, false)) {
      recorder_->on_socket_error(c.times, now, why);
    }
  }
  c.has_request = false;
  const bool connect_failed = why == record::socket_reason::connect ||
                              why == record::socket_reason::no_ports ||
                              why == record::socket_reason::no_fds;
  if (c.fd >= 0) close_connection(c, now, connect_failed);
}

void worker::close_connection(connection& c, nanoseconds now, bool connect_failed) {
  if (c.fd >= 0) {
    loop_.remove(c.fd);
    net::close_socket(c.fd);
    c.fd = -1;
  }
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
  // Reopen at once while the run needs connections, so the next request finds one ready.
  if (!connect_failed && now < window_end_ && !interrupted_) start_connect(c, now);
}

void worker::became_idle(connection& c, nanoseconds now) {
  c.state = conn_state::idle;
  c.next_send = now + config_.think;
  idle_.push_back(static_cast<std::uint32_t>(&c - connections_.data()));
  serve_queue(now);
}

}  // namespace punctual::engine
