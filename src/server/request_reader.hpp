// Incremental HTTP/1.1 request reader for the test server: bytes in (split anywhere), one
// event per complete request head. Request bodies (Content-Length only) are consumed and
// discarded. Its buffer is allocated once per connection; reading allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace punctual::server {

struct request_event {
  enum class kind {
    need_more,  // every byte given was consumed; no complete request yet
    request,    // a request head is complete (its body may still be arriving)
    error,      // malformed: answer 400 and close
  };
  kind what = kind::need_more;
  std::size_t consumed = 0;  // bytes of the input used for this event
  bool keep_alive = true;    // for `request`: false after "Connection: close" or HTTP/1.0
  std::string_view head;     // for `request`: its head, valid until the next feed()
};

class request_reader {
 public:
  explicit request_reader(std::size_t max_head_bytes = 16 * 1024);

  // Consumes bytes from `input` up to and including the end of the next request head.
  // Call again with the rest of the input after a `request` event. After `error` the reader
  // stays in error.
  request_event feed(std::string_view input);

  // True while a request body is still being skipped.
  bool in_body() const { return body_left_ > 0; }

 private:
  request_event finish_head();
  std::size_t skip_body(std::string_view input);

  std::vector<char> head_;
  std::size_t head_size_ = 0;
  std::size_t line_start_ = 0;
  std::uint64_t body_left_ = 0;
  bool failed_ = false;
};

// Parses a complete head ("...\r\n\r\n" or with bare LF line ends). Returns false when
// malformed or unsupported (Transfer-Encoding bodies).
struct request_head {
  bool keep_alive = true;
  std::uint64_t content_length = 0;
};
bool parse_request_head(std::string_view head, request_head& out);

// The value of header `name` (any case) in a head that parse_request_head accepted, without its
// surrounding whitespace; empty when it has none.
std::string_view request_header(std::string_view head, std::string_view name);

}  // namespace punctual::server
