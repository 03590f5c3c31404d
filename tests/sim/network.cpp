#include "network.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cstring>

namespace punctual::sim {
namespace {

nanoseconds mark_at(const std::vector<byte_mark>& marks, std::uint64_t offset) noexcept {
  const auto it = std::upper_bound(marks.begin(), marks.end(), offset,
                                   [](std::uint64_t o, const byte_mark& m) { return o < m.end; });
  return it == marks.end() ? nanoseconds{0} : it->at;
}

}  // namespace

nanoseconds connection::arrival_of(std::uint64_t offset) const noexcept {
  return mark_at(arrivals, offset);
}
nanoseconds connection::read_stamp_of(std::uint64_t offset) const noexcept {
  return mark_at(reads, offset);
}

template <typename Arrive>
void network::carry(const link& l, nanoseconds& free, std::string_view bytes, Arrive arrive) {
  while (!bytes.empty()) {
    std::size_t n = std::min(bytes.size(), l.mss);
    if (l.random_splits && n > 1 && world_.unit() < 0.3) n = 1 + world_.next() % (n - 1);
    const nanoseconds start = std::max(free, world_.now());
    free = start + nanoseconds{static_cast<std::int64_t>(static_cast<double>(n) / l.bytes_per_ns)};
    arrive(std::string(bytes.substr(0, n)), free + l.delay);
    bytes.remove_prefix(n);
  }
}

std::shared_ptr<connection> network::connect(client_end& client) {
  auto c = std::make_shared<connection>(next_serial_++, client);
  all_.push_back(c);
  // The SYN reaches the server after one delay; its answer reaches the client after another.
  world_.at(world_.now() + up_.delay, [this, c] {
    if (c->client_gone_) return;
    const accept_fate fate = server_->on_accept(*c);
    if (fate == accept_fate::hang) return;
    c->to_client_free_ = std::max(c->to_client_free_, world_.now());
    const bool established = fate != accept_fate::refuse;
    if (!established) c->server_gone_ = true;
    world_.at(world_.now() + down_.delay, [c, established] {
      if (c->client_gone_) return;
      c->established_ = established;
      c->client_->on_connect_result(established);
    });
    if (fate == accept_fate::reset) server_reset(*c);
  });
  return c;
}

void network::client_write(connection& c, std::string_view bytes) {
  c.client_sent += bytes.size();
  if (c.server_gone_) return;  // the server's kernel would answer with a RST; nothing reads it
  auto self = c.shared_from_this();
  carry(up_, c.to_server_free_, bytes, [this, self](std::string seg, nanoseconds at) {
    world_.at(at, [this, self, seg = std::move(seg)] {
      if (self->server_gone_) return;
      server_->on_data(*self, seg);
    });
  });
  world_.spend(up_.write_cost);
}

void network::client_close(connection& c) {
  if (c.client_gone_) return;
  c.client_gone_ = true;
  c.rx_.clear();
  if (c.server_gone_ || !c.established_) return;
  auto self = c.shared_from_this();
  // SO_LINGER 0: a RST, which overtakes nothing still on the link but arrives after a delay.
  world_.at(world_.now() + up_.delay, [this, self] {
    if (self->server_gone_) return;
    self->server_gone_ = true;
    server_->on_closed_by_client(*self);
  });
}

// What reached the client is due at events of its own, and a read first takes what is due by
// the reader's clock: a worker still busy with its writes (link::write_cost) reads what arrived
// meanwhile, as it would from a kernel. Not what arrives at the read's very instant, whose event
// may come after the reader's, as with writes that cost nothing.
read_result network::client_read(connection& c, char* buffer, std::size_t size) {
  deliver(c, world_.now() - nanoseconds{1});
  read_result r;
  while (r.bytes < size && !c.rx_.empty()) {
    auto& seg = c.rx_.front();
    const std::size_t n = std::min(size - r.bytes, seg.bytes.size() - c.rx_first_used_);
    std::memcpy(buffer + r.bytes, seg.bytes.data() + c.rx_first_used_, n);
    r.bytes += n;
    r.stamp = std::max(r.stamp, seg.arrived);
    c.rx_first_used_ += n;
    if (c.rx_first_used_ == seg.bytes.size()) {
      c.rx_.pop_front();
      c.rx_first_used_ = 0;
    }
  }
  if (r.bytes > 0) {
    r.what = read_result::kind::data;
    c.rx_read_ += r.bytes;
    c.reads.push_back({c.rx_read_, r.stamp});
    return r;
  }
  if (c.reset_in_)
    r.what = read_result::kind::reset;
  else if (c.fin_in_)
    r.what = read_result::kind::closed;
  return r;
}

void network::server_write(connection& c, std::string_view bytes) {
  if (c.server_gone_ || bytes.empty()) return;
  c.server_sent += bytes.size();
  auto self = c.shared_from_this();
  carry(down_, c.to_client_free_, bytes, [this, self](std::string seg, nanoseconds at) {
    self->coming_.push_back({std::move(seg), at});
    world_.at(at, [this, self, at] { deliver(*self, at); });
  });
}

void network::server_close(connection& c) {
  if (c.server_gone_) return;
  c.server_gone_ = true;
  auto self = c.shared_from_this();
  c.fin_at_ = std::max(c.to_client_free_, world_.now()) + down_.delay;
  world_.at(c.fin_at_, [this, self] { deliver(*self, self->fin_at_); });
}

void network::server_reset(connection& c) {
  if (c.server_gone_ && c.reset_at_ != nanoseconds::max()) return;
  c.server_gone_ = true;
  auto self = c.shared_from_this();
  const nanoseconds at = world_.now() + down_.delay;
  c.reset_at_ = at;
  world_.at(at, [this, self, at] { deliver(*self, at); });
}

void network::deliver(connection& c, nanoseconds until) {
  if (c.client_gone_) return;
  std::uint32_t events = 0;
  while (!c.coming_.empty() && c.coming_.front().arrived <= until) {
    connection::segment seg = std::move(c.coming_.front());
    c.coming_.pop_front();
    if (seg.arrived >= c.reset_at_) continue;  // lost behind a RST
    const std::uint64_t end = (c.arrivals.empty() ? 0 : c.arrivals.back().end) + seg.bytes.size();
    c.arrivals.push_back({end, seg.arrived});
    c.rx_.push_back(std::move(seg));
    events |= EPOLLIN;
  }
  if (c.reset_at_ <= until && !c.reset_in_) {
    c.reset_in_ = true;
    events |= EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
  } else if (c.fin_at_ <= until && !c.fin_in_ && !c.reset_in_) {
    c.fin_in_ = true;
    c.fin_arrived = c.fin_at_;
    // Linux appends a FIN that finds data unread to the last buffer of it (tcp_try_coalesce),
    // and that buffer takes the FIN's receive stamp: a read that takes those bytes is stamped
    // with the FIN's arrival, however long before it they came.
    if (!c.rx_.empty()) c.rx_.back().arrived = c.fin_at_;
    events |= EPOLLIN | EPOLLRDHUP;
  }
  if (events) c.client_->on_arrival(events);
}

}  // namespace punctual::sim
