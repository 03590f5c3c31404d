// The TLS transport against the in-process test server over TLS: a response read long after it
// arrived is still dated when it arrived (the receive stamp comes through the BIO), a
// reconnect resumes its session, and a certificate that does not verify fails as tls_verify.
#include <gtest/gtest.h>
#include <sys/epoll.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "net/clock.hpp"
#include "net/poller.hpp"
#include "net/tls.hpp"
#include "server/server.hpp"

namespace punctual::net {
namespace {

using std::chrono::milliseconds;

constexpr const char* request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";

struct tls_server {
  server::server srv{[] {
    server::server_config c;
    c.tls.self_signed = true;
    return c;
  }()};
  std::uint16_t port = srv.start();
  address target() const {
    address a;
    std::string error;
    EXPECT_TRUE(resolve("127.0.0.1", port, a, error)) << error;
    return a;
  }
};

// Drives set-up to its end on the loop: ready or failed.
setup_status set_up(transport& t, poller& loop, const address& to) {
  setup_status st = t.open(to, loop, 1);
  const nanoseconds give_up = mono_now() + std::chrono::seconds(5);
  while (st == setup_status::in_progress && mono_now() < give_up) {
    if (!loop.wait_for(milliseconds(50)).empty()) st = t.advance();
  }
  return st;
}

// Reads until a whole response is in (the server's is small), returning the stamp of the read
// that completed it.
nanoseconds read_response(transport& t, std::string& body) {
  char buf[4096];
  nanoseconds stamp{};
  const nanoseconds give_up = mono_now() + std::chrono::seconds(5);
  while (mono_now() < give_up) {
    nanoseconds s{};
    const io_result r = t.read(buf, sizeof buf, s);
    if (r.status == io_status::done) {
      body.append(buf, r.bytes);
      stamp = s;
      if (body.find("\r\n\r\n") != std::string::npos) return stamp;
    } else if (r.status != io_status::would_block) {
      break;
    }
  }
  ADD_FAILURE() << "no response: " << body;
  return stamp;
}

tls_client_config insecure_config() {
  tls_client_config c;
  c.enabled = true;
  c.verify = false;
  c.server_name = "localhost";
  return c;
}

TEST(tls_transport, a_late_read_gets_the_arrival_time_of_the_last_record) {
  tls_server s;
  const auto poll = make_epoll_poller(system_clock());
  poller& loop = *poll;
  const auto factory = tls_transport_factory(insecure_config(), system_clock());
  auto t = factory->make();
  ASSERT_EQ(set_up(*t, loop, s.target()), setup_status::ready) << t->last_failure().text;
  EXPECT_TRUE(t->tls().handshaken);
  EXPECT_STREQ(t->tls().alpn, "http/1.1");
  const nanoseconds written = mono_now();
  ASSERT_EQ(t->write(request, std::strlen(request)).status, io_status::done);
  std::this_thread::sleep_for(milliseconds(30));  // the response arrives while nobody reads
  std::string body;
  const nanoseconds stamp = read_response(*t, body);
  const nanoseconds read_at = mono_now();
  EXPECT_NE(body.find("HTTP/1.1 200"), std::string::npos) << body;
  ASSERT_GT(stamp.count(), 0) << "no receive stamp came through the BIO";
  realtime_to_mono to_mono;
  to_mono.refresh(net::system_clock());
  const nanoseconds arrived = to_mono(stamp);
  EXPECT_GE(arrived, written - milliseconds(1));
  EXPECT_LE(arrived, written + milliseconds(15));  // loopback: well before the read, 30 ms later
  EXPECT_GE(read_at - arrived, milliseconds(20));
}

TEST(tls_transport, a_reconnect_resumes_its_session) {
  tls_server s;
  const auto poll = make_epoll_poller(system_clock());
  poller& loop = *poll;
  const auto factory = tls_transport_factory(insecure_config(), system_clock());
  auto t = factory->make();
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(set_up(*t, loop, s.target()), setup_status::ready) << t->last_failure().text;
    EXPECT_EQ(t->tls().resumed, round > 0) << "round " << round;
    EXPECT_GT(t->tls().handshake_time.count(), 0);
    // TLS 1.3 hands the session over after the handshake: read a response to receive it.
    ASSERT_EQ(t->write(request, std::strlen(request)).status, io_status::done);
    std::string body;
    read_response(*t, body);
    t->close();
    EXPECT_FALSE(t->is_open());
  }
}

TEST(tls_transport, an_untrusted_certificate_fails_verification_with_the_reason) {
  tls_server s;
  const auto poll = make_epoll_poller(system_clock());
  poller& loop = *poll;
  tls_client_config c = insecure_config();
  c.verify = true;
  const auto factory = tls_transport_factory(c, system_clock());
  auto t = factory->make();
  ASSERT_EQ(set_up(*t, loop, s.target()), setup_status::failed);
  EXPECT_EQ(t->last_failure().kind, failure_kind::tls_verify);
  EXPECT_NE(t->last_failure().text.find("self-signed"), std::string::npos)
      << t->last_failure().text;
}

TEST(tls_transport, a_server_that_answers_in_plain_http_fails_the_handshake) {
  server::server_config config;
  config.tls.self_signed = true;
  config.tls.fault = {server::tls_fault_kind::plaintext_answer, 0};
  server::server plain{config};
  const std::uint16_t port = plain.start();
  address a;
  std::string error;
  ASSERT_TRUE(resolve("127.0.0.1", port, a, error));
  const auto poll = make_epoll_poller(system_clock());
  poller& loop = *poll;
  const auto factory = tls_transport_factory(insecure_config(), system_clock());
  auto t = factory->make();
  ASSERT_EQ(set_up(*t, loop, a), setup_status::failed);
  EXPECT_EQ(t->last_failure().kind, failure_kind::tls_handshake);
  EXPECT_FALSE(t->last_failure().text.empty());
}

TEST(tls_transport, bad_files_are_named_in_one_line) {
  tls_client_config c = insecure_config();
  c.ca_file = "/nonexistent/ca.pem";
  const auto unreadable = check_tls_client(c);
  ASSERT_TRUE(unreadable.has_value());
  EXPECT_NE(unreadable->find("--cacert"), std::string::npos) << *unreadable;
  EXPECT_EQ(unreadable->find('\n'), std::string::npos);
  EXPECT_FALSE(check_tls_client(insecure_config()).has_value());
}

}  // namespace
}  // namespace punctual::net
