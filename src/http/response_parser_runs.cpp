// The response parser's fast paths: runs of bytes, and whole heads, taken in one step. Each
// must leave exactly the state the byte-wise path in response_parser.cpp would, whatever the
// split of the input; the unit tests and the fuzz target compare the two on every input.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "http/byte_runs.hpp"
#include "http/response_head.hpp"
#include "http/response_parser.hpp"

namespace punctual::http {

using namespace runs;  // the byte classes both parser paths share

// Most of a header section is runs the byte-wise path would only step through: the status
// line's fixed prefix, names, values nobody needs, line ends, a Connection token. This takes
// such runs one after another and leaves exactly the state the byte-wise path would; it stops
// where the byte-wise path must decide (a header's end, a Content-Length digit, a bad byte).
std::size_t response_parser::header_run(const char* p, std::size_t n) noexcept {
  std::size_t i = 0;
  while (i < n && state_ <= state::headers_end_lf) {
    const std::size_t run = one_run(p + i, n - i);
    if (run == 0) break;
    i += run;
  }
  return i;
}

// One run from p (n > 0): the bytes taken, or 0 for "go byte by byte".
std::size_t response_parser::one_run(const char* p, std::size_t n) noexcept {
  switch (state_) {
    case state::version:
      if (const std::size_t run = whole_head(p, n)) return run;
      return status_prefix(p, n);
    case state::status_after_code:
      if (p[0] != ' ' || !take(1)) return 0;
      state_ = state::reason;
      return 1;
    case state::reason:
      if (is_field(p[0])) return count_run(field_run(p, n));
      if (n < 2 || p[0] != '\r' || p[1] != '\n' || !take(2)) return 0;
      state_ = state::header_line_start;
      return 2;
    case state::header_line_start:
      if (const std::size_t run = line_run(p, n)) return run;
      if (n >= 2 && p[0] == '\r' && p[1] == '\n' && take(2)) {
        end_headers();
        return 2;
      }
      if (!is_token(p[0])) return 0;
      name_len_ = 0;
      name_too_long_ = false;
      state_ = state::header_name;
      [[fallthrough]];
    case state::header_name:
      return name_run(p, n);
    case state::header_value_ows:
      if (kind_ != header_kind::other) return ows_run(p, n);
      if (!is_field(p[0])) return 0;
      state_ = state::header_value;  // for a value nobody reads, leading spaces change nothing
      [[fallthrough]];
    case state::header_value:
      if (kind_ == header_kind::other && is_field(p[0])) return count_run(field_run(p, n));
      if (kind_ == header_kind::connection || kind_ == header_kind::transfer_encoding) {
        if (const std::size_t run = list_token_run(p, n)) return run;
      } else if (kind_ == header_kind::content_length) {
        if (const std::size_t run = length_run(p, n)) return run;
      }
      return line_end(p, n);
    default:
      return 0;
  }
}

// A plain head that is all here, taken in one pass (http/response_head.hpp).
std::size_t response_parser::whole_head(const char* p, std::size_t n) noexcept {
  if (index_ != 0) return 0;
  std::optional<response_head> head;
  if (last_head_.size != 0 && n >= last_head_.size &&
      std::memcmp(p, last_head_bytes_.data(), last_head_.size) == 0) {
    head = last_head_;
  } else {
    head = read_whole_head(p, n, max_header_bytes);
    if (!head) return 0;
    if (head->size <= remembered_head_bytes) {
      std::memcpy(last_head_bytes_.data(), p, head->size);
      last_head_ = *head;
    }
  }
  minor_version_ = head->minor_version;
  status_code_ = head->status_code;
  has_content_length_ = head->has_content_length;
  content_length_ = head->content_length;
  connection_close_ = head->connection_close;
  connection_keep_alive_ = head->connection_keep_alive;
  has_transfer_encoding_ = head->has_transfer_encoding;
  chunked_last_ = head->chunked_last;
  section_bytes_ = head->size;
  end_headers();
  return head->size;
}

// A whole "Name: value CRLF" line of a header nobody reads, in one go; 0 when the line is not
// all here, is one we read, or is bad (the other paths then take it, and fail where they must).
std::size_t response_parser::line_run(const char* p, std::size_t n) noexcept {
  std::size_t j = 0;
  while (j < n && is_token(p[j])) ++j;
  if (j == 0 || j == n || p[j] != ':' || kind_of({p, j}) != header_kind::other) return 0;
  const std::size_t value = j + 1 + field_run(p + j + 1, n - j - 1);
  if (value + 2 > n || p[value] != '\r' || p[value + 1] != '\n' || !take(value + 2)) return 0;
  kind_ = header_kind::other;
  return value + 2;
}

// Room for k more bytes in the section, counted; false leaves the byte-wise path to fail on
// the same byte.
bool response_parser::take(std::size_t k) noexcept {
  if (max_header_bytes - section_bytes_ < k) return false;
  section_bytes_ += k;
  return true;
}

// The first `run` bytes are known good: counted into the section. Past max_header_bytes it
// fails on the same byte as the byte-wise path, whatever the split.
std::size_t response_parser::count_run(std::size_t run) noexcept {
  const std::size_t room = max_header_bytes - section_bytes_;
  if (run > room) {
    fail(parse_error::header_too_large);
    return room + 1;
  }
  section_bytes_ += run;
  return run;
}

// A header name's bytes, and the ':' after it when it is here. A name that arrives whole is
// classified where it lies; only one split across reads is copied.
std::size_t response_parser::name_run(const char* p, std::size_t n) noexcept {
  std::size_t j = 0;
  while (j < n && is_token(p[j])) ++j;
  if (j > 0) {
    j = count_run(j);
    if (state_ == state::failed) return j;
  }
  const bool colon = j < n && p[j] == ':' && take(1);
  if (colon && name_len_ == 0 && !name_too_long_) {
    classify_header_name({p, j});
  } else {
    append_name(p, j);
    if (!colon) return j;
    classify_header_name(copied_name());
  }
  if (state_ != state::failed) state_ = state::header_value_ows;
  return j + 1;
}

// Spaces before a value we read (they change nothing), then the value's state.
std::size_t response_parser::ows_run(const char* p, std::size_t n) noexcept {
  std::size_t j = 0;
  while (j < n && is_space(p[j])) ++j;
  if (j == n) return count_run(j);
  state_ = state::header_value;  // what the byte-wise path does on the first non-space byte
  return j == 0 ? one_run(p, n) : count_run(j);
}

// A plain list token ("keep-alive", "chunked") in one piece, lowercased as byte by byte.
std::size_t response_parser::list_token_run(const char* p, std::size_t n) noexcept {
  if (token_ended_ || token_params_) return 0;
  std::size_t j = 0;
  while (j < n && is_token(p[j])) ++j;
  if (j == 0 || j > sizeof(token_) - token_len_ || !take(j)) return 0;
  for (std::size_t k = 0; k < j; ++k) token_[token_len_ + k] = to_lower(p[k]);
  token_len_ = static_cast<std::uint8_t>(token_len_ + j);
  return j;
}

// Content-Length digits that the byte-wise path would accept; it takes the first one it fails.
std::size_t response_parser::length_run(const char* p, std::size_t n) noexcept {
  if (length_state_ == length_state::trailing_space) return 0;
  const std::size_t limit = std::min(n, max_header_bytes - section_bytes_);
  std::size_t j = 0;
  for (; j < limit && is_digit(p[j]); ++j) {
    const auto digit = static_cast<std::uint64_t>(p[j] - '0');
    if (line_length_ > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) break;
    line_length_ = line_length_ * 10 + digit;
    length_state_ = length_state::digits;
  }
  section_bytes_ += j;
  return j;
}

// "HTTP/1.x NNN" in one piece; what follows the code goes byte by byte.
std::size_t response_parser::status_prefix(const char* p, std::size_t n) noexcept {
  constexpr std::size_t length = 12;
  if (index_ != 0 || n < length || std::string_view(p, version_literal.size()) != version_literal)
    return 0;
  const char minor = p[7];
  if (!is_digit(minor) || p[8] != ' ' || !is_digit(p[9]) || !is_digit(p[10]) || !is_digit(p[11]))
    return 0;
  const int code = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  if (code < 100 || code > 599) return 0;
  minor_version_ = minor - '0';
  status_code_ = code;
  index_ = 3;
  section_bytes_ += length;
  state_ = state::status_after_code;
  return length;
}

// CRLF at the end of a value, as '\r' then '\n' would be taken byte by byte.
std::size_t response_parser::line_end(const char* p, std::size_t n) noexcept {
  if (state_ != state::header_value || n < 2 || p[0] != '\r' || p[1] != '\n' || !take(2)) return 0;
  if (end_header_value()) state_ = state::header_line_start;
  return 2;
}

}  // namespace punctual::http
