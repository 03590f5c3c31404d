// TLS of the test server (`serve --tls-*`), in-process over loopback, driven by OpenSSL's own
// client on blocking sockets whose reads give up after a timeout, so a broken server fails a
// test instead of hanging it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "server/responses.hpp"
#include "server/server.hpp"
#include "server/tls.hpp"
#include "server_test_support.hpp"

namespace punctual::server {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

using test_support::get;
const std::string get_close = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

using test_support::mono_now;

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("punctual_server_tls_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Removes this process's temporary files once every test has run.
class remove_temp_dir : public ::testing::Environment {
  void TearDown() override { std::filesystem::remove_all(temp_dir()); }
};
[[maybe_unused]] ::testing::Environment* const cleanup =
    ::testing::AddGlobalTestEnvironment(new remove_temp_dir);

int connect_loopback(std::uint16_t port, milliseconds timeout) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
  const timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Reads one response (head, then a Content-Length body) from what `fill` appends to `buffer`.
template <typename Fill>
std::string read_http_response(std::string& buffer, Fill fill) {
  std::size_t end;
  while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) return {};
  }
  const auto cl = buffer.find("Content-Length: ");
  const std::size_t length =
      cl == std::string::npos || cl > end ? 0 : std::stoul(buffer.substr(cl + 16));
  while (buffer.size() < end + 4 + length) {
    if (!fill()) return {};
  }
  std::string response = buffer.substr(0, end + 4 + length);
  buffer.erase(0, end + 4 + length);
  return response;
}

// The same request over plain TCP, for comparison.
std::string plain_exchange(std::uint16_t port, const std::string& request) {
  const int fd = connect_loopback(port, 3s);
  EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string buffer;
  const std::string response = read_http_response(buffer, [&] {
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) buffer.append(chunk, static_cast<std::size_t>(n));
    return n > 0;
  });
  ::close(fd);
  return response;
}

struct client_options {
  int max_version = 0;  // 0: the highest, TLS 1.3
  std::vector<std::string> alpn = {"http/1.1"};
  SSL_SESSION* session = nullptr;  // offered for resumption
  std::string trust_pem{};         // verify the server against this certificate alone
  std::string verify_name{};       // the DNS name or IP address it must be valid for
  milliseconds timeout = 3000ms;
};

// Every byte the server sent, as it came off the socket (before decryption).
long capture(BIO* bio, int oper, const char* data, std::size_t, int, long, int ret,
             std::size_t* processed) {
  if (oper == (BIO_CB_READ | BIO_CB_RETURN) && ret > 0 && processed) {
    reinterpret_cast<std::string*>(BIO_get_callback_arg(bio))->append(data, *processed);
  }
  return ret;
}

