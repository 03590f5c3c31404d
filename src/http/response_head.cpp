#include "http/response_head.hpp"

#include <algorithm>
#include <string_view>

#include "http/byte_runs.hpp"

namespace punctual::http {
namespace {

using runs::header_kind;

bool crlf_at(const char* p, std::size_t n, std::size_t i) noexcept {
  return i + 2 <= n && p[i] == '\r' && p[i + 1] == '\n';
}

// One framing header's value into the head; false declines the head.
bool take_value(response_head& head, header_kind kind, std::string_view value) noexcept {
  if (kind == header_kind::content_length) {
    // A duplicate fails byte by byte; 19 digits cannot overflow 64 bits.
    if (head.has_content_length || value.empty() || value.size() > 19) return false;
    std::uint64_t length = 0;
    for (const char c : value) {
      if (!runs::is_digit(c)) return false;
      length = length * 10 + static_cast<std::uint64_t>(c - '0');
    }
    head.has_content_length = true;
    head.content_length = length;
    return true;
  }
  // One token, as the byte-wise path keeps at most 16 bytes of one.
  if (value.empty() || value.size() > 16 ||
      runs::token_run(value.data(), value.size()) != value.size()) {
    return false;
  }
  if (kind == header_kind::connection) {
    head.connection_close = head.connection_close || runs::token_is(value, "close");
    head.connection_keep_alive = head.connection_keep_alive || runs::token_is(value, "keep-alive");
  } else {
    head.has_transfer_encoding = true;
    head.chunked_last = runs::token_is(value, "chunked");
  }
  return true;
}

// "HTTP/1.x NNN[ reason]\r\n": the bytes it takes, 0 to decline.
std::size_t status_line(response_head& head, const char* p, std::size_t n) noexcept {
  if (n < 14 || std::string_view(p, 7) != "HTTP/1." || !runs::is_digit(p[7]) || p[8] != ' ')
    return 0;
  for (std::size_t k = 9; k < 12; ++k) {
    if (!runs::is_digit(p[k])) return 0;
  }
  head.minor_version = p[7] - '0';
  head.status_code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  if (head.status_code < 200 || head.status_code > 599) return 0;  // 1xx: another head follows
  std::size_t i = 12;
  if (p[i] == ' ') i += 1 + runs::field_run(p + i + 1, n - i - 1);
  return crlf_at(p, n, i) ? i + 2 : 0;
}

}  // namespace

std::optional<response_head> read_whole_head(const char* p, std::size_t n,
                                             std::size_t max_bytes) noexcept {
  n = std::min(n, max_bytes);  // a longer head fails byte by byte
  response_head head;
  std::size_t i = status_line(head, p, n);
  if (i == 0) return std::nullopt;
  for (;;) {
    if (crlf_at(p, n, i)) {
      head.size = i + 2;
      return head;
    }
    const std::size_t name = runs::token_run(p + i, n - i);
    if (name == 0 || i + name >= n || p[i + name] != ':') return std::nullopt;
    const header_kind kind = runs::kind_of({p + i, name});
    const std::size_t value = i + name + 1;
    const std::size_t end = value + runs::field_run(p + value, n - value);
    if (!crlf_at(p, n, end)) return std::nullopt;
    if (kind != header_kind::other && !take_value(head, kind, trim_ows({p + value, end - value}))) {
      return std::nullopt;
    }
    i = end + 2;
  }
}

}  // namespace punctual::http
