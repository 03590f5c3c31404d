// The floor generator for HTTP/2 (h2c with prior knowledge): the least work any generator must
// do to send a constant schedule over CONNECTIONS x STREAMS and read every response at once, as
// punctual's HTTP/2 client must (a connection with open streams is never left unread until the
// next wake-up). It frames by hand what no generator can avoid sending (one HEADERS frame per
// request, from a precomputed HPACK block; one SETTINGS ACK), skips every frame it reads but for
// its header (END_STREAM on HEADERS or DATA ends a response), grants the connection window once
// at the start so that it never sends WINDOW_UPDATE, and records nothing.
//   coarse  wakes on 1 ms ticks and sends whatever is due at every wake-up, a response's as well
//           as a tick's (as punctual's coarse mode does), one write per connection per wake-up;
//   tick    wakes the same way but sends only once a tick has come for the oldest due request:
//           one write per connection per tick, and a send lag spread evenly over the tick;
//   fine    wakes at each deadline.
// Between sends it waits on the sockets, so every response wakes it unless it is already awake.
//
// With `measure` it also keeps what punctual's gating checks of an open run need, for
// bench/h2_bench.py's maximum-rate ladder: `late`, the requests it got to (found due) more than
// 10 ms after their intended second ended (schedule_kept), and `mean_service_ns`, from each
// stream's send to the wake-up that read its end (connection_cap; punctual ends it at the
// kernel's receive stamp, which is earlier by the wake-up's delay).
// That costs a clock read per wake-up and a store per request, so the CPU rounds leave it off.
//
// Usage: floor_h2_generator coarse|tick|fine PORT RATE CONNECTIONS STREAMS SECONDS [measure]
//        (127.0.0.1 only)
// Prints one JSON line: planned, sent, completed, sleeps, wakeups (and late, mean_service_ns).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mono_clock.hpp"

namespace {

using std::chrono::nanoseconds;
constexpr nanoseconds tick{1'000'000};
constexpr nanoseconds schedule_grace{10'000'000};
constexpr std::size_t stream_ring = 1024;  // streams in flight per connection, at most

using bench::now;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "floor_h2_generator: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

void frame_header(std::string& out, std::uint32_t length, std::uint8_t type, std::uint8_t flags,
                  std::uint32_t stream) {
  const char h[9] = {static_cast<char>(length >> 16), static_cast<char>(length >> 8),
                     static_cast<char>(length),       static_cast<char>(type),
                     static_cast<char>(flags),        static_cast<char>(stream >> 24),
                     static_cast<char>(stream >> 16), static_cast<char>(stream >> 8),
                     static_cast<char>(stream)};
  out.append(h, sizeof h);
}

struct connection {
  int fd = -1;
  std::uint32_t next_stream = 1;
  int in_flight = 0;
  std::string out;                   // frames framed this turn, written once
  std::string pending;               // a frame header split across reads
  std::size_t skip = 0;              // payload bytes of the current frame still to skip
  std::vector<nanoseconds> sent_at;  // measure: by (stream id / 2) mod stream_ring
};

struct generator {
  bool coarse = true;
  bool on_ticks_only = false;  // tick mode
  int streams = 10;
  nanoseconds start{}, gap{};
  std::string block;  // the request's HPACK block
  std::vector<connection> conns;
  int epoll_fd = -1;
  long planned = 0, sent = 0, completed = 0, sleeps = 0, wakeups = 0, queued = 0;
  bool measure = false;
  long late = 0;
  nanoseconds service_sum{}, clock{};  // clock: this turn's time, when measuring

  nanoseconds due(long i) const { return start + gap * i; }
  nanoseconds tick_after(nanoseconds t) const {
    return start + (t - start + tick - nanoseconds(1)) / tick * tick;
  }
  nanoseconds second_end(nanoseconds t) const {
    return start + ((t - start) / std::chrono::seconds(1) + 1) * std::chrono::seconds(1);
  }

  void frame_request(connection& c) {
    if (measure) c.sent_at[(c.next_stream / 2) % stream_ring] = clock;
    frame_header(c.out, static_cast<std::uint32_t>(block.size()), 1, 0x5, c.next_stream);
    c.out += block;
    c.next_stream += 2;
    ++c.in_flight;
    ++sent;
  }

  // Due requests take the connection with the fewest streams open (the lowest on a tie).
  void dispatch() {
    for (; queued > 0; --queued) {
      connection* best = nullptr;
      for (auto& c : conns) {
        if (c.in_flight < streams && (!best || c.in_flight < best->in_flight)) best = &c;
      }
      if (!best) return;
      frame_request(*best);
    }
  }

  void flush() {
    for (auto& c : conns) {
      if (c.out.empty()) continue;
      if (send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(c.out.size()))
        fail("send");
      c.out.clear();
    }
  }

  // Walks the frame headers in what was read; payloads are skipped unread.
  void take(connection& c, const char* p, std::size_t n) {
    while (n > 0) {
      if (c.skip > 0) {
        const std::size_t k = std::min(c.skip, n);
        c.skip -= k;
        p += k;
        n -= k;
        continue;
      }
      const std::size_t k = std::min<std::size_t>(9 - c.pending.size(), n);
      c.pending.append(p, k);
      p += k;
      n -= k;
      if (c.pending.size() < 9) return;
      const auto* h = reinterpret_cast<const unsigned char*>(c.pending.data());
      const std::uint32_t length = (h[0] << 16) | (h[1] << 8) | h[2];
      const std::uint8_t type = h[3], flags = h[4];
      const std::uint32_t stream = ((h[5] & 0x7fU) << 24) | (h[6] << 16) | (h[7] << 8) | h[8];
      c.pending.clear();
      c.skip = length;
      if (type == 4 && !(flags & 0x1)) frame_header(c.out, 0, 4, 0x1, 0);  // SETTINGS ACK
      if ((type == 0 || type == 1) && (flags & 0x1) && stream != 0) {
        if (measure) service_sum += clock - c.sent_at[(stream / 2) % stream_ring];
        --c.in_flight;
        ++completed;
      }
    }
  }

