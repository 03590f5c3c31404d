#include "server/responses.hpp"

#include <cstdio>

namespace punctual::server {

namespace {

std::string filler_headers(std::size_t at_least) {
  std::string out;
  char line[96];
  for (int i = 0; out.size() < at_least; ++i) {
    std::snprintf(line, sizeof line, "X-Filler-%05d: %s\r\n", i,
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    out += line;
  }
  return out;
}

}  // namespace

response_set response_set::make(std::size_t body_size) {
  std::string body(body_size, 'x');
  if (body_size >= 3) body.replace(0, 3, "ok\n");
  if (body_size > 3) body.back() = '\n';
  const std::string length = "Content-Length: " + std::to_string(body_size) + "\r\n";
  const std::string common = length + "Content-Type: text/plain\r\n";
  response_set set;
  set.ok = "HTTP/1.1 200 OK\r\n" + common + "\r\n" + body;
  set.ok_close = "HTTP/1.1 200 OK\r\n" + common + "Connection: close\r\n\r\n" + body;
  set.late = "HTTP/1.1 299 Late\r\n" + common + "\r\n" + body;
  set.late_close = "HTTP/1.1 299 Late\r\n" + common + "Connection: close\r\n\r\n" + body;
  set.bad_request =
      "HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n"
      "Connection: close\r\n\r\nbad request\n";

  set.garbage = "HTPT/9.9 abc\r\n\r\n";
  set.close_delimited = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body;
  set.huge_headers =
      "HTTP/1.1 200 OK\r\n" + filler_headers(huge_header_bytes) + common + "\r\n" + body;
  set.trickle_body = "slow\n";
  set.trickle_head =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(set.trickle_body.size()) +
      "\r\nContent-Type: text/plain\r\n\r\n";
  set.continue_ =
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" +
      set.ok;
  set.chunked =
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
      "Trailer: X-Checksum\r\n\r\n"
      "2;name=value\r\nok\r\n"
      "1;quoted=\"a;b\";flag\r\n\n\r\n"
      "0;last\r\nX-Checksum: 42\r\n\r\n";
  set.http10 = "HTTP/1.0 200 OK\r\n" + common + "\r\n" + body;
  set.unavailable = "HTTP/1.1 503 Service Unavailable\r\n" + common + "\r\n" + body;
  set.too_many = "HTTP/1.1 429 Too Many Requests\r\n" + common + "\r\n" + body;
  return set;
}

}  // namespace punctual::server
