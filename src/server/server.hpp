// `punctual serve`: an HTTP/1.1 keep-alive server (HTTP/2 with config.http2) that answers
// after a service time and stalls on a plan. Usable in-process (demo, tests) and from the CLI.
//
//   punctual::server::server s(config);
//   std::uint16_t port = s.start();   // bound and answering when this returns
//   ...
//   s.stop();                          // or let config.duration end it
//   s.wait();                          // joins threads, writes the arrival log
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/arrival_log.hpp"
#include "server/connection.hpp"
#include "server/server_config.hpp"
#include "server/stall_gate.hpp"
#include "server/stall_plan.hpp"
#include "server/tls.hpp"

namespace punctual::server {

class worker;

// A stall as it really happened: answering stopped at start and resumed at end.
struct stall_record {
  std::int64_t start_unix_ns = 0;  // CLOCK_REALTIME
  std::int64_t end_unix_ns = 0;
  std::int64_t start_mono_ns = 0;  // CLOCK_MONOTONIC
  std::int64_t end_mono_ns = 0;
  bool interrupted = false;  // the server stopped before the planned end
};

// The stall-log line: {"start_ns":..,"end_ns":..,"start_mono_ns":..,"end_mono_ns":..}
std::string stall_log_line(const stall_record& stall);

class server {
 public:
  // Throws std::invalid_argument for an impossible config (bad stall plan, threads < 1, TLS
  // options that contradict each other, a certificate or key that cannot be used).
  explicit server(server_config config);
  ~server();  // stops and joins if still running (logs are written; errors are swallowed)
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds, listens, opens the logs and starts the threads; returns the bound port.
  // Throws std::runtime_error when the address cannot be bound or a log cannot be opened.
  std::uint16_t start();
  // Asks every thread to stop; returns at once. Not async-signal-safe.
  void stop();
  // Waits until stopped (by stop() or by config.duration), joins every thread and writes the
  // arrival log. Throws std::runtime_error if the arrival log cannot be written.
  void wait();
  // Waits at most `timeout` for the server to stop by itself; true once it has stopped.
  bool wait_for(std::chrono::nanoseconds timeout);

  std::uint16_t port() const { return port_; }
  // "127.0.0.1:PORT" or "[::1]:PORT".
  std::string address() const;
  const server_config& config() const { return config_; }
  // The TLS context (certificate, fingerprint), or null when the server speaks plain HTTP.
  const tls_context* tls() const { return tls_.get(); }
  const stall_plan& plan() const { return plan_; }
  // The instant the stall plan counts from, on CLOCK_MONOTONIC (set by start()).
  std::chrono::nanoseconds origin_mono() const { return origin_; }
  // The stalls taken so far (complete after wait()).
  std::vector<stall_record> stalls() const;
  // Every request's (arrival, answered) pair, sorted by arrival; valid after wait() and only
  // when config.arrival_log_path is set (the recorders are off otherwise).
  const std::vector<arrival_entry>& arrivals() const { return arrivals_; }

 private:
  int open_listener();
  void control_loop();
  bool sleep_until(std::chrono::nanoseconds mono_deadline);
  void take_stall(const stall_window& window, std::chrono::nanoseconds deadline);
  void finish_stall(stall_record record);
  void stop_workers();

  server_config config_;
  stall_plan plan_;
  response_set responses_;
  std::unique_ptr<tls_context> tls_;
  stall_gate gate_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::chrono::nanoseconds origin_{0};
  std::FILE* stall_log_ = nullptr;

  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<const stall_gate::writer_slot*> writer_slots_;
  std::vector<std::thread> threads_;
  std::thread controller_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_requested_ = false;
  bool stopped_ = false;  // the controller has stopped the workers
  bool joined_ = false;
  std::vector<stall_record> stalls_;
  std::vector<arrival_entry> arrivals_;
};

}  // namespace punctual::server
