#include "metrics/scrape_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "metrics/exposition.hpp"

namespace punctual::metrics {
namespace {

// A scraper gets this long to send its request and take the answer; then it is dropped.
constexpr std::chrono::seconds client_deadline{10};
constexpr std::size_t max_clients = 16;
constexpr std::size_t max_request_bytes = 8192;

bool is_loopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a);
    return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) != 0;
  }
  return false;
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
}

std::string reply(std::string_view status, std::string_view type, std::string_view body) {
  std::string r = "HTTP/1.1 ";
  r += status;
  r += "\r\nContent-Type: ";
  r += type;
  r += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  r += body;
  return r;
}

}  // namespace

std::optional<listen_address> parse_listen_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || value > 65535)
    return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string_view::npos)
    return std::nullopt;  // an IPv6 address needs its brackets
  return listen_address{host.empty() ? "127.0.0.1" : std::string(host),
                        static_cast<std::uint16_t>(value)};
}

scrape_server::scrape_server(const listen_address& where)
    : body_(std::make_shared<const std::string>()) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  if (const int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw std::runtime_error("--metrics-listen: " + where.host + ": " + gai_strerror(rc));
  std::string why = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) {
      fd_ = fd;
      loopback_ = is_loopback(a->ai_addr);
      break;
    }
    why = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(found);
  if (fd_ < 0)
    throw std::runtime_error("--metrics-listen: cannot listen on " + where.host + ":" + port +
                             ": " + why);
  host_ = where.host;
  port_ = bound_port(fd_);
}

scrape_server::~scrape_server() {
  for (const auto& c : clients_) close(c.fd);
  if (fd_ >= 0) close(fd_);
}

std::string scrape_server::address() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

void scrape_server::publish(const snapshot& s) {
  body_ = std::make_shared<const std::string>(reply("200 OK", exposition_content_type, render(s)));
}

void scrape_server::poll() {
  accept_clients();
  for (std::size_t i = 0; i < clients_.size();) {
    if (serve(clients_[i])) {
      ++i;
      continue;
    }
    close(clients_[i].fd);
    clients_[i] = std::move(clients_.back());
    clients_.pop_back();
  }
}

void scrape_server::accept_clients() {
  while (clients_.size() < max_clients) {
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none waiting (or a failed accept: try again next poll)
    clients_.push_back({fd, {}, nullptr, 0, std::chrono::steady_clock::now()});
  }
}

std::shared_ptr<const std::string> scrape_server::answer(std::string_view request) {
  const std::string_view line = request.substr(0, request.find("\r\n"));
  const bool get = line.starts_with("GET ");
  const std::string_view target = get ? line.substr(4, line.find(' ', 4) - 4) : "";
  if (get && (target == "/metrics" || target.starts_with("/metrics?"))) {
    ++scrapes_;
    return body_;
  }
  if (!get) {
    return std::make_shared<const std::string>(
        reply("405 Method Not Allowed", "text/plain", "only GET /metrics\n"));
  }
  return std::make_shared<const std::string>(
      reply("404 Not Found", "text/plain", "the metrics are at /metrics\n"));
}

bool scrape_server::serve(client& c) {
  if (std::chrono::steady_clock::now() - c.since > client_deadline) return false;
  if (!c.response) {
    char buf[2048];
    for (;;) {
      const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.request.append(buf, static_cast<std::size_t>(n));
        if (c.request.size() > max_request_bytes) return false;
        continue;
      }
      if (n == 0) return false;  // closed before asking
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return false;
    }
    if (c.request.find("\r\n\r\n") == std::string::npos) return true;  // more to come
    c.response = answer(c.request);
  }
  while (c.written < c.response->size()) {
    const ssize_t n =
        send(c.fd, c.response->data() + c.written, c.response->size() - c.written, MSG_NOSIGNAL);
    if (n > 0) {
      c.written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
  return false;  // all sent: close (Connection: close)
}

}  // namespace punctual::metrics
