// The HTTP/2 codec against hand-made server frames: a request becomes HEADERS (and DATA) with
// HTTP/2's own header fields, a response completes on END_STREAM with its status and the bytes
// of its stream, a reset or a refusal ends only its stream, a GOAWAY takes the connection's
// capacity away and makes the streams above it unprocessed, a cancelled stream reports nothing,
// and bytes that are not HTTP/2 are a protocol error.
#include "http/h2_codec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/h2_request.hpp"

namespace punctual::http {
namespace {

std::string frame(std::uint8_t type, std::uint8_t flags, std::uint32_t stream,
                  const std::string& payload) {
  std::string f;
  const auto n = static_cast<std::uint32_t>(payload.size());
  f += static_cast<char>(n >> 16);
  f += static_cast<char>(n >> 8);
  f += static_cast<char>(n);
  f += static_cast<char>(type);
  f += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>(stream >> shift);
  return f + payload;
}
std::string u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string settings(std::uint16_t id, std::uint32_t value) {
  return frame(4, 0, 0,
               std::string{static_cast<char>(id >> 8), static_cast<char>(id)} + u32(value));
}
// HEADERS with ":status: 200" (HPACK static index 8), then DATA with END_STREAM.
std::string ok(std::uint32_t stream, const std::string& body) {
  return frame(1, 4, stream, "\x88") + frame(0, 1, stream, body);
}

struct event {
  char what;  // 'b' first byte, 'r' response, 'f' failed, 'p' protocol error
  std::uint32_t slot = 0;
  int status = 0;
  stream_failure why = stream_failure::reset;
  std::uint32_t code = 0;
  stream_bytes bytes;
  bool body_found = false;
};

event make(char what, std::uint32_t slot = 0) {
  event e;
  e.what = what;
  e.slot = slot;
  return e;
}

struct recorder final : codec_sink {
  std::vector<event> events;
  void on_first_byte(std::uint32_t slot) override { events.push_back(make('b', slot)); }
  void on_response(std::uint32_t slot, const response_end& r, const stream_bytes& b) override {
    event e = make('r', slot);
    e.status = r.status;
    e.bytes = b;
    e.body_found = r.body_found;
    events.push_back(e);
  }
  void on_stream_failed(std::uint32_t slot, stream_failure why, std::uint32_t code,
                        const stream_bytes& b) override {
    event e = make('f', slot);
    e.why = why;
    e.code = code;
    e.bytes = b;
    events.push_back(e);
  }
  void on_protocol_error(parse_error) override { events.push_back(make('p')); }
};

const std::string get =
    "GET /a?b=1 HTTP/1.1\r\nHost: example.test:8080\r\nUser-Agent: t\r\nConnection: "
    "keep-alive\r\n\r\n";

struct h2_codec_fixture : ::testing::Test {
  h2_memory memory;
  std::unique_ptr<codec> c = make_h2_codec({false, &memory}, 4);
  recorder sink;

  std::string drain() {
    std::string all;
    for (std::string_view out = c->output(); !out.empty(); out = c->output()) {
      all.append(out);
      c->wrote(out.size());
    }
    return all;
  }
  void feed(const std::string& bytes) {
    EXPECT_EQ(c->feed(bytes.data(), bytes.size(), sink), bytes.size());
  }
};

TEST(h2_request, request_line_and_host_become_pseudo_headers) {
  std::string names;
  std::vector<nghttp2_nv> nv;
  const auto parts = to_h2_headers(
      "POST /p HTTP/1.1\r\nHost: h.test\r\nX-Long-Name: v \r\nTransfer-Encoding: x\r\n\r\nbody",
      true, names, nv);
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->body, "body");
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& f : nv) {
    got.emplace_back(std::string(reinterpret_cast<const char*>(f.name), f.namelen),
                     std::string(reinterpret_cast<const char*>(f.value), f.valuelen));
  }
  const std::vector<std::pair<std::string, std::string>> want{{":method", "POST"},
                                                              {":scheme", "https"},
                                                              {":authority", "h.test"},
                                                              {":path", "/p"},
                                                              {"x-long-name", "v"}};
  EXPECT_EQ(got, want);
  EXPECT_FALSE(to_h2_headers("GET / HTTP/1.1\r\nHost: x\r\n", false, names, nv));
  EXPECT_TRUE(is_http1_only_header("Keep-Alive"));
  EXPECT_FALSE(is_http1_only_header("Content-Length"));
}

