// Plain TCP behind the transport interface: a non-blocking socket, edge-triggered, stamped.
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

#include "net/transport.hpp"

namespace punctual::net {
namespace {

class tcp_transport final : public transport {
 public:
  ~tcp_transport() override { close(); }

  setup_status open(const address& to, poller& loop, std::uint64_t token) noexcept override {
    loop_ = &loop;
    token_ = token;
    const int fd = start_connect(to);
    if (fd < 0) return fail(-fd);
    enable_receive_timestamps(fd);
    fd_ = fd;
    loop.add(fd_, transport_write_events, token_);
    return setup_status::in_progress;
  }

  setup_status advance() noexcept override {
    const int err = finish_connect(fd_);
    if (err != 0) return fail(err);
    loop_->modify(fd_, transport_read_events, token_);
    return setup_status::ready;
  }

  const failure& last_failure() const noexcept override { return failure_; }

  io_result read(char* buffer, std::size_t size, nanoseconds& stamp) noexcept override {
    return read_stamped(fd_, buffer, size, stamp);
  }
  io_result write(const char* data, std::size_t size) noexcept override {
    return write_some(fd_, data, size);
  }
  bool drained_after_short_read() const noexcept override { return true; }
  void watch_writable(bool on) noexcept override {
    loop_->modify(fd_, on ? transport_read_events | transport_write_events : transport_read_events,
                  token_);
  }

  void close() noexcept override {
    if (fd_ < 0) return;
    loop_->remove(fd_);
    close_socket(fd_);
    fd_ = -1;
  }
  bool is_open() const noexcept override { return fd_ >= 0; }
  const tls_state& tls() const noexcept override { return no_tls_; }
  void forget_session() noexcept override {}

 private:
  setup_status fail(int err) noexcept {
    failure_.kind = connect_failure_kind(err);
    failure_.text = std::strerror(err);
    return setup_status::failed;
  }

  poller* loop_ = nullptr;
  std::uint64_t token_ = 0;
  int fd_ = -1;
  failure failure_;
  tls_state no_tls_;
};

class tcp_factory final : public transport_factory {
 public:
  std::unique_ptr<transport> make() override { return std::make_unique<tcp_transport>(); }
};

}  // namespace

failure_kind connect_failure_kind(int err) noexcept {
  if (err == EADDRNOTAVAIL) return failure_kind::no_ports;
  if (err == EMFILE || err == ENFILE) return failure_kind::no_fds;
  return failure_kind::connect;
}

std::unique_ptr<transport_factory> tcp_transport_factory() {
  return std::make_unique<tcp_factory>();
}

}  // namespace punctual::net
