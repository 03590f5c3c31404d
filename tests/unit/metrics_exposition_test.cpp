// The Prometheus text exposition (metrics/exposition.hpp) byte for byte, the --metrics-listen
// address syntax, and the scrape endpoint answering on a loopback socket.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <limits>
#include <thread>

#include "metrics/exposition.hpp"
#include "metrics/scrape_server.hpp"

namespace punctual::metrics {
namespace {

snapshot example() {
  snapshot s;
  s.families = {
      {"demo_requests_total", metric_type::counter, "Requests by outcome.\nSecond line \\ here."},
      {"demo_in_flight", metric_type::gauge, "In flight."},
      {"demo_time_seconds", metric_type::histogram, "Times."},
      {"demo_empty_total", metric_type::counter, "No samples yet."},
  };
  s.samples = {
      {"demo_requests_total", {{"outcome", "ok"}, {"name", "home"}}, 1234},
      {"demo_requests_total", {{"outcome", "http_error"}, {"name", "a \"quoted\\\" name\nx"}}, 5},
      {"demo_in_flight", {}, 0.25},
      {"demo_time_seconds_bucket", {{"le", "0.5"}}, 3},
      {"demo_time_seconds_bucket", {{"le", "+Inf"}}, 4},
      {"demo_time_seconds_sum", {}, 1.75},
      {"demo_time_seconds_count", {}, 4},
  };
  return s;
}

TEST(metrics_exposition, renders_the_text_format_byte_for_byte) {
  const std::string want =
      "# HELP demo_requests_total Requests by outcome.\\nSecond line \\\\ here.\n"
      "# TYPE demo_requests_total counter\n"
      "demo_requests_total{outcome=\"ok\",name=\"home\"} 1234\n"
      "demo_requests_total{outcome=\"http_error\",name=\"a \\\"quoted\\\\\\\" name\\nx\"} 5\n"
      "# HELP demo_in_flight In flight.\n"
      "# TYPE demo_in_flight gauge\n"
      "demo_in_flight 0.25\n"
      "# HELP demo_time_seconds Times.\n"
      "# TYPE demo_time_seconds histogram\n"
      "demo_time_seconds_bucket{le=\"0.5\"} 3\n"
      "demo_time_seconds_bucket{le=\"+Inf\"} 4\n"
      "demo_time_seconds_sum 1.75\n"
      "demo_time_seconds_count 4\n"
      "# HELP demo_empty_total No samples yet.\n"
      "# TYPE demo_empty_total counter\n";
  EXPECT_EQ(render(example()), want);
}

TEST(metrics_exposition, writes_whole_numbers_whole_and_others_exactly) {
  snapshot s;
  s.families = {{"v", metric_type::gauge, "h"}};
  for (const double x :
       {0.0, 3.0, 9007199254740991.0, 1e17, 0.1, 6.3e-05, -2.5,
        std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()})
    s.samples.push_back({"v", {}, x});
  EXPECT_EQ(render(s),
            "# HELP v h\n# TYPE v gauge\nv 0\nv 3\nv 9007199254740991\nv 1e+17\nv 0.1\n"
            "v 6.3e-05\nv -2.5\nv +Inf\nv NaN\n");
}

TEST(metrics_exposition, parses_listen_addresses) {
  const auto a = parse_listen_address(":9464");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  const auto b = parse_listen_address("0.0.0.0:0");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "0.0.0.0");
  EXPECT_EQ(b->port, 0);
  const auto c = parse_listen_address("[::1]:80");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host, "::1");
  for (const char* bad : {"", "9464", ":", ":65536", ":-1", ":12x", "::1:80", "host:"})
    EXPECT_FALSE(parse_listen_address(bad)) << bad;
}

// One HTTP exchange with the server, polled from this thread as the collector polls it.
std::string exchange(scrape_server& server, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(server.port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string got;
  char buf[4096];
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    server.poll();
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
    if (n == 0) break;  // the server closed: the whole answer is in
    if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  close(fd);
  return got;
}

TEST(metrics_exposition, the_endpoint_serves_the_last_published_snapshot) {
  scrape_server server({"127.0.0.1", 0});
  ASSERT_GT(server.port(), 0);
  EXPECT_TRUE(server.loopback());
  server.publish(example());
  const std::string got = exchange(server, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string body = render(example());
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
  EXPECT_NE(got.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(got.find("Content-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos);
  EXPECT_TRUE(got.ends_with("\r\n\r\n" + body));
  EXPECT_EQ(server.scrapes(), 1u);
  EXPECT_TRUE(exchange(server, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
  EXPECT_TRUE(exchange(server, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
  EXPECT_EQ(server.scrapes(), 1u);
}

TEST(metrics_exposition, a_port_in_use_is_refused_in_one_line) {
  scrape_server first({"127.0.0.1", 0});
  try {
    scrape_server second({"127.0.0.1", first.port()});
    FAIL() << "bound a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace punctual::metrics
