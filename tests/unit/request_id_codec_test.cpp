// The request id header (--request-id-header): its text, where it goes in a request, and the
// codec decorator that sends it, slot by slot, on the HTTP/1.1 codec's bytes.
#include "http/request_id_codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "http/h2_memory.hpp"

namespace punctual::http {
namespace {

std::string text_of(request_id id) {
  std::array<char, max_request_id_text> out;
  return std::string(request_id_text(id, out));
}

TEST(request_id, its_text_is_the_index_in_twelve_digits_then_the_step) {
  EXPECT_EQ(text_of({0, -1}), "000000000000");
  EXPECT_EQ(text_of({42, -1}), "000000000042");
  EXPECT_EQ(text_of({42, 0}), "000000000042.0");
  EXPECT_EQ(text_of({999'999'999'999, 3}), "999999999999.3");
  EXPECT_EQ(text_of({1'000'000'000'000, -1}), "1000000000000");  // wider, never cut
  EXPECT_EQ(text_of({std::numeric_limits<std::uint64_t>::max(), 65535}),
            "18446744073709551615.65535");
}

TEST(request_id, the_header_goes_after_the_request_line) {
  std::string room;
  const std::string get = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
  EXPECT_EQ(add_header(get, "x-request-id", "000000000007", room),
            "GET / HTTP/1.1\r\nx-request-id: 000000000007\r\nHost: h\r\n\r\n");
  const std::string post = "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}";
  EXPECT_EQ(add_header(post, "X-Id", "1", room),
            "POST /a HTTP/1.1\r\nX-Id: 1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(add_header("not a request", "X-Id", "1", room), "not a request");
}

// The decorator names each request by the id it is given, and keeps each slot's room: a second
// request of the same size reuses it.
TEST(request_id, the_codecs_name_every_request_they_begin) {
  h2_memory memory;
  const auto codecs =
      make_request_id_codecs(make_codec_factory(true, false, false), "x-request-id", 64);
  codec_set set = codecs->make(1, memory);
  ASSERT_TRUE(set.http1);
  codec& c = *set.http1;
  c.connected();
  const std::string get = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
  outgoing_request r;
  r.bytes = get;
  r.id = {5, -1};
  ASSERT_TRUE(c.begin(0, r));
  const std::string_view first = c.output();
  EXPECT_EQ(first, "GET / HTTP/1.1\r\nx-request-id: 000000000005\r\nHost: h\r\n\r\n");
  c.wrote(first.size());
  EXPECT_TRUE(c.output().empty());
  r.id = {6, 2};
  ASSERT_TRUE(c.begin(0, r));
  const std::string_view second = c.output();
  EXPECT_EQ(second, "GET / HTTP/1.1\r\nx-request-id: 000000000006.2\r\nHost: h\r\n\r\n");
  EXPECT_EQ(second.data(), first.data()) << "the slot's room was not reused";
}

}  // namespace
}  // namespace punctual::http