class tls_client {
 public:
  explicit tls_client(std::uint16_t port, const client_options& o = {}) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    if (o.max_version) SSL_CTX_set_max_proto_version(ctx_, o.max_version);
    std::string wire;
    for (const auto& p : o.alpn) wire += static_cast<char>(p.size()) + p;
    if (!wire.empty()) {
      SSL_CTX_set_alpn_protos(ctx_, reinterpret_cast<const unsigned char*>(wire.data()),
                              static_cast<unsigned>(wire.size()));
    }
    if (!o.trust_pem.empty()) trust(o.trust_pem);
    fd_ = connect_loopback(port, o.timeout);
    ssl_ = SSL_new(ctx_);
    BIO* bio = new_socket_bio(fd_);
    BIO_set_callback_ex(bio, capture);
    BIO_set_callback_arg(bio, reinterpret_cast<char*>(&received_));
    SSL_set_bio(ssl_, bio, bio);
    if (!o.verify_name.empty()) expect_name(o.verify_name);
    if (o.session) SSL_set_session(ssl_, o.session);
  }
  ~tls_client() {
    if (established_) SSL_shutdown(ssl_);  // a session is resumable only after a clean end
    SSL_free(ssl_);
    ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  tls_client(const tls_client&) = delete;
  tls_client& operator=(const tls_client&) = delete;

  // SSL_ERROR_NONE when the handshake succeeded, else SSL_get_error's code (reason() then
  // holds OpenSSL's reason code).
  int handshake() {
    ERR_clear_error();
    const int ret = SSL_connect(ssl_);
    if (ret == 1) {
      established_ = true;
      return SSL_ERROR_NONE;
    }
    const int error = SSL_get_error(ssl_, ret);
    reason_ = ERR_GET_REASON(ERR_peek_error());
    ERR_clear_error();
    return error;
  }
  bool send(const std::string& bytes) {
    std::size_t n = 0;
    return SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n) == 1 && n == bytes.size();
  }
  std::string read_response() {
    return read_http_response(buffer_, [this] { return fill(); });
  }
  // Reads `size` bytes (all until the end by default) and tells how reading ended:
  // SSL_ERROR_ZERO_RETURN after the server's close_notify.
  std::string read_exactly(std::size_t size = std::string::npos, int* ended = nullptr) {
    while (buffer_.size() < size && fill()) {
    }
    std::string out = buffer_.substr(0, size);
    buffer_.erase(0, out.size());
    if (ended) *ended = last_error_;
    return out;
  }
  // After a failed handshake: the rest of the server's bytes, straight off the socket. True
  // when the server ended the connection (rather than the read timing out).
  bool drain_raw() {
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return n == 0 || errno == ECONNRESET;
      received_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  std::string exchange(const std::string& request) {
    EXPECT_TRUE(send(request));
    return read_response();
  }

  SSL* ssl() const { return ssl_; }
  int reason() const { return reason_; }
  const std::string& received() const { return received_; }
  std::string alpn() const {
    const unsigned char* data = nullptr;
    unsigned size = 0;
    SSL_get0_alpn_selected(ssl_, &data, &size);
    return {reinterpret_cast<const char*>(data), size};
  }

 private:
  void trust(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ASSERT_NE(cert, nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_), cert);
    X509_free(cert);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  }
  void expect_name(const std::string& name) {  // an IP address, else a DNS name
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str()) != 1) {
      SSL_set1_host(ssl_, name.c_str());
    }
  }
  bool fill() {
    char chunk[16384];
    std::size_t n = 0;
    ERR_clear_error();
    const int ret = SSL_read_ex(ssl_, chunk, sizeof chunk, &n);
    if (ret != 1) {
      last_error_ = SSL_get_error(ssl_, ret);
      ERR_clear_error();
      return false;
    }
    buffer_.append(chunk, n);
    return true;
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool established_ = false;
  int reason_ = 0;
  int last_error_ = SSL_ERROR_NONE;
  std::string buffer_;
  std::string received_;
};

// A started server; TLS with a self-signed certificate unless the config says otherwise.
struct started_server {
  explicit started_server(server_config config = {}, bool tls = true) {
    if (tls && !config.tls.enabled()) config.tls.self_signed = true;
    if (config.duration.count() == 0) config.duration = 30s;  // a safety net: the test stops it
    srv = std::make_unique<server>(config);
    port = srv->start();
  }
  std::unique_ptr<server> srv;
  std::uint16_t port = 0;
};

std::string sha256_hex(X509* cert) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  EXPECT_EQ(X509_digest(cert, EVP_sha256(), digest, &size), 1);
  std::string out;
  char hex[4];
  for (unsigned i = 0; i < size; ++i)
    out.append(hex, std::snprintf(hex, sizeof hex, ":%02X", digest[i]));
  return out.substr(1);
}

