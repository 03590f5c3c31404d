#include "http/response_fields.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using punctual::http::response_body;
using punctual::http::response_header;

const std::string informational = "HTTP/1.1 100 Continue\r\nX-Token: early\r\n\r\n";
const std::string chunked =
    "HTTP/1.1 200 OK\r\nx-token:  abc \r\nTransfer-Encoding: gzip, Chunked\r\nSet-Cookie: a=1\r\n"
    "Set-Cookie: b=2\r\n\r\n4\r\n{\"a\"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\nTrailer: x\r\n\r\n";

TEST(response_fields, headers_of_the_final_response) {
  const std::string r = informational + chunked;
  EXPECT_EQ(response_header(r, "X-Token").value_or("missing"), "abc");
  EXPECT_EQ(response_header(r, "set-cookie").value_or("missing"), "a=1");
  EXPECT_FALSE(response_header(r, "Trailer"));  // trailers are not the head
  EXPECT_FALSE(response_header(r, "X-Missing"));
  std::string cookies;
  punctual::http::for_each_response_header(r, "Set-Cookie",
                                           [&](std::string_view v) { cookies += v; });
  EXPECT_EQ(cookies, "a=1b=2");
}

TEST(response_fields, bodies_are_dechunked) {
  std::string body;
  ASSERT_TRUE(response_body(informational + chunked, body));
  EXPECT_EQ(body, "{\"a\": 1}");
  ASSERT_TRUE(response_body("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", body));
  EXPECT_EQ(body, "hi");
  EXPECT_FALSE(response_body("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", body));
  EXPECT_FALSE(response_body("HTTP/1.1 200 OK\r\nContent-Length: 2", body));  // no whole head
}

}  // namespace
