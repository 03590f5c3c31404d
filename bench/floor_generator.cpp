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
// --tls speaks TLS (OpenSSL) instead: the handshake, then one SSL_write and the SSL_reads of
// one response per request. --cacert FILE verifies the server's certificate against FILE and
// its address as 127.0.0.1, as a client that checks what it talks to must; without it nothing
// is verified.
//
// --no-keepalive opens one connection per request at its deadline and closes it once the
// response is in. Here the generator waits in epoll_pwait2 up to the next deadline instead of
// sleeping blind: a handshake only advances when the client answers the server's flight, and a
// generator that measures latency cannot leave that for the next deadline. --resume offers the
// session of the latest connection that completed (SSL_get1_session / SSL_set_session), as a
// client that resumes would; without it every handshake is a full one.
//
// Usage: floor_generator coarse|fine PORT RATE CONNECTIONS SECONDS
//                        [--tls [--cacert FILE]] [--no-keepalive [--resume]] [--stamp]
//                        (127.0.0.1 only)
// With --no-keepalive, CONNECTIONS bounds the connections open at once.
// Prints one JSON line: planned, sent, completed, sleeps, and with --tls or --no-keepalive also
// connections opened, handshakes resumed and connections that failed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mono_clock.hpp"

namespace {

using std::chrono::nanoseconds;

using bench::now;
using bench::sleep_until;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "floor_generator: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void fail_tls(const char* what) {
  std::fprintf(stderr, "floor_generator: %s\n", what);
  ERR_print_errors_fp(stderr);
  std::exit(1);
}

// --stamp: ask the kernel for each packet's receive stamp (SO_TIMESTAMPNS) and read it with
// recvmsg, as a generator that dates completions by the kernel must (plain keep-alive only).
bool receive_stamps = false;

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
  if (receive_stamps) setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  return fd;
}

// recv, or with --stamp recvmsg with room for the stamp, which is read (and dropped).
ssize_t receive(int fd, char* buf, size_t size) {
  if (!receive_stamps) return recv(fd, buf, size, MSG_DONTWAIT);
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t got = recvmsg(fd, &msg, MSG_DONTWAIT);
  static volatile long sink = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      sink = sink + ts.tv_nsec;
    }
  }
  return got;
}

SSL_CTX* client_context(const char* cacert) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) fail_tls("SSL_CTX_new");
  // Without read-ahead OpenSSL reads each record in two read()s, its header then its body.
  SSL_CTX_set_read_ahead(ctx, 1);
  if (cacert) {
    if (SSL_CTX_load_verify_locations(ctx, cacert, nullptr) != 1) fail_tls("--cacert");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return ctx;
}

SSL* tls_session_on(SSL_CTX* ctx, int fd, bool verify, SSL_SESSION* resume) {
  SSL* ssl = SSL_new(ctx);
  if (!ssl || SSL_set_fd(ssl, fd) != 1) fail_tls("SSL_new");
  if (verify && X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1") != 1)
    fail_tls("X509_VERIFY_PARAM_set1_ip_asc");
  if (resume) SSL_set_session(ssl, resume);
  SSL_set_connect_state(ssl);
  return ssl;
}

// Only a session that came with a ticket can be offered again; TLS 1.3 sends its tickets
// after the handshake, so this is asked once a response has been read.
void keep_if_resumable(SSL* ssl, SSL_SESSION*& kept) {
  SSL_SESSION* s = SSL_get1_session(ssl);
  if (!s) return;
  if (SSL_SESSION_is_resumable(s) != 1) {
    SSL_SESSION_free(s);
    return;
  }
  if (kept) SSL_SESSION_free(kept);
  kept = s;
}

// Closing without a close_notify is the least work, but SSL_free then takes the connection for
// a failed one and marks its session unusable; saying the shutdown happened keeps it.
void free_quietly(SSL* ssl) {
  SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl);
}

