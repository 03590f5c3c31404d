// The stalling test server, in-process over loopback with plain blocking sockets.
#include "server/server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/clock.hpp"
#include "server/request_reader.hpp"
#include "server/service_time.hpp"
#include "server_test_support.hpp"

namespace punctual::server {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;

using test_support::mono_now;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("punctual_server_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

struct response {
  int status = 0;
  std::string head;
  std::string body;
};

// A blocking loopback client; every read gives up after 3 s so a broken server fails the test.
class client {
 public:
  explicit client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{3, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~client() { ::close(fd_); }
  bool connected() const { return connected_; }

  void send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      ASSERT_GT(n, 0);
      sent += static_cast<std::size_t>(n);
    }
  }

  std::optional<response> read_response() {
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    response r;
    r.head = buffer_.substr(0, end + 4);
    r.status = std::stoi(r.head.substr(9, 3));
    const auto cl = r.head.find("Content-Length: ");
    const std::size_t length = cl == std::string::npos ? 0 : std::stoul(r.head.substr(cl + 16));
    while (buffer_.size() < end + 4 + length) {
      if (!fill()) return std::nullopt;
    }
    r.body = buffer_.substr(end + 4, length);
    buffer_.erase(0, end + 4 + length);
    return r;
  }

  // True when the server closed the connection (EOF) with nothing more to read.
  bool closed_by_server() { return buffer_.empty() && !fill(); }

 private:
  bool fill() {
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

using test_support::get;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// ---- request reader ---------------------------------------------------------------------

std::vector<request_event::kind> feed_all(request_reader& reader, std::string_view bytes) {
  std::vector<request_event::kind> out;
  while (!bytes.empty()) {
    const request_event ev = reader.feed(bytes);
    bytes.remove_prefix(ev.consumed);
    if (ev.what != request_event::kind::need_more) out.push_back(ev.what);
    if (ev.what == request_event::kind::error) break;
  }
  return out;
}

TEST(request_reader, every_split_of_a_pipeline_gives_the_same_requests) {
  const std::string pipeline = "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" + get + "\r\n" +
                               "GET /c HTTP/1.1\nConnection: close\n\n";
  for (std::size_t a = 0; a <= pipeline.size(); ++a) {
    for (std::size_t b = a; b <= pipeline.size(); b += 7) {
      request_reader reader;
      auto events = feed_all(reader, std::string_view(pipeline).substr(0, a));
      for (auto e : feed_all(reader, std::string_view(pipeline).substr(a, b - a)))
        events.push_back(e);
      for (auto e : feed_all(reader, std::string_view(pipeline).substr(b))) events.push_back(e);
      ASSERT_EQ(events.size(), 3u) << "split at " << a << "," << b;
      for (auto e : events) ASSERT_EQ(e, request_event::kind::request);
    }
  }
}

TEST(request_reader, keep_alive_follows_version_and_connection_header) {
  request_head head;
  ASSERT_TRUE(parse_request_head("GET / HTTP/1.1\r\n\r\n", head));
  EXPECT_TRUE(head.keep_alive);
  ASSERT_TRUE(parse_request_head("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(parse_request_head("GET / HTTP/1.0\r\n\r\n", head));
  EXPECT_FALSE(head.keep_alive);
  ASSERT_TRUE(parse_request_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", head));
  EXPECT_TRUE(head.keep_alive);
  ASSERT_TRUE(parse_request_head("PUT / HTTP/1.1\r\ncontent-length:  12 \r\n\r\n", head));
  EXPECT_EQ(head.content_length, 12u);
}

TEST(request_reader, malformed_heads_are_refused) {
  request_head head;
  for (const char* bad :
       {"GET / HTTP/2.0\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET /\r\n\r\n",
        "G@T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\nNoColon\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"}) {
    EXPECT_FALSE(parse_request_head(bad, head)) << bad;
  }
  request_reader small(64);
  const auto events = feed_all(small, "GET / HTTP/1.1\r\nX: " + std::string(100, 'a') + "\r\n\r\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], request_event::kind::error);
}

// ---- service time -----------------------------------------------------------------------

TEST(service_time, exponential_draws_have_the_mean_and_repeat_with_the_seed) {
  server_config config;
  config.service_time = 200us;
  config.service = service_distribution::exponential;
  service_sampler a(config, 0);
  service_sampler b(config, 0);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const nanoseconds x = a.next();
    ASSERT_EQ(x, b.next());
    ASSERT_GE(x.count(), 0);
    sum += static_cast<double>(x.count());
  }
  EXPECT_NEAR(sum / n, 200000.0, 200000.0 * 0.01);
  config.service = service_distribution::fixed;
  service_sampler fixed(config, 3);
  EXPECT_EQ(fixed.next(), 200us);
}

// ---- the server -------------------------------------------------------------------------

// One keep-alive connection: plain, pipelined (with a body to skip), split byte by byte,
// then Connection: close.
void keep_alive_session(std::uint16_t port, int& requests) {
  client c(port);
  ASSERT_TRUE(c.connected());
  const nanoseconds sent = mono_now();
  c.send(get);
  auto r = c.read_response();
  ++requests;
  ASSERT_TRUE(r);
  EXPECT_GE(mono_now() - sent, 1ms);  // the service time is a real delay
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok\n");
  // Pipelined, with a request body that must be skipped, not parsed as a request.
  c.send("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" + get + get);
  for (int i = 0; i < 3; ++i, ++requests) {
    r = c.read_response();
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
  }
  // One byte at a time.
  for (char ch : get) {
    c.send(std::string(1, ch));
    std::this_thread::sleep_for(200us);
  }
  r = c.read_response();
  ++requests;
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  c.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  r = c.read_response();
  ++requests;
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->head.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(c.closed_by_server());
}

// A malformed request and an HTTP/1.0 one: each is answered, then the server closes.
void closing_sessions(std::uint16_t port, int& requests) {
  {
    client c(port);
    c.send("NOT HTTP AT ALL\r\n\r\n" + get);
    auto r = c.read_response();
    ++requests;
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_TRUE(c.closed_by_server());
  }
  {
    client c(port);
    c.send("GET / HTTP/1.0\r\n\r\n");
    auto r = c.read_response();
    ++requests;
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(c.closed_by_server());
  }
}

TEST(server, answers_pipelined_split_close_and_malformed_requests) {
  server_config config;
  config.service_time = 1ms;
  config.arrival_log_path = temp_path("arrivals_basic");
  config.duration = 20s;  // a safety net: the test stops it
  server srv(config);
  const std::uint16_t port = srv.start();
  ASSERT_NE(port, 0);
  int requests = 0;
  ASSERT_NO_FATAL_FAILURE(keep_alive_session(port, requests));
  ASSERT_NO_FATAL_FAILURE(closing_sessions(port, requests));
  srv.stop();
  srv.wait();
  const auto lines = read_lines(config.arrival_log_path);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(requests) + 1);
  EXPECT_EQ(lines[0], "# arrival_mono_ns answered_mono_ns");
  ASSERT_EQ(srv.arrivals().size(), static_cast<std::size_t>(requests));
  int delayed = 0;
  for (const arrival_entry& e : srv.arrivals()) {
    EXPECT_GT(e.arrival_mono_ns, srv.origin_mono().count());
    EXPECT_GE(e.answered_mono_ns, e.arrival_mono_ns);
    if (e.answered_mono_ns - e.arrival_mono_ns >= 1'000'000) ++delayed;
  }
  EXPECT_EQ(delayed, requests - 1);  // all but the 400, which is not delayed by service time
  std::filesystem::remove(config.arrival_log_path);
}

std::chrono::nanoseconds process_cpu_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

// --cpu-per-request: each answer costs its thread that much CPU time (not a sleep), so 5
// pipelined requests cost at least 5 x 20 ms of the process's CPU and of the wall clock.
TEST(server, cpu_per_request_burns_that_much_cpu_for_each_answer) {
  server_config config;
  config.cpu_per_request = 20ms;
  config.duration = 20s;  // a safety net: the test stops it
  server srv(config);
  const std::uint16_t port = srv.start();
  client c(port);
  ASSERT_TRUE(c.connected());
  const auto cpu_before = process_cpu_now();
  const auto wall_before = mono_now();
  std::string pipeline;
  for (int i = 0; i < 5; ++i) pipeline += get;
  c.send(pipeline);
  for (int i = 0; i < 5; ++i) {
    const auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_GE(process_cpu_now() - cpu_before, 100ms);
  EXPECT_GE(mono_now() - wall_before, 100ms);
  srv.stop();
  srv.wait();
}

// --arrival-log-id-header: each entry keeps its request's value of that header, found in any
// case, and the log writes it as a third column of one word each ("-": none); a value longer
// than the entry holds keeps its first bytes.
TEST(server, the_arrival_log_keeps_each_request_s_id_header) {
  server_config config;
  config.arrival_log_path = temp_path("arrivals_ids");
  config.arrival_log_id_header = "X-Request-Id";
  config.duration = 20s;  // a safety net: the test stops it
  server srv(config);
  const std::uint16_t port = srv.start();
  ASSERT_NE(port, 0);
  const std::string long_id(60, 'z');
  const std::vector<std::string> requests = {
      "GET / HTTP/1.1\r\nx-request-id: 000000000007\r\nHost: h\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nX-REQUEST-ID:   a b%c\t \r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET / HTTP/1.1\r\nX-Request-Id: " + long_id + "\r\n\r\n"};
  {
    client c(port);
    for (const std::string& r : requests) {
      c.send(r);
      ASSERT_TRUE(c.read_response());  // one at a time: the log's order is the requests'
    }
  }
  srv.stop();
  srv.wait();
  ASSERT_EQ(srv.arrivals().size(), requests.size());
  EXPECT_EQ(srv.arrivals()[0].tag.view(), "000000000007");
  EXPECT_EQ(srv.arrivals()[3].tag.view(), long_id.substr(0, request_tag::max_size));
  const auto lines = read_lines(config.arrival_log_path);
  ASSERT_EQ(lines.size(), requests.size() + 1);
  EXPECT_EQ(lines[0], "# arrival_mono_ns answered_mono_ns X-Request-Id");
  const std::vector<std::string> ids = {"000000000007", "a%20b%25c", "-",
                                        long_id.substr(0, request_tag::max_size)};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    std::istringstream fields(lines[i + 1]);
    std::string arrival, answered, id, more;
    fields >> arrival >> answered >> id;
    EXPECT_EQ(id, ids[i]) << lines[i + 1];
    EXPECT_FALSE(fields >> more) << lines[i + 1];
  }
  std::filesystem::remove(config.arrival_log_path);
}

// The stall log holds exactly the recorded stall; every request that arrived during it was
// answered at or after its end; no answer was written inside it.
void check_logs_of_one_stall(const server& srv, const stall_record& s) {
  const server_config& config = srv.config();
  const auto log = read_lines(config.stall_log_path);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], stall_log_line(s));
  EXPECT_EQ(log[0].rfind("{\"start_ns\":", 0), 0u);
  EXPECT_NE(log[0].find("\"end_mono_ns\":" + std::to_string(s.end_mono_ns)), std::string::npos);

  const auto& arrivals = srv.arrivals();
  ASSERT_EQ(arrivals.size(), 5u);
  int held = 0;
  for (const arrival_entry& e : arrivals) {
    const bool in_stall = e.arrival_mono_ns >= s.start_mono_ns && e.arrival_mono_ns < s.end_mono_ns;
    if (in_stall) {
      ++held;
      EXPECT_GE(e.answered_mono_ns, s.end_mono_ns);
    } else {
      EXPECT_TRUE(e.answered_mono_ns < s.start_mono_ns || e.answered_mono_ns >= s.end_mono_ns);
    }
  }
  EXPECT_EQ(held, 3);
  EXPECT_EQ(read_lines(config.arrival_log_path).size(), 6u);
}

TEST(server, a_stall_holds_every_answer_until_its_logged_end) {
  server_config config;
  config.service_time = 1ms;
  config.stall_at = {{500ms, 300ms}};
  config.stall_log_path = temp_path("stalls");
  config.arrival_log_path = temp_path("arrivals_stall");
  config.duration = 20s;
  server srv(config);
  const std::uint16_t port = srv.start();
  const nanoseconds origin = srv.origin_mono();
  client before(port);
  before.send(get);
  ASSERT_TRUE(before.read_response());
  const nanoseconds quick_done = mono_now();
  EXPECT_LT(quick_done, origin + 500ms);

  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(origin + 580ms));
  const nanoseconds sent_in_stall = mono_now();
  const punctual::net::clock_mapping in_stall = punctual::net::map_clocks();
  before.send(get);
  client fresh(port);  // connections are still accepted and read during a stall
  ASSERT_TRUE(fresh.connected());
  fresh.send(get + get);
  ASSERT_TRUE(before.read_response());
  const nanoseconds answered_first = mono_now();
  ASSERT_TRUE(fresh.read_response());
  ASSERT_TRUE(fresh.read_response());
  const nanoseconds answered_last = mono_now();
  before.send(get);  // after the stall: quick again
  ASSERT_TRUE(before.read_response());
  EXPECT_LT(mono_now() - answered_last, 100ms);
  const punctual::net::clock_mapping after_stall = punctual::net::map_clocks();
  srv.stop();
  srv.wait();

  const auto stalls = srv.stalls();
  ASSERT_EQ(stalls.size(), 1u);
  const stall_record& s = stalls[0];
  EXPECT_FALSE(s.interrupted);
  EXPECT_GE(s.start_mono_ns, (origin + 500ms).count());
  EXPECT_LT(s.start_mono_ns, (origin + 550ms).count());
  EXPECT_GE(s.end_mono_ns, (origin + 800ms).count());
  EXPECT_LT(s.end_mono_ns, (origin + 850ms).count());
  EXPECT_LT(sent_in_stall.count(), s.end_mono_ns);
  EXPECT_GE(answered_first.count(), s.end_mono_ns);  // no answer before the logged end
  EXPECT_GE(answered_last.count(), s.end_mono_ns);
  // Both clocks describe the same instants: each pair is offset as a mapping taken near it is.
  // (Not the two spans against each other: a host that slews the wall clock, 5 ms a second on
  // one of these VMs, moves a 300 ms span by 1.5 ms.)
  const auto offset = [](const punctual::net::clock_mapping& m) {
    return static_cast<double>((m.unix - m.mono).count());
  };
  EXPECT_NEAR(static_cast<double>(s.start_unix_ns - s.start_mono_ns), offset(in_stall), 1e6);
  EXPECT_NEAR(static_cast<double>(s.end_unix_ns - s.end_mono_ns), offset(after_stall), 1e6);

  check_logs_of_one_stall(srv, s);
  std::filesystem::remove(config.stall_log_path);
  std::filesystem::remove(config.arrival_log_path);
}

TEST(server, periodic_stalls_are_taken_and_duration_stops_the_server) {
  server_config config;
  config.threads = 2;
  config.stall_length = 100ms;
  config.stall_period = 400ms;
  config.duration = 1s;
  server srv(config);
  const std::uint16_t port = srv.start();
  const nanoseconds origin = srv.origin_mono();
  {
    client a(port);
    client b(port);
    a.send(get);
    b.send(get);
    EXPECT_TRUE(a.read_response());
    EXPECT_TRUE(b.read_response());
  }
  EXPECT_FALSE(srv.wait_for(200ms));
  EXPECT_TRUE(srv.wait_for(3s));
  srv.wait();
  EXPECT_GE(mono_now(), origin + 1s);
  const auto stalls = srv.stalls();
  ASSERT_EQ(stalls.size(), 2u);
  for (int k = 0; k < 2; ++k) {
    const nanoseconds end = origin + 400ms * (k + 1);
    EXPECT_GE(stalls[k].start_mono_ns, (end - 100ms).count());
    EXPECT_LT(stalls[k].start_mono_ns, (end - 50ms).count());
    EXPECT_GE(stalls[k].end_mono_ns, end.count());
    EXPECT_LT(stalls[k].end_mono_ns, (end + 50ms).count());
  }
}

TEST(server, stop_during_a_stall_still_writes_the_logs) {
  server_config config;
  config.service_time = 1ms;
  config.stall_at = {{50ms, 30s}};
  config.stall_log_path = temp_path("stalls_stop");
  config.arrival_log_path = temp_path("arrivals_stop");
  server srv(config);
  const std::uint16_t port = srv.start();
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(srv.origin_mono() + 100ms));
  client c(port);
  c.send(get);
  std::this_thread::sleep_for(50ms);
  srv.stop();
  srv.wait();
  const auto stalls = srv.stalls();
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_TRUE(stalls[0].interrupted);
  EXPECT_EQ(read_lines(config.stall_log_path).size(), 1u);
  const auto lines = read_lines(config.arrival_log_path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].substr(lines[1].find(' ')), " 0");  // never answered
  std::filesystem::remove(config.stall_log_path);
  std::filesystem::remove(config.arrival_log_path);
}

