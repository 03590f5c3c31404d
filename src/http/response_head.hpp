// The common response head in one pass. Internal to src/http: the response parser tries this
// first, and parses byte by byte whatever it declines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace punctual::http {

// What framing needs from a head, as the byte-wise parser would have found it.
struct response_head {
  std::size_t size = 0;  // bytes through the blank line
  int minor_version = 1;
  int status_code = 0;
  bool has_content_length = false;
  std::uint64_t content_length = 0;
  bool connection_close = false;
  bool connection_keep_alive = false;
  bool has_transfer_encoding = false;
  bool chunked_last = false;
};

// The head at the start of `p` when all of it lies within the first min(n, max_bytes) bytes
// and it is plain: a final status (200-599), CRLF line ends, and single-token Connection and
// Transfer-Encoding values. Anything else, valid or not, is nullopt, and the caller's
// incremental path decides it, so this never has to judge a bad head.
std::optional<response_head> read_whole_head(const char* p, std::size_t n,
                                             std::size_t max_bytes) noexcept;

}  // namespace punctual::http
