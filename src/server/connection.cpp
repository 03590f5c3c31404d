#include "server/connection.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "net/socket.hpp"
#include "server/cpu_burn.hpp"
#include "server/h2_connection.hpp"

namespace punctual::server {

using std::chrono::nanoseconds;

namespace {

// Faults after which the connection cannot carry another response.
bool closes_connection(fault_kind kind) {
  switch (kind) {
    case fault_kind::reset:
    case fault_kind::garbage:
    case fault_kind::close_delimited:
    case fault_kind::http10:
    case fault_kind::close_after:
      return true;
    default:
      return false;
  }
}

// Enough for any ClientHello; a client that sends more before an answer gets it anyway.
constexpr std::size_t max_hello_bytes = 64 * 1024;

// The first TLS record is complete, or what came cannot be TLS (answered as it is).
bool hello_complete(std::string_view bytes) {
  if (bytes.size() >= max_hello_bytes) return true;
  if (bytes.size() < 5) return false;
  if (bytes[0] != 0x16) return true;  // not a handshake record
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  return bytes.size() >= 5 + ((std::size_t{b[3]} << 8) | b[4]);
}

}  // namespace

void pending_queue::push(const pending_response& r) {
  if (count_ == items_.size()) {
    std::vector<pending_response> bigger(items_.size() * 2);
    for (std::size_t i = 0; i < count_; ++i) bigger[i] = items_[(head_ + i) % items_.size()];
    items_.swap(bigger);
    head_ = 0;
  }
  items_[(head_ + count_) % items_.size()] = r;
  ++count_;
}

void pending_queue::pop() {
  head_ = (head_ + 1) % items_.size();
  --count_;
}

connection::connection(int fd, std::uint32_t generation, nanoseconds now, nanoseconds idle_close,
                       std::unique_ptr<tls_session> tls, tls_fault_kind hostile,
                       std::unique_ptr<h2_connection> h2)
    : fd_(fd),
      generation_(generation),
      idle_close_(idle_close),
      last_activity_(now),
      tls_(std::move(tls)),
      hostile_(hostile),
      h2_(std::move(h2)) {}

connection::~connection() = default;

ssize_t connection::receive(char* buffer, std::size_t size, std::chrono::nanoseconds& stamp) {
  stamp = std::chrono::nanoseconds{0};
  return tls_ ? tls_->read(buffer, size) : net::recv_stamped(fd_, buffer, size, stamp);
}

ssize_t connection::send_some(const char* data, std::size_t size) {
  return tls_ ? tls_->write(data, size) : ::send(fd_, data, size, MSG_NOSIGNAL);
}

bool connection::on_hello_bytes(std::string_view data, const tls_context& tls,
                                const response_set& responses) {
  last_activity_ =
      std::chrono::duration_cast<nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  if (hello_answered_) return false;  // what follows the ClientHello is never looked at
  hello_.append(data.substr(0, max_hello_bytes - std::min(hello_.size(), max_hello_bytes)));
  if (!hello_complete(hello_)) return false;
  hello_answered_ = true;
  reading_closed_ = true;
  switch (hostile_) {
    case tls_fault_kind::none:
    case tls_fault_kind::stall_handshake:
      return false;
    case tls_fault_kind::garbage_hello:
      out_ = tls.garbage();
      break;
    case tls_fault_kind::close_in_handshake:
      out_ = tls.first_server_record(hello_);
      break;
    case tls_fault_kind::plaintext_answer:
      out_ = responses.bad_request;
      break;
  }
  close_after_write_ = true;
  return true;
}

void connection::before_close() {
  // A reset fault ends the connection abortively: no close_notify before the RST.
  if (tls_ && !reset_after_write_) tls_->close_notify();
}

void connection::queue(const pending_response& r) {
  // Responses leave in request order, so one never overtakes an earlier, slower one.
  last_due_ = std::max(r.due, last_due_);
  pending_response queued = r;
  queued.due = last_due_;
  pending_.push(queued);
}

void connection::on_bytes(std::string_view data, nanoseconds arrival, answer_policy& policy) {
  last_activity_ = arrival;
  if (h2_) {
    reading_closed_ = !h2_->on_bytes(data, arrival, policy);
    return;
  }
  while (!reading_closed_ && !data.empty()) {
    const request_event ev = reader_.feed(data);
    data.remove_prefix(ev.consumed);
    if (ev.what == request_event::kind::request) {
      burn_cpu(policy.cpu_per_request);
      pending_response r;
      r.arrival = arrival;
      r.due = std::max(arrival + policy.service.next(), last_due_);
      r.keep_alive = ev.keep_alive;
      r.fault = policy.faults.next();
      if (!policy.id_header.empty()) r.tag.assign(request_header(ev.head, policy.id_header));
      if (policy.mark_late.count() > 0 && r.due - arrival >= policy.mark_late) {
        r.kind = response_kind::late;
      }
      queue(r);
      reading_closed_ = !ev.keep_alive || closes_connection(r.fault.kind);
    } else if (ev.what == request_event::kind::error) {
      queue({arrival, arrival, response_kind::bad_request, false, {}, {}});
      reading_closed_ = true;
    }
  }
}

std::optional<nanoseconds> connection::next_wakeup() const {
  if (h2_) {
    if (const auto at = h2_->next_wakeup()) return at;
  }
  if (trickling_) return trickle_next_;
  // While a closing response is still being written, later requests wait for EPOLLOUT.
  if (closing()) return std::nullopt;
  if (!pending_.empty()) return pending_.front().due;
  if (idle_close_.count() > 0 && !muted_) return last_activity_ + idle_close_;
  return std::nullopt;
}

void connection::start_response(const pending_response& r, nanoseconds now,
                                const response_set& responses, arrival_recorder& recorder) {
  last_activity_ = now;
  if (r.fault.kind == fault_kind::never) {
    muted_ = true;
    recorder.record(r.arrival, nanoseconds{0}, r.tag);
    return;
  }
  recorder.record(r.arrival, now, r.tag);
  close_after_write_ = !r.keep_alive || closes_connection(r.fault.kind);
  const bool late = r.kind == response_kind::late;
  switch (r.fault.kind) {
    case fault_kind::none:
    case fault_kind::never:
      if (r.kind == response_kind::bad_request) {
        out_ += responses.bad_request;
      } else if (r.keep_alive) {
        out_ += late ? responses.late : responses.ok;
      } else {
        out_ += late ? responses.late_close : responses.ok_close;
      }
      return;
    case fault_kind::reset:
      out_.append(responses.ok, 0, std::min(r.fault.reset_after_bytes, responses.ok.size()));
      close_after_write_ = false;
      reset_after_write_ = true;
      return;
    case fault_kind::garbage:
      out_ += responses.garbage;
      return;
    case fault_kind::close_delimited:
      out_ += responses.close_delimited;
      return;
    case fault_kind::huge_headers:
      out_ += responses.huge_headers;
      return;
    case fault_kind::trickle:
      out_ += responses.trickle_head;
      trickling_ = !responses.trickle_body.empty();
      trickle_pos_ = 0;
      trickle_next_ = now + response_set::trickle_interval;
      return;
    case fault_kind::continue_:
      out_ += responses.continue_;
      return;
    case fault_kind::chunked:
      out_ += responses.chunked;
      return;
    case fault_kind::http10:
      out_ += responses.http10;
      return;
    case fault_kind::close_after:
      out_ += responses.ok;
      return;
    case fault_kind::unavailable:
      out_ += responses.unavailable;
      return;
    case fault_kind::too_many:
      out_ += responses.too_many;
      return;
  }
}

void connection::advance_trickle(nanoseconds now, const response_set& responses) {
  while (trickling_ && trickle_next_ <= now) {
    out_ += responses.trickle_body[trickle_pos_++];
    last_activity_ = now;
    trickling_ = trickle_pos_ < responses.trickle_body.size();
    // From the planned time, not `now`, so a late wake-up does not stretch the trickle.
    trickle_next_ += response_set::trickle_interval;
  }
}

bool connection::idle_expired(nanoseconds now) const {
  return idle_close_.count() > 0 && !muted_ && pending_.empty() && !trickling_ &&
         (!h2_ || h2_->idle()) && out_sent_ == out_.size() && now >= last_activity_ + idle_close_;
}

connection::status connection::flush(nanoseconds now, const response_set& responses,
                                     arrival_recorder& recorder) {
  if (out_sent_ == out_.size()) {
    out_.clear();  // keeps its capacity: steady-state answering allocates nothing
    out_sent_ = 0;
  }
  if (h2_) return flush_h2(now, recorder);
  advance_trickle(now, responses);
  while (!closing() && !trickling_ && !pending_.empty() && pending_.front().due <= now) {
    const pending_response r = pending_.front();
    pending_.pop();
    if (muted_) {
      recorder.record(r.arrival, nanoseconds{0}, r.tag);
    } else {
      start_response(r, now, responses, recorder);
    }
  }
  const status s = write_out();
  if (s == status::close) return s;
  if (out_sent_ < out_.size() || trickling_) return status::open;  // EPOLLOUT or a timer
  if (reset_after_write_) {
    const linger abortive{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
    return status::close;
  }
  if (close_after_write_) return status::close;
  if (peer_closed_ && pending_.empty()) return status::close;
  if (idle_expired(now)) return status::close;
  return status::open;
}

connection::status connection::write_out() {
  while (out_sent_ < out_.size()) {
    const ssize_t n = send_some(out_.data() + out_sent_, out_.size() - out_sent_);
    if (n > 0) {
      out_sent_ += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return status::open;
    } else {
      return status::close;
    }
  }
  return status::open;
}

// HTTP/2: the streams due are submitted and nghttp2's frames written, a budget at a time
// while the socket takes them, so a large body is never copied whole into out_.
connection::status connection::flush_h2(nanoseconds now, arrival_recorder& recorder) {
  if (idle_expired(now)) h2_->go_away();  // closed below once the GOAWAY is out
  for (;;) {
    const bool more = h2_->produce(now, recorder, out_, out_.size() - out_sent_);
    if (out_sent_ < out_.size()) last_activity_ = now;  // the idle limit counts from here
    if (write_out() == status::close) return status::close;
    if (out_sent_ < out_.size()) return status::open;  // EPOLLOUT calls again
    out_.clear();
    out_sent_ = 0;
    if (!more) break;
  }
  if (h2_->finished()) return status::close;
  if (peer_closed_ && h2_->idle()) return status::close;
  return status::open;
}

void connection::abandon(arrival_recorder& recorder) {
  if (h2_) h2_->abandon(recorder);
  while (!pending_.empty()) {
    recorder.record(pending_.front().arrival, nanoseconds{0}, pending_.front().tag);
    pending_.pop();
  }
}

}  // namespace punctual::server
