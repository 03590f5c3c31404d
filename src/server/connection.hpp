// One accepted connection of the test server: reads requests, queues their responses in
// arrival order with their due times, writes those that are due, and plays the request's
// fault (fault.hpp) when its response is due. Over TLS the same, once the handshake is done;
// a hostile TLS connection (tls_fault.hpp) plays its fault on the ClientHello instead.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/arrival_log.hpp"
#include "server/fault_picker.hpp"
#include "server/request_reader.hpp"
#include "server/responses.hpp"
#include "server/server_config.hpp"
#include "server/service_time.hpp"
#include "server/tls.hpp"

namespace punctual::server {

class h2_connection;

enum class response_kind : std::uint8_t { ok, late, bad_request };

struct pending_response {
  std::chrono::nanoseconds arrival{0};
  std::chrono::nanoseconds due{0};
  response_kind kind = response_kind::ok;
  bool keep_alive = true;
  fault_choice fault;
  request_tag tag;  // for the arrival log
};

// FIFO ring that keeps its storage: pushing allocates only when it outgrows its capacity.
class pending_queue {
 public:
  pending_queue() : items_(16) {}
  bool empty() const { return count_ == 0; }
  std::size_t size() const { return count_; }
  const pending_response& front() const { return items_[head_]; }
  void push(const pending_response& r);
  void pop();

 private:
  std::vector<pending_response> items_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

// How one server thread answers: service times, faults and the late marker.
struct answer_policy {
  answer_policy(const server_config& config, std::uint64_t stream)
      : service(config, stream),
        faults(config.faults, config.seed, stream),
        connection_faults(config.connection_faults, config.seed, stream),
        mark_late(config.mark_late),
        cpu_per_request(config.cpu_per_request),
        idle_close(config.idle_close),
        id_header(config.arrival_log_id_header) {}

  service_sampler service;
  fault_picker faults;
  connection_fault_picker connection_faults;
  std::chrono::nanoseconds mark_late;
  std::chrono::nanoseconds cpu_per_request;  // burned for each request as it is read
  std::chrono::nanoseconds idle_close;
  std::string id_header;  // the header whose value the arrival log keeps (empty: none)
};

class connection {
 public:
  // `now`: the accept time, from which an idle connection counts its idle time. Plain TCP
  // without `tls`; `hostile` (with no `tls`) plays that TLS fault instead of handshaking.
  // With `h2` the bytes are HTTP/2, handed to it (h2_connection.hpp), not HTTP/1.1.
  connection(int fd, std::uint32_t generation, std::chrono::nanoseconds now,
             std::chrono::nanoseconds idle_close, std::unique_ptr<tls_session> tls = nullptr,
             tls_fault_kind hostile = tls_fault_kind::none,
             std::unique_ptr<h2_connection> h2 = nullptr);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  int fd() const { return fd_; }
  std::uint32_t generation() const { return generation_; }

  bool tls() const { return tls_ != nullptr; }
  bool handshaking() const { return tls_ && !tls_->handshake_done(); }
  tls_session::step continue_handshake() { return tls_->handshake(); }
  bool hostile() const { return hostile_ != tls_fault_kind::none; }

  // Reads as recv() does, through TLS on a TLS connection.
  // `stamp`: the kernel's receive stamp (CLOCK_REALTIME) of a plain read, 0 for TLS.
  ssize_t receive(char* buffer, std::size_t size, std::chrono::nanoseconds& stamp);
  // Hostile connections: bytes of the ClientHello. Once it is complete, queues the fault's
  // answer; true when there is something to write.
  bool on_hello_bytes(std::string_view data, const tls_context& tls, const response_set& responses);
  // Just before the socket is closed: a TLS connection that ends in good order says
  // close_notify, so that a client can tell the end from a truncation.
  void before_close();

  // Parses bytes read at `arrival`; queues a response per request (due = arrival + service,
  // never before the previous one) with the fault drawn for it.
  void on_bytes(std::string_view data, std::chrono::nanoseconds arrival, answer_policy& policy);
  void on_peer_closed() { reading_closed_ = peer_closed_ = true; }

  bool reading_closed() const { return reading_closed_; }
  // When flush() must next be called without any I/O: a response falls due, a trickled
  // byte is due, or the idle limit is reached. Empty: only I/O can change anything.
  std::optional<std::chrono::nanoseconds> next_wakeup() const;

  enum class status { open, close };
  // Writes every response due at `now` (plus leftovers of earlier writes). A `close` after
  // a reset fault has already armed SO_LINGER 0, so closing the socket sends RST.
  status flush(std::chrono::nanoseconds now, const response_set& responses,
               arrival_recorder& recorder);
  // Records the responses that will never be written (arrival log: answered 0).
  void abandon(arrival_recorder& recorder);

  bool in_ready = false;  // queued on the worker's flush list
  // The earliest wake-up the worker has queued for this connection (max: none known).
  std::chrono::nanoseconds armed_at = std::chrono::nanoseconds::max();

 private:
  void queue(const pending_response& r);
  void start_response(const pending_response& r, std::chrono::nanoseconds now,
                      const response_set& responses, arrival_recorder& recorder);
  void advance_trickle(std::chrono::nanoseconds now, const response_set& responses);
  bool closing() const { return close_after_write_ || reset_after_write_; }
  bool idle_expired(std::chrono::nanoseconds now) const;
  status write_out();
  status flush_h2(std::chrono::nanoseconds now, arrival_recorder& recorder);
  ssize_t send_some(const char* data, std::size_t size);

  int fd_;
  std::uint32_t generation_;
  std::chrono::nanoseconds idle_close_;
  request_reader reader_;
  pending_queue pending_;
  std::chrono::nanoseconds last_due_{0};
  std::chrono::nanoseconds last_activity_{0};
  std::string out_;
  std::size_t out_sent_ = 0;
  bool reading_closed_ = false;  // after Connection: close, a bad request, a closing fault, EOF
  bool peer_closed_ = false;
  bool close_after_write_ = false;
  bool reset_after_write_ = false;
  bool muted_ = false;  // a `never` fault: nothing more is written on this connection
  bool trickling_ = false;
  std::size_t trickle_pos_ = 0;
  std::chrono::nanoseconds trickle_next_{0};
  std::unique_ptr<tls_session> tls_;
  tls_fault_kind hostile_ = tls_fault_kind::none;
  bool hello_answered_ = false;
  std::string hello_;                  // hostile: the ClientHello so far
  std::unique_ptr<h2_connection> h2_;  // null: HTTP/1.1
};

}  // namespace punctual::server
