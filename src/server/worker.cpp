#include "server/worker.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "net/clock.hpp"
#include "net/socket.hpp"

namespace punctual::server {

using std::chrono::nanoseconds;

namespace {

constexpr std::uint64_t listen_tag = ~std::uint64_t{0} - 1;
constexpr std::uint64_t wake_tag = ~std::uint64_t{0};
constexpr int max_events = 64;

std::uint64_t tag_of(std::uint32_t slot, std::uint32_t generation) {
  return (std::uint64_t{generation} << 32) | slot;
}

void fail(const char* what) {
  throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

worker::worker(int index, const server_config& config, int listen_fd, const stall_gate& gate,
               const response_set& responses, tls_context* tls)
    : gate_(gate),
      responses_(responses),
      tls_(tls),
      listen_fd_(listen_fd),
      policy_(config, static_cast<std::uint64_t>(index)),
      recorder_(!config.arrival_log_path.empty()),
      read_buffer_(64 * 1024) {
  if (config.http2) h2_ = std::make_unique<h2_shared>(config, responses);
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) fail("epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) fail("eventfd");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = wake_tag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) fail("epoll_ctl");
  ev.events = EPOLLIN | EPOLLEXCLUSIVE;
  ev.data.u64 = listen_tag;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) != 0) fail("epoll_ctl");
}

worker::~worker() {
  for (auto& c : slots_) {
    if (c) ::close(c->fd());
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void worker::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void worker::request_stop() {
  stop_.store(true);
  wake();
}

void worker::run() {
  // Timer slack would add up to 50 us to every due time.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  while (!stop_.load(std::memory_order_acquire)) {
    wait_for_events();
    flush_due();
  }
  for (std::uint32_t slot = 0; slot < slots_.size(); ++slot) {
    if (slots_[slot]) close_connection(slot);
  }
}

void worker::wait_for_events() {
  timespec ts{};
  timespec* timeout = nullptr;
  // While the gate is closed nothing may be written, so only a wake-up (gate opened) or I/O
  // is worth waking for.
  if (!gate_.closed() && !ready_.empty()) {
    timeout = &ts;
  } else if (!gate_.closed() && !due_.empty()) {
    const auto left = std::max(nanoseconds{0}, due_.top().due - net::mono_now());
    ts.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
    timeout = &ts;
  }
  epoll_event events[max_events];
  const int n = ::epoll_pwait2(epoll_fd_, events, max_events, timeout, nullptr);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t tag = events[i].data.u64;
    if (tag == wake_tag) {
      std::uint64_t count = 0;
      [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof count);
    } else if (tag == listen_tag) {
      accept_all();
    } else {
      const auto slot = static_cast<std::uint32_t>(tag);
      const auto generation = static_cast<std::uint32_t>(tag >> 32);
      if (slot < slots_.size() && slots_[slot] && slots_[slot]->generation() == generation) {
        on_connection_event(slot, events[i].events);
      }
    }
  }
}

// --fault banner / reset-at-accept: false when the connection is gone already.
bool worker::play_connection_fault(int fd) {
  switch (policy_.connection_faults.next()) {
    case connection_fault::none:
      return true;
    case connection_fault::banner: {
      static constexpr std::string_view banner = "220 punctual serve says hello\r\n";
      [[maybe_unused]] const auto sent = ::send(fd, banner.data(), banner.size(), MSG_NOSIGNAL);
      return true;
    }
    case connection_fault::reset_at_accept: {
      const linger reset{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      ::close(fd);
      return false;
    }
  }
  return true;
}

void worker::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: try again on the next event
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!play_connection_fault(fd)) continue;
    if (!tls_) net::enable_receive_timestamps(fd);
    std::uint32_t slot = 0;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    const std::uint32_t generation = next_generation_++;
    std::unique_ptr<tls_session> session;
    const tls_fault_kind hostile = tls_ ? tls_->next_connection_fault() : tls_fault_kind::none;
    if (tls_ && hostile == tls_fault_kind::none) {
      session = tls_session::open(tls_->native(), fd);
      if (!session) {
        ::close(fd);
        free_slots_.push_back(slot);
        continue;
      }
    }
    // A hostile connection never gets as far as HTTP: it needs no HTTP/2 session.
    std::unique_ptr<h2_connection> h2;
    if (h2_ && hostile == tls_fault_kind::none) {
      h2 = h2_->make();
      if (!h2) {
        ::close(fd);
        free_slots_.push_back(slot);
        continue;
      }
    }
    slots_[slot] = std::make_unique<connection>(fd, generation, net::mono_now(), policy_.idle_close,
                                                std::move(session), hostile, std::move(h2));
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = tag_of(slot, generation);
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close_connection(slot);
    } else {
      arm(slot);  // the idle limit counts from the accept
    }
  }
}

