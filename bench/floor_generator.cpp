// The least an open-loop HTTP/1.1 generator can do on this machine: a reference for the CPU
// figures of bench/run-bench.sh, not a tool.
//
// It keeps a constant schedule over keep-alive connections with exactly the kernel work any
// such generator needs: one send and one receive per request, plus its sleeps. It parses
// nothing (responses are counted by their known length), records nothing and checks nothing.
// Whatever it costs per request is a floor for every generator that sends the same requests
// with the same waiting rule, punctual included:
//   coarse  send whatever is due once per millisecond (wrk2's and h2load's rule);
//   fine    sleep until each deadline (the design's default mode), no spinning.
//
// Usage: floor_generator coarse|fine PORT RATE CONNECTIONS SECONDS   (127.0.0.1 only)
// Prints one JSON line: planned, completed, sleeps.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using std::chrono::nanoseconds;

nanoseconds now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::chrono::seconds(ts.tv_sec) + nanoseconds(ts.tv_nsec);
}

void sleep_until(nanoseconds t) {
  const timespec ts{static_cast<time_t>(t.count() / 1'000'000'000),
                    static_cast<long>(t.count() % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "floor_generator: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

int connect_loopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One blocking exchange learns the response's length, so the loop can count without parsing.
size_t response_length(int fd, std::string_view request) {
  if (send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
    fail("send");
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) fail("recv");
    got.append(buf, static_cast<size_t>(n));
    const size_t head = got.find("\r\n\r\n");
    const size_t field = got.find("Content-Length: ");
    if (head == std::string::npos || field == std::string::npos) continue;
    const size_t total = head + 4 + std::strtoul(got.c_str() + field + 16, nullptr, 10);
    if (got.size() >= total) return total;
  }
}

struct connection {
  int fd = -1;
  size_t received = 0;  // bytes of the response in flight
};

struct generator {
  bool coarse;
  nanoseconds start, gap;
  std::string request;
  size_t response_bytes = 0;
  std::vector<connection> conns;
  std::vector<int> idle;  // indexes into conns
  int epoll_fd = -1;
  long planned = 0, sent = 0, completed = 0, sleeps = 0;

  nanoseconds due(long i) const { return start + gap * i; }

  void send_queued() {
    while (sent < planned && !idle.empty()) {
      const connection& c = conns[static_cast<size_t>(idle.back())];
      idle.pop_back();
      if (send(c.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size()))
        fail("send");
      ++sent;
    }
  }

  void collect(int timeout_ms) {
    epoll_event events[256];
    const int n = epoll_wait(epoll_fd, events, 256, timeout_ms);
    char buf[16384];
    for (int e = 0; e < n; ++e) {
      connection& c = conns[events[e].data.u32];
      const ssize_t got = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got <= 0) continue;
      c.received += static_cast<size_t>(got);
      for (; c.received >= response_bytes; c.received -= response_bytes) ++completed;
      if (c.received == 0) idle.push_back(static_cast<int>(events[e].data.u32));
    }
  }

  void run(long total) {
    for (;;) {
      const nanoseconds t = now();
      while (planned < total && due(planned) <= t) ++planned;
      send_queued();
      collect(0);
      send_queued();
      if (planned == total) break;
      const nanoseconds next = due(planned);
      // coarse: the next millisecond tick at or after the next deadline
      const nanoseconds tick =
          start + (next - start + std::chrono::milliseconds(1) - nanoseconds(1)) /
                      std::chrono::milliseconds(1) * std::chrono::milliseconds(1);
      sleep_until(coarse ? tick : next);
      ++sleeps;
    }
    const nanoseconds give_up = now() + std::chrono::seconds(2);
    while (completed < sent && now() < give_up) collect(10);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 || (std::strcmp(argv[1], "coarse") != 0 && std::strcmp(argv[1], "fine") != 0)) {
    std::fprintf(stderr, "usage: floor_generator coarse|fine PORT RATE CONNECTIONS SECONDS\n");
    return 2;
  }
  const int port = std::atoi(argv[2]);
  const double rate = std::atof(argv[3]);
  const int conns = std::atoi(argv[4]);
  const double seconds = std::atof(argv[5]);
  if (port <= 0 || rate <= 0 || conns <= 0 || seconds <= 0) {
    std::fprintf(stderr, "floor_generator: bad argument\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1);
  generator g;
  g.coarse = std::strcmp(argv[1], "coarse") == 0;
  g.request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  g.epoll_fd = epoll_create1(0);
  if (g.epoll_fd < 0) fail("epoll_create1");
  for (int i = 0; i < conns; ++i) {
    connection c;
    c.fd = connect_loopback(port);
    g.response_bytes = response_length(c.fd, g.request);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (epoll_ctl(g.epoll_fd, EPOLL_CTL_ADD, c.fd, &ev) != 0) fail("epoll_ctl");
    g.conns.push_back(c);
    g.idle.push_back(i);
  }
  g.gap = nanoseconds(static_cast<long long>(1e9 / rate));
  g.start = now() + std::chrono::milliseconds(10);
  g.run(static_cast<long>(rate * seconds));
  std::printf("{\"planned\": %ld, \"sent\": %ld, \"completed\": %ld, \"sleeps\": %ld}\n", g.planned,
              g.sent, g.completed, g.sleeps);
  return g.completed == g.planned ? 0 : 1;
}