TEST_F(h2_codec_fixture, sends_the_preface_settings_and_a_headers_frame) {
  c->connected();
  EXPECT_FALSE(c->settled());
  ASSERT_TRUE(c->begin(0, {get, false, nullptr, nullptr}));
  const std::string out = drain();
  ASSERT_GE(out.size(), 24u);
  EXPECT_EQ(out.substr(0, 24), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  EXPECT_EQ(out[24 + 3], 4);  // SETTINGS first
  feed(settings(3, 2));
  EXPECT_TRUE(c->settled());
  EXPECT_EQ(c->capacity(), 2u);  // the server's limit within the local 4
}

TEST_F(h2_codec_fixture, a_response_completes_on_end_stream_with_its_stream_bytes) {
  c->connected();
  const body_needle needle("ell");
  std::string kept;
  ASSERT_TRUE(c->begin(1, {get, false, &needle, &kept}));
  drain();
  feed(settings(3, 100) + frame(1, 4, 1, "\x88"));
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].what, 'b');
  feed(frame(0, 1, 1, "hello"));
  ASSERT_EQ(sink.events.size(), 2u);
  const event& r = sink.events[1];
  EXPECT_EQ(r.what, 'r');
  EXPECT_EQ(r.slot, 1u);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body_found);
  EXPECT_EQ(r.bytes.received, (9u + 1) + (9 + 5));
  EXPECT_GT(r.bytes.sent, 9u);
  EXPECT_EQ(kept, "HTTP/1.1 200 \r\n\r\nhello");
}

TEST_F(h2_codec_fixture, resets_and_refusals_end_only_their_stream) {
  c->connected();
  for (std::uint32_t s = 0; s < 3; ++s) ASSERT_TRUE(c->begin(s, {get, false, nullptr, nullptr}));
  drain();
  feed(settings(3, 100) + frame(3, 0, 1, u32(2)) + frame(3, 0, 3, u32(7)) + ok(5, "x"));
  std::vector<char> kinds;
  for (const auto& e : sink.events) kinds.push_back(e.what);
  ASSERT_EQ(kinds, (std::vector<char>{'f', 'f', 'b', 'r'}));
  EXPECT_EQ(sink.events[0].why, stream_failure::reset);
  EXPECT_EQ(sink.events[0].code, 2u);
  EXPECT_EQ(sink.events[1].why, stream_failure::refused);
  EXPECT_EQ(sink.events[3].slot, 2u);
  EXPECT_EQ(c->capacity(), 4u);
}

TEST_F(h2_codec_fixture, goaway_makes_the_streams_above_it_unprocessed) {
  c->connected();
  for (std::uint32_t s = 0; s < 3; ++s) ASSERT_TRUE(c->begin(s, {get, false, nullptr, nullptr}));
  drain();
  feed(settings(3, 100) + frame(7, 0, 0, u32(1) + u32(0)));
  EXPECT_EQ(c->capacity(), 0u);
  feed(ok(1, "x"));
  c->finish_on_eof(sink);
  int unprocessed = 0, responses = 0;
  for (const auto& e : sink.events) {
    unprocessed += e.what == 'f' && e.why == stream_failure::goaway;
    responses += e.what == 'r';
  }
  EXPECT_EQ(unprocessed, 2);
  EXPECT_EQ(responses, 1);
}

TEST_F(h2_codec_fixture, a_cancelled_stream_reports_nothing_and_sends_rst_stream) {
  c->connected();
  ASSERT_TRUE(c->begin(0, {get, false, nullptr, nullptr}));
  drain();
  EXPECT_TRUE(c->cancel(0));
  const std::string out = drain();
  ASSERT_EQ(out.size(), 13u);
  EXPECT_EQ(out[3], 3);              // RST_STREAM
  EXPECT_EQ(out.substr(9), u32(8));  // CANCEL
  feed(settings(3, 100) + ok(1, "late"));
  for (const auto& e : sink.events) EXPECT_EQ(e.what, 'x') << "an event for a cancelled stream";
}

TEST_F(h2_codec_fixture, bytes_that_are_not_http2_are_a_protocol_error) {
  c->connected();
  ASSERT_TRUE(c->begin(0, {get, false, nullptr, nullptr}));
  drain();
  const std::string junk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  c->feed(junk.data(), junk.size(), sink);
  ASSERT_FALSE(sink.events.empty());
  EXPECT_EQ(sink.events.back().what, 'p');
  EXPECT_EQ(c->capacity(), 0u);
}

}  // namespace
}  // namespace punctual::http
