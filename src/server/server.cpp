#include "server/server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "net/clock.hpp"
#include "server/worker.hpp"

namespace punctual::server {

using std::chrono::nanoseconds;

namespace {

// Sleeping on a condition variable wakes late (docs/design.md, "Host measurements"); the last
// stretch is spun so stalls begin and end within a few microseconds of their plan.
constexpr nanoseconds spin_margin{200'000};

// Both clocks read back to back, so a log line can be lined up on either.
void read_clocks(std::int64_t& mono_ns, std::int64_t& unix_ns) {
  timespec mono{};
  timespec real{};
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  ::clock_gettime(CLOCK_REALTIME, &real);
  mono_ns = std::int64_t{mono.tv_sec} * 1'000'000'000 + mono.tv_nsec;
  unix_ns = std::int64_t{real.tv_sec} * 1'000'000'000 + real.tv_nsec;
}

server_config validated(server_config config) {
  if (config.threads < 1 || config.threads > 1024) {
    throw std::invalid_argument("threads must be between 1 and 1024");
  }
  if (config.service_time.count() < 0) throw std::invalid_argument("negative service time");
  if (config.duration.count() < 0) throw std::invalid_argument("negative duration");
  if (config.idle_close.count() < 0) throw std::invalid_argument("negative idle-close time");
  if (config.mark_late.count() < 0) throw std::invalid_argument("negative mark-late time");
  if (config.cpu_per_request.count() < 0) throw std::invalid_argument("negative CPU per request");
  validate_faults(config.faults);
  if (config.http2 && !config.faults.empty()) {
    throw std::invalid_argument("--fault is not available with --http2");
  }
  if (config.max_streams < 1) throw std::invalid_argument("max streams must be at least 1");
  validate_tls_options(config.tls);
  return config;
}

}  // namespace

std::string stall_log_line(const stall_record& s) {
  std::string line = "{\"start_ns\":" + std::to_string(s.start_unix_ns) +
                     ",\"end_ns\":" + std::to_string(s.end_unix_ns) +
                     ",\"start_mono_ns\":" + std::to_string(s.start_mono_ns) +
                     ",\"end_mono_ns\":" + std::to_string(s.end_mono_ns);
  if (s.interrupted) line += ",\"interrupted\":true";
  return line + "}";
}

server::server(server_config config)
    : config_(validated(std::move(config))),
      plan_(stall_plan::from_config(config_)),
      responses_(response_set::make(config_.body_size)),
      tls_(config_.tls.enabled() ? std::make_unique<tls_context>(config_.tls, config_.http2)
                                 : nullptr) {}

server::~server() {
  try {
    stop();
    wait();
  } catch (...) {
    // A destructor cannot report a failed log write; wait() callers see it.
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stall_log_) std::fclose(stall_log_);
}

int server::open_listener() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(config_.port);
  if (::getaddrinfo(config_.host.c_str(), port.c_str(), &hints, &found) != 0 || !found) {
    throw std::runtime_error("cannot resolve host " + config_.host);
  }
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  const bool ok = fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
                  ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 4096) == 0;
  const int saved = errno;
  ::freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot listen on " + config_.host + ":" + port + ": " +
                             std::strerror(saved));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = bound.ss_family == AF_INET6
              ? ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port)
              : ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  return fd;
}

std::string server::address() const {
  const bool v6 = config_.host.find(':') != std::string::npos;
  return (v6 ? "[" + config_.host + "]" : config_.host) + ":" + std::to_string(port_);
}

