#include "server/connection.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace punctual::server {

using std::chrono::nanoseconds;

response_set response_set::make(std::size_t body_size) {
  std::string body(body_size, 'x');
  if (body_size >= 3) body.replace(0, 3, "ok\n");
  if (body_size > 3) body.back() = '\n';
  const std::string length = "Content-Length: " + std::to_string(body_size) + "\r\n";
  const std::string common = length + "Content-Type: text/plain\r\n";
  response_set set;
  set.ok = "HTTP/1.1 200 OK\r\n" + common + "\r\n" + body;
  set.ok_close = "HTTP/1.1 200 OK\r\n" + common + "Connection: close\r\n\r\n" + body;
  set.bad_request =
      "HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
      "Connection: close\r\n\r\nbad request\n";
  return set;
}

const std::string& response_set::bytes(response_kind kind) const {
  switch (kind) {
    case response_kind::ok:
      return ok;
    case response_kind::ok_close:
      return ok_close;
    case response_kind::bad_request:
      break;
  }
  return bad_request;
}

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

connection::connection(int fd, std::uint32_t generation) : fd_(fd), generation_(generation) {}

void connection::queue(nanoseconds arrival, nanoseconds due, response_kind kind) {
  // Responses leave in request order, so one never overtakes an earlier, slower one.
  last_due_ = std::max(due, last_due_);
  pending_.push({arrival, last_due_, kind});
}

bool connection::on_bytes(std::string_view data, nanoseconds arrival, service_sampler& service) {
  const bool was_empty = pending_.empty();
  while (!reading_closed_ && !data.empty()) {
    const request_event ev = reader_.feed(data);
    data.remove_prefix(ev.consumed);
    if (ev.what == request_event::kind::request) {
      const nanoseconds due = arrival + service.next();
      queue(arrival, due, ev.keep_alive ? response_kind::ok : response_kind::ok_close);
      reading_closed_ = !ev.keep_alive;
    } else if (ev.what == request_event::kind::error) {
      queue(arrival, arrival, response_kind::bad_request);
      reading_closed_ = true;
    }
  }
  return was_empty && !pending_.empty();
}

connection::status connection::flush(nanoseconds now, const response_set& responses,
                                     arrival_recorder& recorder) {
  while (!close_after_write_ && !pending_.empty() && pending_.front().due <= now) {
    const pending_response& r = pending_.front();
    if (out_sent_ == out_.size()) {
      out_.clear();
      out_sent_ = 0;
    }
    out_ += responses.bytes(r.kind);
    recorder.record(r.arrival, now);
    close_after_write_ = r.kind != response_kind::ok;
    pending_.pop();
  }
  const status s = write_out();
  if (s == status::close) return s;
  if (out_sent_ < out_.size()) return status::open;  // the rest waits for EPOLLOUT
  if (close_after_write_) return status::close;
  if (peer_closed_ && pending_.empty()) return status::close;
  return status::open;
}

connection::status connection::write_out() {
  while (out_sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
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

void connection::abandon(arrival_recorder& recorder) {
  while (!pending_.empty()) {
    recorder.record(pending_.front().arrival, nanoseconds{0});
    pending_.pop();
  }
}

}  // namespace punctual::server