TEST(server, listens_on_ipv6_loopback) {
  server_config config;
  config.host = "::1";
  server srv(config);
  std::uint16_t port = 0;
  try {
    port = srv.start();
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << "no IPv6 loopback: " << e.what();
  }
  EXPECT_EQ(srv.address(), "[::1]:" + std::to_string(port));
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(port);
  addr.sin6_addr = in6addr_loopback;
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::send(fd, get.data(), get.size(), 0), static_cast<ssize_t>(get.size()));
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ::close(fd);
  ASSERT_GT(n, 12);
  EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 200");
}

TEST(server, impossible_configs_are_refused) {
  server_config config;
  config.threads = 0;
  EXPECT_THROW(server{config}, std::invalid_argument);
  config.threads = 1;
  config.stall_length = 2s;
  config.stall_period = 1s;
  EXPECT_THROW(server{config}, std::invalid_argument);
}

// ---- the command line (needs the built binary) ----------------------------------------

int run_binary(const std::string& args) {
  const std::string cmd = std::string(PUNCTUAL_BINARY) + " serve " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(serve_command, bad_options_exit_2_and_a_run_prints_its_port) {
  if (!std::filesystem::exists(PUNCTUAL_BINARY)) GTEST_SKIP() << "punctual not built";
  EXPECT_EQ(run_binary("--stall 10s/2s"), 2);
  EXPECT_EQ(run_binary("--stall 2s"), 2);
  EXPECT_EQ(run_binary("--stall-at 3s"), 2);
  EXPECT_EQ(run_binary("--service-time abc"), 2);
  EXPECT_EQ(run_binary("--threads 0"), 2);
  EXPECT_EQ(run_binary("--cpu-per-request 0"), 2);
  EXPECT_EQ(run_binary("--cpu-per-request abc"), 2);
  const std::string stall_log = temp_path("cli_stalls");
  const std::string cmd = std::string(PUNCTUAL_BINARY) +
                          " serve --port 0 --duration 400ms --service-time exp:100us"
                          " --stall-at 100ms:100ms --stall-log " +
                          stall_log;
  std::FILE* out = ::popen(cmd.c_str(), "r");
  ASSERT_NE(out, nullptr);
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);
  const std::string first(line);
  EXPECT_EQ(first.rfind("listening on 127.0.0.1:", 0), 0u) << first;
  EXPECT_GT(std::stoi(first.substr(first.rfind(':') + 1)), 0);
  const int status = ::pclose(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_lines(stall_log).size(), 1u);
  std::filesystem::remove(stall_log);
}

}  // namespace
}  // namespace punctual::server