std::uint16_t server::start() {
  if (listen_fd_ >= 0) throw std::logic_error("server already started");
  listen_fd_ = open_listener();
  if (!config_.stall_log_path.empty()) {
    stall_log_ = std::fopen(config_.stall_log_path.c_str(), "w");
    if (!stall_log_) throw std::runtime_error("cannot write " + config_.stall_log_path);
  }
  if (!config_.arrival_log_path.empty()) {
    // Fail now rather than after the whole run.
    std::FILE* probe = std::fopen(config_.arrival_log_path.c_str(), "w");
    if (!probe) throw std::runtime_error("cannot write " + config_.arrival_log_path);
    std::fclose(probe);
  }
  for (int i = 0; i < config_.threads; ++i) {
    workers_.push_back(
        std::make_unique<worker>(i, config_, listen_fd_, gate_, responses_, tls_.get()));
    writer_slots_.push_back(&workers_.back()->writer());
  }
  origin_ = net::mono_now();
  for (auto& w : workers_) threads_.emplace_back([w = w.get()] { w->run(); });
  controller_ = std::thread([this] { control_loop(); });
  return port_;
}

void server::stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  changed_.notify_all();
}

bool server::wait_for(nanoseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [this] { return stopped_; });
}

void server::wait() {
  if (joined_ || !controller_.joinable()) return;
  controller_.join();
  for (auto& t : threads_) t.join();
  joined_ = true;
  if (stall_log_) {
    std::fclose(stall_log_);
    stall_log_ = nullptr;
  }
  if (config_.arrival_log_path.empty()) return;
  for (const auto& w : workers_) w->recorder().append_to(arrivals_);
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [](const arrival_entry& a, const arrival_entry& b) {
                     return a.arrival_mono_ns < b.arrival_mono_ns;
                   });
  write_arrival_log(config_.arrival_log_path, arrivals_, config_.arrival_log_id_header);
}

std::vector<stall_record> server::stalls() const {
  std::lock_guard lock(mutex_);
  return stalls_;
}

// Returns true once mono_deadline is reached, false as soon as stop() is called.
bool server::sleep_until(nanoseconds mono_deadline) {
  std::unique_lock lock(mutex_);
  const auto stop_asked = [this] { return stop_requested_; };
  if (mono_deadline == nanoseconds::max()) {
    changed_.wait(lock, stop_asked);
    return false;
  }
  const std::chrono::steady_clock::time_point coarse{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(mono_deadline - spin_margin)};
  if (changed_.wait_until(lock, coarse, stop_asked)) return false;
  lock.unlock();
  while (net::mono_now() < mono_deadline) {
  }
  return true;
}

void server::control_loop() {
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const nanoseconds deadline =
      config_.duration.count() > 0 ? origin_ + config_.duration : nanoseconds::max();
  for (;;) {
    const auto window = plan_.next_stall_after(net::mono_now() - origin_);
    const nanoseconds stall_start = window ? origin_ + window->start : nanoseconds::max();
    if (stall_start >= deadline) {
      sleep_until(deadline);
      break;
    }
    if (!sleep_until(stall_start)) break;
    take_stall(*window, deadline);
    std::lock_guard lock(mutex_);
    if (stop_requested_ || net::mono_now() >= deadline) break;
  }
  stop_workers();
}

void server::take_stall(const stall_window& window, nanoseconds deadline) {
  gate_.close_and_drain(writer_slots_);
  stall_record record;
  read_clocks(record.start_mono_ns, record.start_unix_ns);
  const nanoseconds end = origin_ + window.end();
  const bool reached = sleep_until(std::min(end, deadline));
  read_clocks(record.end_mono_ns, record.end_unix_ns);
  record.interrupted = !reached || end > deadline;
  // A stall cut short by the end of the run never resumes answering: workers stop first.
  if (record.interrupted) {
    for (auto& w : workers_) w->request_stop();
  }
  // Logged end first, then answering resumes: no answer is stamped before the logged end.
  gate_.open();
  for (auto& w : workers_) w->wake();
  finish_stall(record);
}

void server::finish_stall(stall_record record) {
  std::lock_guard lock(mutex_);
  stalls_.push_back(record);
  if (stall_log_) {
    std::fprintf(stall_log_, "%s\n", stall_log_line(record).c_str());
    std::fflush(stall_log_);
  }
}

void server::stop_workers() {
  for (auto& w : workers_) w->request_stop();
  std::lock_guard lock(mutex_);
  stopped_ = true;
  changed_.notify_all();
}

}  // namespace punctual::server
