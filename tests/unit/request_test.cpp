#include "http/request.hpp"

#include <gtest/gtest.h>

#include <string>

#include "http/response_parser.hpp"

namespace {

using punctual::http::encode_request;
using punctual::http::request_spec;
using punctual::http::validate_header;
using punctual::http::validate_request;

TEST(request, default_get) {
  request_spec spec;
  spec.host = "127.0.0.1:8080";
  EXPECT_EQ(encode_request(spec),
            "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: punctual/0.1.0\r\n\r\n");
}

TEST(request, post_with_body_and_headers) {
  request_spec spec;
  spec.method = "POST";
  spec.host = "[::1]:9000";
  spec.path_and_query = "/api/items?x=1";
  spec.headers = {"Content-Type: application/json", "X-Trace:   abc  "};
  spec.body = R"({"a":1})";
  EXPECT_EQ(encode_request(spec),
            "POST /api/items?x=1 HTTP/1.1\r\nHost: [::1]:9000\r\nUser-Agent: punctual/0.1.0\r\n"
            "Content-Type: application/json\r\nX-Trace: abc\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
}

TEST(request, empty_body_methods) {
  for (const char* method : {"POST", "PUT", "PATCH"}) {
    request_spec spec;
    spec.method = method;
    spec.host = "h";
    EXPECT_EQ(encode_request(spec), std::string{method} +
                                        " / HTTP/1.1\r\nHost: h\r\nUser-Agent: punctual/0.1.0\r\n"
                                        "Content-Length: 0\r\n\r\n");
  }
  request_spec del;
  del.method = "DELETE";
  del.host = "h";
  EXPECT_EQ(encode_request(del).find("Content-Length"), std::string::npos);
  del.body = "x";
  EXPECT_NE(encode_request(del).find("Content-Length: 1\r\n"), std::string::npos);
}

TEST(request, user_host_and_user_agent_replace_defaults) {
  request_spec spec;
  spec.host = "127.0.0.1";
  spec.headers = {"Accept: */*", "user-agent: curl/8", "HOST: example.com"};
  EXPECT_EQ(encode_request(spec),
            "GET / HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nuser-agent: curl/8\r\n\r\n");
}

TEST(request, connection_close) {
  request_spec spec;
  spec.host = "h";
  spec.keep_alive = false;
  EXPECT_EQ(encode_request(spec),
            "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: punctual/0.1.0\r\nConnection: close\r\n\r\n");
  spec.headers = {"Connection: keep-alive"};
  const std::string encoded = encode_request(spec);
  EXPECT_EQ(encoded.find("Connection: close"), std::string::npos);
  EXPECT_NE(encoded.find("Connection: keep-alive\r\n"), std::string::npos);
}

TEST(request, header_validation) {
  for (const char* good :
       {"X-A: b", "X-A:b", "X-Empty:", "X!#$%&'*+-.^_`|~9: v a l u e", "A: tab\there"}) {
    EXPECT_FALSE(validate_header(good)) << good << ": " << validate_header(good).value_or("");
  }
  EXPECT_EQ(validate_header("NoColon").value_or(""),
            "-H 'NoColon': expected 'Name: value', e.g. -H 'Accept: text/html'");
  EXPECT_EQ(validate_header(": v").value_or(""),
            "-H ': v': empty header name (expected 'Name: value')");
  EXPECT_EQ(validate_header("Bad Name: v").value_or(""),
            "-H 'Bad Name: v': invalid character ' ' in header name (letters, digits and "
            "!#$%&'*+-.^_`|~ only)");
  EXPECT_EQ(
      validate_header("X: a\r\nInjected: 1").value_or(""),
      "-H 'X: a\\x0d\\x0aInjected: 1': header value contains CR, LF or another control character");
  EXPECT_TRUE(validate_header(std::string("X: a\0b", 6)));
  EXPECT_TRUE(validate_header("X(y): v"));
}

// DEL and non-ASCII bytes are escaped in messages like control bytes, so a message stays one
// printable line whatever the user typed.
TEST(request, messages_escape_del_and_non_ascii) {
  EXPECT_EQ(validate_header("X: a\x7f").value_or(""),
            "-H 'X: a\\x7f': header value contains CR, LF or another control character");
  EXPECT_EQ(validate_header("X\x80: v").value_or(""),
            "-H 'X\\x80: v': invalid character '\\x80' in header name (letters, digits and "
            "!#$%&'*+-.^_`|~ only)");
  EXPECT_EQ(
      punctual::http::validate_method("G\xc3\xa9T").value_or(""),
      "method 'G\\xc3\\xa9T' is not a valid HTTP method (expected a token, e.g. GET or POST)");
}

TEST(request, request_validation) {
  request_spec spec;
  spec.host = "h";
  EXPECT_FALSE(validate_request(spec));
  spec.method = "GE T";
  EXPECT_EQ(validate_request(spec).value_or(""),
            "method 'GE T' is not a valid HTTP method (expected a token, e.g. GET or POST)");
  spec.method = "";
  EXPECT_TRUE(validate_request(spec));
  spec.method = "GET";
  spec.headers = {"content-length: 5"};
  EXPECT_EQ(validate_request(spec).value_or(""),
            "-H 'content-length: 5': punctual sets the body framing itself; remove this header");
  spec.headers = {"Transfer-Encoding: chunked"};
  EXPECT_TRUE(validate_request(spec));
  spec.headers = {"Host: a", "host: b"};
  EXPECT_TRUE(validate_request(spec));
  spec.headers = {"X: \n"};
  EXPECT_TRUE(validate_request(spec));
}

// The encoded request must be a well-formed message: parse it with our own response parser's
// header rules by turning the request line into a status line.
TEST(request, encoded_headers_are_well_formed) {
  request_spec spec;
  spec.method = "PUT";
  spec.host = "h:1";
  spec.headers = {"X-A: 1", "X-B:2"};
  spec.body = "hello";
  std::string encoded = encode_request(spec);
  const auto line_end = encoded.find("\r\n");
  encoded.replace(0, line_end, "HTTP/1.1 200 OK");
  punctual::http::response_parser parser;
  const auto r = parser.feed(encoded.data(), encoded.size());
  EXPECT_EQ(r.status, punctual::http::parse_status::complete);
  EXPECT_EQ(r.consumed, encoded.size());
  EXPECT_EQ(parser.body_bytes(), 5u);
}

}  // namespace
