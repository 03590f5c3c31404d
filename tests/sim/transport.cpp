#include "transport.hpp"

namespace punctual::sim {

net::setup_status sim_transport::open(const net::address&, net::poller& loop,
                                      std::uint64_t token) noexcept {
  poller_ = static_cast<sim_poller*>(&loop);
  token_ = token;
  answered_ = false;
  conn_ = net_.connect(*this);
  return net::setup_status::in_progress;
}

net::setup_status sim_transport::advance() noexcept {
  if (!conn_ || !answered_) return net::setup_status::in_progress;
  if (conn_->established()) return net::setup_status::ready;
  failure_ = {net::failure_kind::connect, "Connection refused"};
  return net::setup_status::failed;
}

void sim_transport::on_connect_result(bool established) {
  answered_ = true;
  poller_->raise(token_, established ? EPOLLOUT : EPOLLOUT | EPOLLERR | EPOLLHUP);
}

void sim_transport::on_arrival(std::uint32_t events) {
  poller_->raise(token_, events);
}

net::io_result sim_transport::read(char* buffer, std::size_t size, nanoseconds& stamp) noexcept {
  stamp = nanoseconds{0};
  if (!conn_ || !conn_->established()) return {net::io_status::would_block, 0};
  const read_result r = net_.client_read(*conn_, buffer, size);
  switch (r.what) {
    case read_result::kind::data:
      stamp = r.stamp + world::unix_offset;
      return {net::io_status::done, r.bytes};
    case read_result::kind::closed:
      return {net::io_status::closed, 0};
    case read_result::kind::reset:
      return {net::io_status::reset, 0};
    case read_result::kind::would_block:
      break;
  }
  return {net::io_status::would_block, 0};
}

net::io_result sim_transport::write(const char* data, std::size_t size) noexcept {
  if (!conn_ || !conn_->established()) return {net::io_status::would_block, 0};
  if (conn_->reset_arrived()) return {net::io_status::reset, 0};
  net_.client_write(*conn_, {data, size});
  return {net::io_status::done, size};
}

void sim_transport::close() noexcept {
  if (!conn_) return;
  net_.client_close(*conn_);
  conn_ = nullptr;
}

}  // namespace punctual::sim
