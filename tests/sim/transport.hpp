// The engine's transport over the simulated network (network.hpp): what tcp_transport does
// over a socket, with virtual time. Receive stamps are the virtual instant the newest segment a
// read took arrived, on the virtual CLOCK_REALTIME, as the kernel's SO_TIMESTAMPNS would be.
#pragma once

#include <memory>

#include "net/transport.hpp"
#include "network.hpp"
#include "poller.hpp"

namespace punctual::sim {

class sim_transport final : public net::transport, private client_end {
 public:
  explicit sim_transport(network& net) : net_(net) {}
  ~sim_transport() override { close(); }

  net::setup_status open(const net::address& to, net::poller& loop,
                         std::uint64_t token) noexcept override;
  net::setup_status advance() noexcept override;
  const net::failure& last_failure() const noexcept override { return failure_; }
  net::io_result read(char* buffer, std::size_t size, nanoseconds& stamp) noexcept override;
  net::io_result write(const char* data, std::size_t size) noexcept override;
  bool drained_after_short_read() const noexcept override { return true; }
  void watch_writable(bool) noexcept override {}
  void close() noexcept override;
  bool is_open() const noexcept override { return conn_ != nullptr; }
  const net::tls_state& tls() const noexcept override { return no_tls_; }
  void forget_session() noexcept override {}

  // The connection it carries now (null when closed): the checks' way to its byte logs.
  const connection* current() const noexcept { return conn_.get(); }

 private:
  void on_connect_result(bool established) override;
  void on_arrival(std::uint32_t events) override;

  network& net_;
  sim_poller* poller_ = nullptr;
  std::uint64_t token_ = 0;
  std::shared_ptr<connection> conn_;
  bool answered_ = false;  // the connect's outcome came
  net::failure failure_;
  net::tls_state no_tls_;
};

class sim_transport_factory final : public net::transport_factory {
 public:
  explicit sim_transport_factory(network& net) : net_(net) {}
  std::unique_ptr<net::transport> make() override { return std::make_unique<sim_transport>(net_); }

 private:
  network& net_;
};

}  // namespace punctual::sim
