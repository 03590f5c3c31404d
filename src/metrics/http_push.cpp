#include "metrics/http_push.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "net/socket.hpp"

namespace punctual::metrics {
namespace {

using steady = std::chrono::steady_clock;

// Short slices, so that a cancel is seen within one of them.
constexpr auto slice = std::chrono::milliseconds(50);

enum class wait_end { ready, timed_out, cancelled };

wait_end wait_for(int fd, short events, steady::time_point deadline,
                  const std::atomic<bool>& cancel) {
  for (;;) {
    if (cancel.load()) return wait_end::cancelled;
    const auto now = steady::now();
    if (now >= deadline) return wait_end::timed_out;
    const auto left = std::min<steady::duration>(deadline - now, slice);
    pollfd p{fd, events, 0};
    const int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    if (::poll(&p, 1, ms) > 0) return wait_end::ready;
  }
}

std::string why(wait_end e, const std::string& during) {
  return std::string(e == wait_end::cancelled ? "given up at the run's end" : "timed out") +
         " while " + during;
}

class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {}
  ~fd_guard() {
    if (fd_ >= 0) ::close(fd_);
  }
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;

 private:
  int fd_;
};

class http_push final : public push_transport {
 public:
  http_push(http::url target, std::vector<std::string> headers)
      : target_(std::move(target)), headers_(std::move(headers)) {}

  post_result post(const std::string& body, steady::time_point deadline,
                   const std::atomic<bool>& cancel) override {
    net::address addr;
    std::string error;
    if (!net::resolve(target_.host, target_.port, addr, error)) return {0, error};
    const int fd = net::start_connect(addr);
    if (fd < 0) return {0, "connect to " + addr.text + ": " + std::strerror(-fd)};
    fd_guard guard(fd);
    if (const auto e = wait_for(fd, POLLOUT, deadline, cancel); e != wait_end::ready)
      return {0, why(e, "connecting to " + addr.text)};
    if (const int err = net::finish_connect(fd); err != 0)
      return {0, "connect to " + addr.text + ": " + std::strerror(err)};
    const std::string bytes = push_request_head(target_, headers_, body.size()) + body;
    if (auto r = send_all(fd, bytes, deadline, cancel); !r.error.empty()) return r;
    return read_status(fd, deadline, cancel);
  }

 private:
  static post_result send_all(int fd, const std::string& bytes, steady::time_point deadline,
                              const std::atomic<bool>& cancel) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const auto r = net::write_some(fd, bytes.data() + sent, bytes.size() - sent);
      if (r.status == net::io_status::done) {
        sent += r.bytes;
      } else if (r.status != net::io_status::would_block) {
        return {0, "connection closed while sending"};
      } else if (const auto e = wait_for(fd, POLLOUT, deadline, cancel); e != wait_end::ready) {
        return {0, why(e, "sending")};
      }
    }
    return {};
  }

  // Reads up to the status line's end; the rest of the response is not needed.
  static post_result read_status(int fd, steady::time_point deadline,
                                 const std::atomic<bool>& cancel) {
    std::string head;
    char buffer[512];
    while (head.find("\r\n") == std::string::npos && head.size() < 4096) {
      if (const auto e = wait_for(fd, POLLIN, deadline, cancel); e != wait_end::ready)
        return {0, why(e, "waiting for the response")};
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n == 0) return {0, "connection closed before a response"};
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return {0, std::string("reading the response: ") + std::strerror(errno)};
      }
      head.append(buffer, static_cast<std::size_t>(n));
    }
    const int status = status_of(head);
    if (status == 0) return {0, "not an HTTP response"};
    return {status, {}};
  }

  http::url target_;
  std::vector<std::string> headers_;
};

}  // namespace

std::string push_request_head(const http::url& target, const std::vector<std::string>& headers,
                              std::size_t length) {
  std::string head = "POST " + target.path_and_query +
                     " HTTP/1.1\r\nHost: " + http::host_header_value(target) +
                     "\r\nUser-Agent: punctual/0.1.0\r\nContent-Encoding: snappy\r\n"
                     "Content-Type: application/x-protobuf\r\n"
                     "X-Prometheus-Remote-Write-Version: 0.1.0\r\nContent-Length: " +
                     std::to_string(length) + "\r\nConnection: close\r\n";
  for (const auto& h : headers) head += h + "\r\n";
  return head + "\r\n";
}

int status_of(std::string_view head) noexcept {
  if (head.size() < 12 || head.substr(0, 7) != "HTTP/1." || head[8] != ' ') return 0;
  int status = 0;
  for (std::size_t i = 9; i < 12; ++i) {
    if (head[i] < '0' || head[i] > '9') return 0;
    status = status * 10 + (head[i] - '0');
  }
  return status >= 100 ? status : 0;
}

std::unique_ptr<push_transport> http_push_transport(const http::url& target,
                                                    std::vector<std::string> headers) {
  return std::make_unique<http_push>(target, std::move(headers));
}

}  // namespace punctual::metrics