  void wait_until(nanoseconds until) {
    epoll_event events[256];
    const nanoseconds left = std::max(until - now(), nanoseconds{0});
    const timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                      static_cast<long>(left.count() % 1'000'000'000)};
    if (left.count() > 0) ++sleeps;
    const int n = epoll_pwait2(epoll_fd, events, 256, &ts, nullptr);
    if (n < 0 && errno != EINTR) fail("epoll_pwait2");
    ++wakeups;
    if (measure) clock = now();
    char buf[16384];
    for (int e = 0; e < n; ++e) {
      connection& c = conns[events[e].data.u32];
      const ssize_t got = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (got == 0) fail("the server closed a connection");
      if (got > 0) take(c, buf, static_cast<std::size_t>(got));
    }
  }

  void run(long total) {
    for (;;) {
      const nanoseconds t = now();
      clock = t;
      const bool sends = !on_ticks_only || (planned < total && tick_after(due(planned)) <= t);
      for (; sends && planned < total && due(planned) <= t; ++planned, ++queued) {
        if (measure && t > second_end(due(planned)) + schedule_grace) ++late;
      }
      dispatch();
      flush();
      if (planned == total) break;
      const nanoseconds next = due(planned);
      wait_until(coarse ? tick_after(next) : next);
    }
    const nanoseconds give_up = now() + std::chrono::seconds(2);
    while ((completed < planned) && now() < give_up) {
      clock = now();
      dispatch();
      flush();
      wait_until(std::min(give_up, now() + std::chrono::milliseconds(10)));
    }
  }
};

int connect_loopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc != 7 && (argc != 8 || std::strcmp(argv[7], "measure") != 0)) ||
      (std::strcmp(argv[1], "coarse") != 0 && std::strcmp(argv[1], "tick") != 0 &&
       std::strcmp(argv[1], "fine") != 0)) {
    std::fprintf(stderr,
                 "usage: floor_h2_generator coarse|tick|fine PORT RATE CONNECTIONS STREAMS "
                 "SECONDS [measure]\n");
    return 2;
  }
  const int port = std::atoi(argv[2]);
  const double rate = std::atof(argv[3]);
  const int conns = std::atoi(argv[4]);
  generator g;
  g.streams = std::atoi(argv[5]);
  const double seconds = std::atof(argv[6]);
  if (port <= 0 || rate <= 0 || conns <= 0 || g.streams <= 0 || seconds <= 0) {
    std::fprintf(stderr, "floor_h2_generator: bad argument\n");
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1);
  g.on_ticks_only = std::strcmp(argv[1], "tick") == 0;
  g.coarse = g.on_ticks_only || std::strcmp(argv[1], "coarse") == 0;
  g.measure = argc == 8;
  if (g.streams > static_cast<int>(stream_ring)) {
    std::fprintf(stderr, "floor_h2_generator: at most %zu streams\n", stream_ring);
    return 2;
  }
  // :method GET, :scheme http, :path / from the static table; :authority as a literal.
  const std::string authority = "127.0.0.1:" + std::to_string(port);
  g.block = std::string("\x82\x86\x84\x01", 4) + static_cast<char>(authority.size()) + authority;
  g.epoll_fd = epoll_create1(0);
  if (g.epoll_fd < 0) fail("epoll_create1");
  for (int i = 0; i < conns; ++i) {
    connection c;
    c.fd = connect_loopback(port);
    if (g.measure) c.sent_at.assign(stream_ring, nanoseconds{});
    // The preface, empty SETTINGS, and the connection window at its largest.
    c.out.assign("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    frame_header(c.out, 0, 4, 0, 0);
    frame_header(c.out, 4, 8, 0, 0);
    const std::uint32_t grow = 0x7fffffffU - 65535U;
    const char inc[4] = {static_cast<char>(grow >> 24), static_cast<char>(grow >> 16),
                         static_cast<char>(grow >> 8), static_cast<char>(grow)};
    c.out.append(inc, 4);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(i);
    if (epoll_ctl(g.epoll_fd, EPOLL_CTL_ADD, c.fd, &ev) != 0) fail("epoll_ctl");
    g.conns.push_back(std::move(c));
  }
  g.flush();
  g.gap = nanoseconds(static_cast<long long>(1e9 / rate));
  g.start = now() + std::chrono::milliseconds(50);  // the server's SETTINGS are read by then
  g.run(static_cast<long>(rate * seconds));
  std::printf(
      "{\"planned\": %ld, \"sent\": %ld, \"completed\": %ld, \"sleeps\": %ld, "
      "\"wakeups\": %ld",
      g.planned, g.sent, g.completed, g.sleeps, g.wakeups);
  if (g.measure) {
    std::printf(", \"late\": %ld, \"mean_service_ns\": %.0f", g.late,
                g.completed ? static_cast<double>(g.service_sum.count()) / g.completed : 0.0);
  }
  std::printf("}\n");
  return g.completed == g.planned ? 0 : 1;
}