// ---- the punctual binary, for what only the command line does --------------------------

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `punctual ARGS` (a --duration bounds it) and returns its exit code; its stderr lands
// in `err`.
int run_punctual(const std::string& args, std::string& err) {
  const auto err_path = temp_dir() / "err.txt";
  const std::string command =
      std::string(PUNCTUAL_BINARY) + " " + args + " >/dev/null 2>'" + err_path.string() + "'";
  const int status = std::system(command.c_str());
  err = file_text(err_path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `openssl req`: a P-256 key and a self-signed certificate for localhost, in two PEM files.
void make_certificate(const std::filesystem::path& cert, const std::filesystem::path& key) {
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '" +
      key.string() + "' -out '" + cert.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << "is the openssl command installed?";
}

// ---- answering over TLS --------------------------------------------------------------------

void expect_same_answers_as_plain(int max_version, int expected_version) {
  started_server plain({}, false);
  started_server tls;
  tls_client c(tls.port, {.max_version = max_version});
  ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
  EXPECT_EQ(SSL_version(c.ssl()), expected_version);
  const std::string expected = plain_exchange(plain.port, get);
  ASSERT_EQ(expected.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_EQ(c.exchange(get), expected);
  EXPECT_EQ(c.exchange(get), expected) << "keep-alive";
  // Pipelined, and over several TLS records in one write: the server reads all of them.
  const std::string post = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 40000\r\n\r\n";
  EXPECT_TRUE(c.send(get + post + std::string(40000, 'x') + get));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.read_response(), expected) << i;
}

TEST(server_tls, get_over_tls13_gets_the_same_bytes_as_plain) {
  expect_same_answers_as_plain(0, TLS1_3_VERSION);
}

TEST(server_tls, get_over_tls12_gets_the_same_bytes_as_plain) {
  expect_same_answers_as_plain(TLS1_2_VERSION, TLS1_2_VERSION);
}

TEST(server_tls, alpn_selects_http11_when_offered_and_is_optional) {
  started_server s;
  tls_client offered(s.port, {.alpn = {"h2", "http/1.1"}});
  ASSERT_EQ(offered.handshake(), SSL_ERROR_NONE);
  EXPECT_EQ(offered.alpn(), "http/1.1");
  tls_client none(s.port, {.alpn = {}});
  ASSERT_EQ(none.handshake(), SSL_ERROR_NONE);
  EXPECT_EQ(none.alpn(), "");
  EXPECT_EQ(none.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
  tls_client other(s.port, {.alpn = {"h2"}});
  ASSERT_EQ(other.handshake(), SSL_ERROR_NONE);
  EXPECT_EQ(other.alpn(), "");
}

// Two threads: whichever worker accepts the reconnection, it resumes.
TEST(server_tls, a_reconnection_resumes_its_session) {
  server_config config;
  config.threads = 2;
  started_server s(config);
  for (const int version : {0, TLS1_2_VERSION}) {
    SSL_SESSION* session = nullptr;
    {
      tls_client first(s.port, {.max_version = version});
      ASSERT_EQ(first.handshake(), SSL_ERROR_NONE);
      EXPECT_FALSE(SSL_session_reused(first.ssl()));
      // TLS 1.3 tickets come after the handshake: a read takes them in.
      EXPECT_EQ(first.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
      session = SSL_get1_session(first.ssl());
    }
    ASSERT_NE(session, nullptr);
    for (int i = 0; i < 4; ++i) {
      tls_client again(s.port, {.max_version = version, .session = session});
      ASSERT_EQ(again.handshake(), SSL_ERROR_NONE);
      EXPECT_TRUE(SSL_session_reused(again.ssl())) << "version " << version << ", try " << i;
      EXPECT_EQ(again.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
    }
    tls_client fresh(s.port, {.max_version = version});
    ASSERT_EQ(fresh.handshake(), SSL_ERROR_NONE);
    EXPECT_FALSE(SSL_session_reused(fresh.ssl()));
    SSL_SESSION_free(session);
  }
}

TEST(server_tls, connection_close_ends_with_close_notify) {
  started_server s;
  tls_client c(s.port);
  ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
  const std::string response = c.exchange(get_close);
  EXPECT_NE(response.find("Connection: close"), std::string::npos) << response;
  int ended = 0;
  EXPECT_EQ(c.read_exactly(std::string::npos, &ended), "");
  EXPECT_EQ(ended, SSL_ERROR_ZERO_RETURN);
}

TEST(server_tls, http_faults_play_the_same_over_tls) {
  server_config config;
  config.faults = {parse_fault("chunked:1")};
  started_server s(config);
  const std::string chunked = response_set::make(config.body_size).chunked;
  tls_client c(s.port);
  ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
  EXPECT_TRUE(c.send(get));
  EXPECT_EQ(c.read_exactly(chunked.size()), chunked);
  EXPECT_TRUE(c.send(get));
  EXPECT_EQ(c.read_exactly(chunked.size()), chunked) << "the connection is kept";

  server_config reset;
  reset.faults = {parse_fault("reset=12:1")};
  started_server r(reset);
  tls_client d(r.port);
  ASSERT_EQ(d.handshake(), SSL_ERROR_NONE);
  EXPECT_TRUE(d.send(get));
  int ended = 0;
  EXPECT_EQ(d.read_exactly(std::string::npos, &ended), "HTTP/1.1 200");
  EXPECT_EQ(ended, SSL_ERROR_SYSCALL) << "a reset, not a close_notify";
}

// The server stalls at 100 ms for 400 ms, and at 800 ms for 300 ms: a handshake begun in the
// first stall waits it out, and so does a request sent in the second; arrivals are logged once
// the request is decrypted.
TEST(server_tls, a_stall_holds_handshakes_and_responses) {
  server_config config;
  config.stall_at = {{100ms, 400ms}, {800ms, 300ms}};
  config.arrival_log_path = (temp_dir() / "arrivals.log").string();
  started_server s(config);
  const nanoseconds origin = s.srv->origin_mono();
  const auto at = [&](milliseconds offset) { return steady_clock::time_point(origin + offset); };
  std::this_thread::sleep_until(at(150ms));
  tls_client c(s.port);
  ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
  EXPECT_GE(mono_now() - origin, 500ms) << "the handshake was answered inside the stall";
  EXPECT_EQ(c.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
  std::this_thread::sleep_until(at(850ms));
  const nanoseconds sent = mono_now();
  EXPECT_EQ(c.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_GE(mono_now() - origin, 1100ms) << "the response was written inside the stall";
  s.srv->stop();
  s.srv->wait();
  const auto& arrivals = s.srv->arrivals();
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_GE(arrivals[1].arrival_mono_ns, sent.count());
  EXPECT_GE(arrivals[1].answered_mono_ns, (origin + 1100ms).count());
}

// ---- certificates --------------------------------------------------------------------------

TEST(server_tls, self_signed_certificate_verifies_for_its_names_only) {
  started_server s;
  const std::string pem = s.srv->tls()->certificate_pem();
  for (const char* name : {"localhost", "127.0.0.1", "::1"}) {
    tls_client c(s.port, {.trust_pem = pem, .verify_name = name});
    EXPECT_EQ(c.handshake(), SSL_ERROR_NONE) << name;
    EXPECT_EQ(SSL_get_verify_result(c.ssl()), X509_V_OK) << name;
  }
  tls_client wrong(s.port, {.trust_pem = pem, .verify_name = "example.com"});
  EXPECT_EQ(wrong.handshake(), SSL_ERROR_SSL);
  EXPECT_EQ(SSL_get_verify_result(wrong.ssl()), X509_V_ERR_HOSTNAME_MISMATCH);
  started_server other;  // another start, another certificate
  tls_client untrusted(other.port, {.trust_pem = pem, .verify_name = "localhost"});
  EXPECT_EQ(untrusted.handshake(), SSL_ERROR_SSL);
}

TEST(server_tls, printed_fingerprint_is_the_certificates_sha256) {
  const std::string command =
      std::string(PUNCTUAL_BINARY) + " serve --port 0 --tls-self-signed --duration 1s";
  std::FILE* serve = ::popen(command.c_str(), "r");
  ASSERT_NE(serve, nullptr);
  std::string out;
  char line[256];
  for (int i = 0; i < 2 && std::fgets(line, sizeof line, serve); ++i) out += line;
  std::smatch m;
  const std::regex expected(
      "^tls: self-signed certificate, SHA-256 fingerprint ((?:[0-9A-F]{2}:){31}[0-9A-F]{2})\n"
      "listening on 127\\.0\\.0\\.1:([0-9]+)\n$");
  if (std::regex_search(out, m, expected)) {
    tls_client c(static_cast<std::uint16_t>(std::stoi(m[2])));
    ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
    X509* cert = SSL_get1_peer_certificate(c.ssl());
    EXPECT_EQ(sha256_hex(cert), m[1].str());
    X509_free(cert);
  } else {
    ADD_FAILURE() << out;
  }
  EXPECT_EQ(::pclose(serve), 0) << "serve ended by its --duration";
}

// Certificates and keys made once for the suite by the openssl command.
class server_tls_pem : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::filesystem::create_directories(dir());
    make_certificate(dir() / "a.crt", dir() / "a.key");
    make_certificate(dir() / "b.crt", dir() / "b.key");
    const std::string ed = "openssl genpkey -algorithm ed25519 -out '" + file("ed.key") + "'";
    ASSERT_EQ(std::system((ed + " 2>/dev/null").c_str()), 0);
  }
  static std::filesystem::path dir() { return temp_dir() / "pem"; }
  static std::string file(const char* name) { return (dir() / name).string(); }
};

TEST_F(server_tls_pem, the_files_certificate_is_served) {
  server_config config;
  config.tls.cert_path = file("a.crt");
  config.tls.key_path = file("a.key");
  started_server s(config);
  tls_client c(s.port);
  ASSERT_EQ(c.handshake(), SSL_ERROR_NONE);
  X509* cert = SSL_get1_peer_certificate(c.ssl());
  EXPECT_EQ(sha256_hex(cert), s.srv->tls()->fingerprint());
  X509_free(cert);
  EXPECT_EQ(c.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
}

TEST_F(server_tls_pem, a_mismatched_key_and_unusable_files_are_refused) {
  struct refused {
    std::string cert, key, why;
  };
  const std::vector<refused> cases = {
      {file("a.crt"), file("b.key"), "does not match the certificate"},
      {file("a.crt"), file("ed.key"), "does not match the certificate"},  // another key type
      {file("none.crt"), file("a.key"), "cannot read"},
      {file("a.key"), file("a.key"), "no usable PEM certificate"},
      {file("a.crt"), file("a.crt"), "no usable PEM private key"},
      {"", file("a.key"), "--tls-key needs --tls-cert"},
  };
  for (const refused& r : cases) {
    server_config config;
    config.tls.cert_path = r.cert;
    config.tls.key_path = r.key;
    try {
      server srv(config);
      ADD_FAILURE() << "accepted: " << r.why;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST_F(server_tls_pem, bad_tls_options_exit_2_with_one_line) {
  const std::vector<std::string> cases = {
      "--tls-cert " + file("a.crt") + " --tls-key " + file("b.key"),
      "--tls-cert " + file("none.crt"),
      "--tls-self-signed --tls-cert " + file("a.crt"),
      "--tls-key " + file("a.key"),
      "--tls-fault garbage-hello",
      "--tls-self-signed --tls-fault nope",
      "--tls-self-signed --tls-fault stall-handshake:after=x",
      "--tls-self-signed --tls-fault stall-handshake:later=1",
  };
  for (const auto& args : cases) {
    std::string err;
    EXPECT_EQ(run_punctual("serve --port 0 --duration 5s " + args, err), 2) << args;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// ---- hostile handshakes --------------------------------------------------------------------

TEST(server_tls_options, tls_faults_parse_and_refuse_bad_text) {
  EXPECT_EQ(parse_tls_fault("garbage-hello"), (tls_fault_spec{tls_fault_kind::garbage_hello, 0}));
  EXPECT_EQ(parse_tls_fault("stall-handshake:after=12"),
            (tls_fault_spec{tls_fault_kind::stall_handshake, 12}));
  EXPECT_EQ(parse_tls_fault("close-in-handshake").kind, tls_fault_kind::close_in_handshake);
  EXPECT_EQ(parse_tls_fault("plaintext-answer:after=0").kind, tls_fault_kind::plaintext_answer);
  for (const char* bad : {"", "garbage", "garbage-hello:", "garbage-hello:after=",
                          "garbage-hello:after=1x", "garbage-hello:after=-1", "none",
                          "garbage-hello:1", "garbage-hello:after=99999999999999999999"}) {
    EXPECT_THROW(parse_tls_fault(bad), std::invalid_argument) << bad;
  }
}

// A server whose second and later connections get `fault`; the first is served as usual
// and stays open beside them.
struct hostile_server {
  explicit hostile_server(const std::string& fault) : s(config_for(fault)) {
    EXPECT_EQ(first.handshake(), SSL_ERROR_NONE);
    EXPECT_EQ(first.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
  }
  static server_config config_for(const std::string& fault) {
    server_config config;
    config.tls.self_signed = true;
    config.tls.fault = parse_tls_fault(fault + ":after=1");
    return config;
  }
  started_server s;
  tls_client first{s.port};
};

TEST(server_tls_fault, garbage_hello_fails_the_handshake_with_a_protocol_error) {
  hostile_server h("garbage-hello");
  tls_client c(h.s.port);
  EXPECT_EQ(c.handshake(), SSL_ERROR_SSL);
  EXPECT_NE(c.reason(), SSL_R_UNEXPECTED_EOF_WHILE_READING);
  EXPECT_TRUE(c.drain_raw()) << "the server closed";
  EXPECT_EQ(c.received(), h.s.srv->tls()->garbage());
  ASSERT_FALSE(c.received().empty());
  const auto type = static_cast<unsigned char>(c.received()[0]);
  EXPECT_TRUE(type < 20 || type > 24) << "looks like a TLS record";
}

TEST(server_tls_fault, stall_handshake_times_out_the_client_and_blocks_nothing) {
  hostile_server h("stall-handshake");
  const auto start = steady_clock::now();
  tls_client c(h.s.port, {.timeout = 300ms});
  EXPECT_EQ(c.handshake(), SSL_ERROR_WANT_READ) << "the read timed out";
  EXPECT_GE(steady_clock::now() - start, 290ms);
  EXPECT_EQ(c.received(), "");
  // The one worker still answers the first connection while it holds the second.
  EXPECT_EQ(h.first.exchange(get).substr(0, 15), "HTTP/1.1 200 OK");
}

TEST(server_tls_fault, close_in_handshake_sends_the_server_hello_then_eof) {
  hostile_server h("close-in-handshake");
  for (const int version : {0, TLS1_2_VERSION}) {
    tls_client c(h.s.port, {.max_version = version});
    const int error = c.handshake();
    EXPECT_TRUE(error == SSL_ERROR_SYSCALL ||
                (error == SSL_ERROR_SSL && c.reason() == SSL_R_UNEXPECTED_EOF_WHILE_READING))
        << "error " << error << ", reason " << c.reason();
    const std::string& got = c.received();
    ASSERT_GE(got.size(), 6u);
    EXPECT_EQ(got[0], 0x16) << "a handshake record";
    EXPECT_EQ(got[5], 0x02) << "holding a ServerHello";
    const std::size_t length =
        (std::size_t{static_cast<unsigned char>(got[3])} << 8) | static_cast<unsigned char>(got[4]);
    EXPECT_EQ(got.size(), 5 + length) << "nothing after the ServerHello";
  }
}

TEST(server_tls_fault, plaintext_answer_is_an_http_400) {
  hostile_server h("plaintext-answer");
  tls_client c(h.s.port);
  EXPECT_EQ(c.handshake(), SSL_ERROR_SSL);
  EXPECT_TRUE(c.drain_raw()) << "the server closed";
  EXPECT_EQ(c.received(), response_set::make(3).bad_request);
  EXPECT_EQ(c.received().substr(0, 24), "HTTP/1.1 400 Bad Request");
}

}  // namespace
}  // namespace punctual::server
