// The simulation's in-memory network: TCP connections between the engine's transports and the
// scripted server, each direction a link with a one-way delay and a bandwidth. A write becomes
// segments (at most an MSS each, or split at random points), each arriving when the link has
// carried it; a FIN arrives after the data before it, a RST as soon as the delay allows (data
// still on its way behind it is lost). A FIN that finds data unread is merged into its last
// segment, which takes the FIN's arrival as its stamp, as Linux does (docs/design.md, "How the
// times are taken"). A client write may cost the worker time on its own clock. Every read the
// client makes is logged with the stamp it got, and every segment with when it arrived, so a
// test can say exactly when each byte came.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "world.hpp"

namespace punctual::sim {

struct link {
  nanoseconds delay{50'000};   // one way
  double bytes_per_ns = 1.25;  // 10 Gbit/s
  std::size_t mss = 1448;
  bool random_splits = false;  // a write may also be cut at random points
  // What one write onto this link costs the writer on its own clock, as a system call does: the
  // bytes leave at the write's start, and the writer's clock reads this much later after it.
  // The client's writes only (the up link); 0 keeps a worker's turn at one instant.
  nanoseconds write_cost{};
};

// How the server meets a new connection.
enum class accept_fate : std::uint8_t {
  accept,
  refuse,  // RST to the SYN: the connect fails (ECONNREFUSED)
  hang,    // no answer: the connect never completes
  reset,   // accepted, then reset at once
};

class connection;

// The client's end of a connection: the transport, told of what reaches it.
class client_end {
 public:
  virtual void on_connect_result(bool established) = 0;
  virtual void on_arrival(std::uint32_t events) = 0;  // EPOLLIN, EPOLLRDHUP, EPOLLHUP, EPOLLERR

 protected:
  ~client_end() = default;
};

// The server's end: the scripted server, told of what reaches it.
class server_end {
 public:
  virtual accept_fate on_accept(connection& c) = 0;
  virtual void on_data(connection& c, std::string_view bytes) = 0;
  virtual void on_closed_by_client(connection& c) = 0;  // FIN or RST from the client

 protected:
  ~server_end() = default;
};

// When bytes up to an offset of a stream came: one entry per segment or read, in order.
struct byte_mark {
  std::uint64_t end = 0;  // the offset just past the last byte
  nanoseconds at{};
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(std::uint64_t serial, client_end& client) : serial(serial), client_(&client) {}

  const std::uint64_t serial;
  // Server to client: what arrived and what the client read (with the stamp each read got).
  std::vector<byte_mark> arrivals;
  std::vector<byte_mark> reads;
  nanoseconds fin_arrived{};      // when the server's FIN reached the client (zero: it did not)
  std::uint64_t client_sent = 0;  // bytes the client wrote
  std::uint64_t server_sent = 0;  // bytes the server wrote
  void* server_state = nullptr;   // the server's, for its own use

  // When the segment holding byte `offset` of the server's stream arrived, and the stamp of the
  // client's read that took it (zero: not arrived, or not read).
  nanoseconds arrival_of(std::uint64_t offset) const noexcept;
  nanoseconds read_stamp_of(std::uint64_t offset) const noexcept;
  bool established() const noexcept { return established_; }
  bool reset_arrived() const noexcept { return reset_in_; }
  bool client_closed() const noexcept { return client_gone_; }

 private:
  friend class network;
  struct segment {
    std::string bytes;
    nanoseconds arrived{};  // the stamp a read of it gets (a FIN merged into it: the FIN's)
  };
  client_end* client_;
  bool established_ = false;
  bool client_gone_ = false;                   // the client closed (a RST, SO_LINGER 0)
  bool server_gone_ = false;                   // the server closed or reset
  bool fin_in_ = false;                        // a FIN reached the client
  bool reset_in_ = false;                      // a RST reached the client
  nanoseconds reset_at_ = nanoseconds::max();  // when a RST will reach the client
  nanoseconds fin_at_ = nanoseconds::max();    // when a FIN will reach the client
  std::deque<segment> coming_;                 // on the link to the client, by arrival
  std::deque<segment> rx_;                     // arrived at the client, not read
  std::size_t rx_first_used_ = 0;              // bytes of rx_.front() already read
  std::uint64_t rx_read_ = 0;                  // offset of the next byte the client reads
  nanoseconds to_server_free_{};
  nanoseconds to_client_free_{};
};

struct read_result {
  enum class kind : std::uint8_t { data, would_block, closed, reset } what = kind::would_block;
  std::size_t bytes = 0;
  nanoseconds stamp{};  // virtual CLOCK_MONOTONIC of the newest segment read
};

class network {
 public:
  network(world& w, link up, link down) : world_(w), up_(up), down_(down) {}
  void serve(server_end& s) noexcept { server_ = &s; }

  // The client's side (sim_transport).
  std::shared_ptr<connection> connect(client_end& client);
  void client_write(connection& c, std::string_view bytes);
  read_result client_read(connection& c, char* buffer, std::size_t size);
  void client_close(connection& c);

  // The server's side.
  void server_write(connection& c, std::string_view bytes);
  void server_close(connection& c);  // FIN after what was written
  void server_reset(connection& c);  // RST now: what is still on its way is lost

  world& sim() noexcept { return world_; }
  // Every connection ever made, by serial (1, 2, ...), kept for the checks after a run.
  const std::vector<std::shared_ptr<connection>>& connections() const noexcept { return all_; }

 private:
  // Cuts `bytes` into segments and schedules each one's arrival; `free` is the link's.
  template <typename Arrive>
  void carry(const link& l, nanoseconds& free, std::string_view bytes, Arrive arrive);
  // Hands the client what reached it by `until`: the segments due, then a FIN or RST.
  void deliver(connection& c, nanoseconds until);

  world& world_;
  link up_;    // client to server
  link down_;  // server to client
  server_end* server_ = nullptr;
  std::uint64_t next_serial_ = 1;
  std::vector<std::shared_ptr<connection>> all_;
};

}  // namespace punctual::sim