void worker::on_connection_event(std::uint32_t slot, std::uint32_t events) {
  const connection& conn = *slots_[slot];
  if (conn.hostile()) {
    read_hello(slot);
    return;
  }
  // The handshake is the server answering, so it waits behind the stall gate in flush_due:
  // a stalled server answers no ClientHello either.
  if (conn.handshaking()) {
    mark_ready(slot);
    return;
  }
  // OpenSSL may wait for the socket to become writable before it can read on, so a TLS
  // connection reads on every edge.
  const std::uint32_t read_on = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
  if (conn.tls() || (events & read_on)) read_all(slot);
  if (slots_[slot] && (events & EPOLLOUT)) mark_ready(slot);
}

void worker::read_all(std::uint32_t slot) {
  connection& conn = *slots_[slot];
  while (!conn.reading_closed()) {
    nanoseconds stamp{};
    const ssize_t n = conn.receive(read_buffer_.data(), read_buffer_.size(), stamp);
    if (n > 0) {
      // The head is complete when the bytes that complete it arrived: the stamp of the last
      // packet this read consumed, or (TLS, which reads the socket itself) when it was read.
      const nanoseconds arrival = arrival_of(stamp);
      const std::string_view data(read_buffer_.data(), static_cast<std::size_t>(n));
      conn.on_bytes(data, arrival, policy_);
      arm(slot);
      // A short recv() emptied the socket; a TLS read returns one record at a time.
      if (!conn.tls() && static_cast<std::size_t>(n) < read_buffer_.size()) return;
    } else if (n == 0) {
      conn.on_peer_closed();
      mark_ready(slot);
      return;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return;
    } else {
      close_connection(slot);
      return;
    }
  }
}

nanoseconds worker::arrival_of(nanoseconds stamp) noexcept {
  const nanoseconds now = net::mono_now();
  if (stamp.count() == 0) return now;
  // The wall clock may be stepped (NTP): the mapping is taken again once a second.
  to_mono_.refresh_every(net::system_clock(), std::chrono::seconds(1), now);
  return std::min(to_mono_(stamp), now);
}

// A hostile connection reads until the socket is empty, whatever it has answered, so that
// closing it sends a FIN rather than the RST that unread bytes would cause.
void worker::read_hello(std::uint32_t slot) {
  connection& conn = *slots_[slot];
  for (;;) {
    const ssize_t n = ::recv(conn.fd(), read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      const std::string_view data(read_buffer_.data(), static_cast<std::size_t>(n));
      if (conn.on_hello_bytes(data, *tls_, responses_)) mark_ready(slot);
    } else if (n == 0) {
      conn.on_peer_closed();
      mark_ready(slot);
      return;
    } else if (errno != EINTR) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) close_connection(slot);
      return;
    }
  }
}

// Advances the handshake; once it is done, reads what the client sent along with its last
// handshake message (no edge will announce those bytes again). False when the connection is
// gone.
bool worker::finish_handshake(std::uint32_t slot) {
  switch (slots_[slot]->continue_handshake()) {
    case tls_session::step::failed:
      close_connection(slot);
      return false;
    case tls_session::step::pending:
      return true;
    case tls_session::step::done:
      read_all(slot);
      return slots_[slot] != nullptr;
  }
  return true;
}

void worker::mark_ready(std::uint32_t slot) {
  connection& conn = *slots_[slot];
  if (conn.in_ready) return;
  conn.in_ready = true;
  ready_.push_back(slot);
}

// Queues one wake-up per connection for its next timer, unless an earlier one is queued.
void worker::arm(std::uint32_t slot) {
  connection& conn = *slots_[slot];
  const auto at = conn.next_wakeup();
  if (!at || *at >= conn.armed_at) return;
  conn.armed_at = *at;
  due_.push({*at, slot, conn.generation()});
}

void worker::flush_due() {
  if (due_.empty() && ready_.empty()) return;
  if (!stall_gate::begin_write(gate_, writer_)) return;
  if (stop_.load()) {  // checked after the gate: a stall cut short by stop() stays silent
    stall_gate::end_write(writer_);
    return;
  }
  const nanoseconds now = net::mono_now();  // read after the gate check: see stall_gate.hpp
  while (!due_.empty() && due_.top().due <= now) {
    const due_entry e = due_.top();
    due_.pop();
    if (slots_[e.slot] && slots_[e.slot]->generation() == e.generation) {
      // The earliest entry of this connection is gone; flushing re-arms what is left.
      slots_[e.slot]->armed_at = nanoseconds::max();
      mark_ready(e.slot);
    }
  }
  flushing_.swap(ready_);
  for (const std::uint32_t slot : flushing_) {
    if (!slots_[slot]) continue;
    slots_[slot]->in_ready = false;
    if (slots_[slot]->handshaking() && !finish_handshake(slot)) continue;
    connection& conn = *slots_[slot];
    if (conn.flush(now, responses_, recorder_) == connection::status::close) {
      close_connection(slot);
    } else {
      arm(slot);
    }
  }
  flushing_.clear();
  stall_gate::end_write(writer_);
}

void worker::close_connection(std::uint32_t slot) {
  connection& conn = *slots_[slot];
  conn.abandon(recorder_);
  conn.before_close();
  ::close(conn.fd());
  slots_[slot].reset();
  free_slots_.push_back(slot);
}

}  // namespace punctual::server