// One blocking exchange learns the response's length, so the loop can count without parsing.
size_t response_length(int fd, SSL* ssl, std::string_view request) {
  const ssize_t put = ssl ? SSL_write(ssl, request.data(), static_cast<int>(request.size()))
                          : send(fd, request.data(), request.size(), 0);
  if (put != static_cast<ssize_t>(request.size())) ssl ? fail_tls("SSL_write") : fail("send");
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = ssl ? SSL_read(ssl, buf, sizeof buf) : recv(fd, buf, sizeof buf, 0);
    if (n <= 0) ssl ? fail_tls("SSL_read") : fail("recv");
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
  SSL* ssl = nullptr;
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
      if (c.ssl) {
        if (SSL_write(c.ssl, request.data(), static_cast<int>(request.size())) !=
            static_cast<int>(request.size()))
          fail_tls("SSL_write");
      } else if (send(c.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
                 static_cast<ssize_t>(request.size())) {
        fail("send");
      }
      ++sent;
    }
  }

  // TLS: read until the response is whole and OpenSSL holds nothing more, so that a
  // complete response costs no extra read() that would only say EAGAIN.
  void collect_tls(connection& c, char* buf, int size) {
    for (;;) {
      const int got = SSL_read(c.ssl, buf, size);
      if (got <= 0) {
        if (SSL_get_error(c.ssl, got) == SSL_ERROR_WANT_READ) return;
        fail_tls("SSL_read");
      }
      c.received += static_cast<size_t>(got);
      for (; c.received >= response_bytes; c.received -= response_bytes) ++completed;
      if (c.received == 0 && SSL_has_pending(c.ssl) == 0) return;
    }
  }

  void collect(int timeout_ms) {
    epoll_event events[256];
    const int n = epoll_wait(epoll_fd, events, 256, timeout_ms);
    char buf[16384];
    for (int e = 0; e < n; ++e) {
      connection& c = conns[events[e].data.u32];
      if (c.ssl) {
        collect_tls(c, buf, sizeof buf);
      } else {
        const ssize_t got = receive(c.fd, buf, sizeof buf);
        if (got <= 0) continue;
        c.received += static_cast<size_t>(got);
        for (; c.received >= response_bytes; c.received -= response_bytes) ++completed;
      }
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

// --no-keepalive: one connection per request, opened at the request's deadline.
struct churn_generator {
  struct slot {
    int fd = -1;
    SSL* ssl = nullptr;
    bool written = false;
    size_t received = 0;
    uint32_t interest = 0;  // events asked of epoll; 0 = not registered yet
  };

  bool coarse;
  int port;
  SSL_CTX* ctx = nullptr;  // null: plain TCP
  bool verify = false, resume = false;
  SSL_SESSION* session = nullptr;  // the one --resume offers
  nanoseconds start, gap;
  std::string request;
  size_t response_bytes = 0;
  std::vector<slot> slots;
  std::vector<int> free_slots;
  int epoll_fd = -1;
  long planned = 0, opened = 0, sent = 0, completed = 0, sleeps = 0, resumed = 0, failed = 0;

  nanoseconds due(long i) const { return start + gap * i; }
  long open_now() const { return static_cast<long>(slots.size() - free_slots.size()); }

  void close_slot(int i) {
    slot& s = slots[static_cast<size_t>(i)];
    if (s.ssl) free_quietly(s.ssl);
    ::close(s.fd);  // also takes it out of the epoll set
    s = slot{};
    free_slots.push_back(i);
  }

  void drop(int i) {
    ++failed;
    close_slot(i);
  }

  void want(int i, uint32_t events) {
    slot& s = slots[static_cast<size_t>(i)];
    if (s.interest == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (epoll_ctl(epoll_fd, s.interest == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s.fd, &ev) != 0)
      fail("epoll_ctl");
    s.interest = events;
  }

  // Waits for what OpenSSL asked for; false when the connection failed.
  bool want_tls(int i, int ret) {
    const int err = SSL_get_error(slots[static_cast<size_t>(i)].ssl, ret);
    if (err == SSL_ERROR_WANT_READ) {
      want(i, EPOLLIN);
      return true;
    }
    if (err == SSL_ERROR_WANT_WRITE) {
      want(i, EPOLLOUT);
      return true;
    }
    ERR_clear_error();
    return false;
  }

  // Moves one connection as far as it can go without waiting.
  void advance(int i) {
    slot& s = slots[static_cast<size_t>(i)];
    if (s.ssl && !SSL_is_init_finished(s.ssl)) {
      const int r = SSL_do_handshake(s.ssl);
      if (r != 1) {
        if (!want_tls(i, r)) drop(i);
        return;
      }
      if (SSL_session_reused(s.ssl)) ++resumed;
    }
    if (!s.written) {
      if (s.ssl) {
        const int w = SSL_write(s.ssl, request.data(), static_cast<int>(request.size()));
        if (w <= 0) {
          if (!want_tls(i, w)) drop(i);
          return;
        }
      } else {
        const ssize_t w = send(s.fd, request.data(), request.size(), MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == ENOTCONN)) {
          want(i, EPOLLOUT);  // the connect is still in progress
          return;
        }
        if (w != static_cast<ssize_t>(request.size())) return drop(i);
      }
      s.written = true;
      ++sent;
      // The response is seldom there yet, and a read now would mostly say EAGAIN.
      want(i, EPOLLIN);
      return;
    }
    char buf[16384];
    while (s.received < response_bytes) {
      if (s.ssl) {
        const int got = SSL_read(s.ssl, buf, sizeof buf);
        if (got <= 0) {
          if (!want_tls(i, got)) drop(i);
          return;
        }
        s.received += static_cast<size_t>(got);
      } else {
        const ssize_t got = recv(s.fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EAGAIN) {
          want(i, EPOLLIN);
          return;
        }
        if (got <= 0) return drop(i);
        s.received += static_cast<size_t>(got);
      }
    }
    ++completed;
    if (resume) keep_if_resumable(s.ssl, session);
    close_slot(i);
  }

  void open_queued() {
    while (opened < planned && !free_slots.empty()) {
      const int i = free_slots.back();
      free_slots.pop_back();
      ++opened;
      slot& s = slots[static_cast<size_t>(i)];
      s.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (s.fd < 0) fail("socket");
      const int one = 1;
      setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
          errno != EINPROGRESS) {
        drop(i);
        continue;
      }
      if (ctx) s.ssl = tls_session_on(ctx, s.fd, verify, resume ? session : nullptr);
      advance(i);
    }
  }

  // Handles what epoll reports until `until`, or returns at once when `until` has passed.
  void wait_events(nanoseconds until) {
    epoll_event events[256];
    const nanoseconds left = until - now();
    const timespec ts{static_cast<time_t>(left.count() > 0 ? left.count() / 1'000'000'000 : 0),
                      static_cast<long>(left.count() > 0 ? left.count() % 1'000'000'000 : 0)};
    if (left.count() > 0) ++sleeps;
    const int n = epoll_pwait2(epoll_fd, events, 256, &ts, nullptr);
    if (n < 0 && errno != EINTR) fail("epoll_pwait2");
    for (int e = 0; e < n; ++e) advance(static_cast<int>(events[e].data.u32));
  }

  void run(long total) {
    for (;;) {
      const nanoseconds t = now();
      while (planned < total && due(planned) <= t) ++planned;
      open_queued();
      if (planned == total) break;
      const nanoseconds next = due(planned);
      const nanoseconds tick =
          start + (next - start + std::chrono::milliseconds(1) - nanoseconds(1)) /
                      std::chrono::milliseconds(1) * std::chrono::milliseconds(1);
      wait_events(coarse ? tick : next);
    }
    const nanoseconds give_up = now() + std::chrono::seconds(2);
    while (open_now() > 0 && now() < give_up) {
      open_queued();
      wait_events(std::min(give_up, now() + std::chrono::milliseconds(10)));
    }
  }
};

void usage() {
  std::fprintf(stderr,
               "usage: floor_generator coarse|fine PORT RATE CONNECTIONS SECONDS"
               " [--tls [--cacert FILE]] [--no-keepalive [--resume]] [--stamp]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6 || (std::strcmp(argv[1], "coarse") != 0 && std::strcmp(argv[1], "fine") != 0))
    usage();
  const int port = std::atoi(argv[2]);
  const double rate = std::atof(argv[3]);
  const int conns = std::atoi(argv[4]);
  const double seconds = std::atof(argv[5]);
  if (port <= 0 || rate <= 0 || conns <= 0 || seconds <= 0) {
    std::fprintf(stderr, "floor_generator: bad argument\n");
    return 2;
  }
  bool tls = false, keepalive = true, resume = false;
  const char* cacert = nullptr;
  for (int a = 6; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if (arg == "--tls") {
      tls = true;
    } else if (arg == "--cacert" && a + 1 < argc) {
      cacert = argv[++a];
    } else if (arg == "--no-keepalive") {
      keepalive = false;
    } else if (arg == "--resume") {
      resume = true;
    } else if (arg == "--stamp") {
      receive_stamps = true;
    } else {
      usage();
    }
  }
  if ((cacert && !tls) || (resume && (!tls || keepalive)) ||
      (receive_stamps && (tls || !keepalive))) {
    usage();
  }
  prctl(PR_SET_TIMERSLACK, 1);
  SSL_CTX* ctx = tls ? client_context(cacert) : nullptr;
  const bool coarse = std::strcmp(argv[1], "coarse") == 0;
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const nanoseconds gap(static_cast<long long>(1e9 / rate));
  const long total = static_cast<long>(rate * seconds);

  if (!keepalive) {
    churn_generator g;
    g.coarse = coarse;
    g.port = port;
    g.ctx = ctx;
    g.verify = cacert != nullptr;
    g.resume = resume;
    g.request = "GET / HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n";
    // The first exchange also holds the session the first scheduled request may resume.
    const int fd = connect_loopback(port);
    SSL* ssl = ctx ? tls_session_on(ctx, fd, g.verify, nullptr) : nullptr;
    if (ssl && SSL_connect(ssl) != 1) fail_tls("SSL_connect");
    g.response_bytes = response_length(fd, ssl, g.request);
    if (ssl && resume) keep_if_resumable(ssl, g.session);
    if (ssl) free_quietly(ssl);
    close(fd);
    if (resume && !g.session) fail_tls("--resume: the server sent no session ticket");
    g.epoll_fd = epoll_create1(0);
    if (g.epoll_fd < 0) fail("epoll_create1");
    g.slots.resize(static_cast<size_t>(conns));
    for (int i = conns - 1; i >= 0; --i) g.free_slots.push_back(i);
    g.gap = gap;
    g.start = now() + std::chrono::milliseconds(10);
    g.run(total);
    std::printf(
        "{\"planned\": %ld, \"sent\": %ld, \"completed\": %ld, \"sleeps\": %ld, "
        "\"connections\": %ld, \"resumed\": %ld, \"failed\": %ld}\n",
        g.planned, g.sent, g.completed, g.sleeps, g.opened, g.resumed, g.failed);
    return g.completed == g.planned ? 0 : 1;
  }

  generator g;
  g.coarse = coarse;
  g.request = "GET / HTTP/1.1\r\n" + host + "\r\n";
  g.epoll_fd = epoll_create1(0);
  if (g.epoll_fd < 0) fail("epoll_create1");
  long resumed = 0;
  for (int i = 0; i < conns; ++i) {
    connection c;
    c.fd = connect_loopback(port);
    if (ctx) {
      c.ssl = tls_session_on(ctx, c.fd, cacert != nullptr, nullptr);
      if (SSL_connect(c.ssl) != 1) fail_tls("SSL_connect");
      resumed += SSL_session_reused(c.ssl);
    }
    g.response_bytes = response_length(c.fd, c.ssl, g.request);
    // OpenSSL reads and writes through the socket itself, so the socket must not block;
    // plain mode asks recv for that per call instead.
    if (c.ssl && fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK) != 0) fail("fcntl");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    if (epoll_ctl(g.epoll_fd, EPOLL_CTL_ADD, c.fd, &ev) != 0) fail("epoll_ctl");
    g.conns.push_back(c);
    g.idle.push_back(i);
  }
  g.gap = gap;
  g.start = now() + std::chrono::milliseconds(10);
  g.run(total);
  if (ctx) {
    std::printf(
        "{\"planned\": %ld, \"sent\": %ld, \"completed\": %ld, \"sleeps\": %ld, "
        "\"connections\": %d, \"resumed\": %ld, \"failed\": 0}\n",
        g.planned, g.sent, g.completed, g.sleeps, conns, resumed);
  } else {
    std::printf("{\"planned\": %ld, \"sent\": %ld, \"completed\": %ld, \"sleeps\": %ld}\n",
                g.planned, g.sent, g.completed, g.sleeps);
  }
  return g.completed == g.planned ? 0 : 1;
}
