// Incremental HTTP/1.1 response parser: bytes in, one response's framing out.
//
// It sits on the hot path of every request, so it stores no headers, never allocates and never
// throws; it is a flat state machine over bytes that keeps only what framing needs (status,
// body length, chunking, keep-alive). Bytes may arrive split at any boundary.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/body_needle.hpp"
#include "http/byte_runs.hpp"
#include "http/response_head.hpp"

namespace punctual::http {

enum class parse_status { need_more, complete, error };

enum class parse_error {
  none,
  bad_status_line,         // not "HTTP/1.x NNN reason"
  bad_header,              // bad name, control byte, obsolete line folding, ...
  bad_content_length,      // not digits, overflowing, duplicated or conflicting
  conflicting_framing,     // both Transfer-Encoding and Content-Length
  bad_chunk,               // bad chunk size line, missing CRLF after data, ...
  header_too_large,        // header section (or trailer section) over max_header_bytes
  closed_before_response,  // peer closed before the first byte of the response
  truncated,               // peer closed in the middle of a response
  h2_protocol,             // HTTP/2 framing the session could not accept (src/http/h2_codec.cpp)
};

std::string_view to_string(parse_error error) noexcept;

class response_parser {
 public:
  // The limit for the status line plus headers, and separately for a chunked trailer section.
  static constexpr std::size_t max_header_bytes = 64 * 1024;

  struct result {
    std::size_t consumed;
    parse_status status;
  };

  response_parser() noexcept { reset(); }

  // Call before each response; a HEAD response has headers only, whatever they announce. With a
  // needle, the body is searched for its text as it passes (body_found()).
  void reset(bool head_request = false, const body_needle* needle = nullptr) noexcept;

  // Consumes bytes of ONE response and stops right after its last byte, so pipelined bytes
  // stay unconsumed. After complete or error, further calls consume nothing.
  result feed(const char* data, std::size_t size) noexcept;

  // The peer closed the connection: completes a close-delimited body, otherwise error.
  parse_status finish_on_eof() noexcept;

  // Valid once the status line is complete (always, after `complete`).
  int status_code() const noexcept { return status_code_; }
  // False on "Connection: close", on HTTP/1.0 without keep-alive, after a close-delimited body
  // and after 101 Switching Protocols: the connection cannot carry another response.
  bool keep_alive() const noexcept;
  // At least one byte of this response has been seen (time to first byte).
  bool started() const noexcept { return started_; }
  bool done() const noexcept { return state_ == state::done; }
  // No needle was given, or its text was in the body (chunk framing excluded).
  bool body_found() const noexcept { return needle_ == nullptr || needle_->found(needle_state_); }
  // Bytes of body payload seen so far (chunk framing excluded).
  std::uint64_t body_bytes() const noexcept { return body_bytes_; }
  int http_minor_version() const noexcept { return minor_version_; }
  parse_error error() const noexcept { return error_; }
  std::string_view error_text() const noexcept { return to_string(error_); }

 private:
  enum class state : std::uint8_t {
    version,
    version_minor,
    version_space,
    status_code,
    status_after_code,
    reason,
    status_lf,
    header_line_start,
    header_name,
    header_value_ows,
    header_value,
    header_lf,
    headers_end_lf,
    body_length,
    body_until_close,
    chunk_size,
    chunk_size_ows,
    chunk_extension,
    chunk_size_lf,
    chunk_data,
    chunk_data_cr,
    chunk_data_lf,
    trailer_line_start,
    trailer_line,
    trailer_lf,
    trailer_end_lf,
    done,
    failed,
  };
  enum class length_state : std::uint8_t { empty, digits, trailing_space };

  void reset_headers() noexcept;
  bool fail(parse_error error) noexcept;
  bool step_status_line(char c) noexcept;
  bool step_header(char c) noexcept;
  bool step_chunk_line(char c) noexcept;
  bool step_trailer(char c) noexcept;
  void start_chunk_size() noexcept;
  bool header_name_char(char c) noexcept;
  void append_name(const char* p, std::size_t n) noexcept;
  void classify_header_name(std::string_view name) noexcept;
  // The name copied across reads; empty (an "other" name) when it did not fit.
  std::string_view copied_name() const noexcept {
    return name_too_long_ ? std::string_view{} : std::string_view{name_, name_len_};
  }
  bool header_value_char(char c) noexcept;
  bool content_length_char(char c) noexcept;
  void list_token_char(char c) noexcept;
  void end_list_token() noexcept;
  bool end_header_value() noexcept;
  bool end_headers() noexcept;
  std::size_t consume_body(const char* p, std::size_t n) noexcept;
  std::size_t header_run(const char* p, std::size_t n) noexcept;
  std::size_t one_run(const char* p, std::size_t n) noexcept;
  std::size_t whole_head(const char* p, std::size_t n) noexcept;
  std::size_t line_run(const char* p, std::size_t n) noexcept;
  bool take(std::size_t k) noexcept;
  std::size_t count_run(std::size_t run) noexcept;
  std::size_t name_run(const char* p, std::size_t n) noexcept;
  std::size_t ows_run(const char* p, std::size_t n) noexcept;
  std::size_t list_token_run(const char* p, std::size_t n) noexcept;
  std::size_t length_run(const char* p, std::size_t n) noexcept;
  std::size_t status_prefix(const char* p, std::size_t n) noexcept;
  std::size_t line_end(const char* p, std::size_t n) noexcept;

  // The last head whole_head read, byte for byte, and what it found: a server answers the same
  // request with the same head but for its Date, which changes once a second, so the next head
  // is most often these bytes again and needs no second reading (the result depends on the
  // head's bytes alone). Heads longer than this are read every time.
  static constexpr std::size_t remembered_head_bytes = 512;
  std::array<char, remembered_head_bytes> last_head_bytes_{};
  response_head last_head_{};

  state state_ = state::version;
  parse_error error_ = parse_error::none;
  bool head_request_ = false;
  bool started_ = false;
  int minor_version_ = 1;
  int status_code_ = 0;
  std::uint32_t index_ = 0;        // position inside a literal or digit run of the current state
  std::size_t section_bytes_ = 0;  // bytes of the current header or trailer section

  runs::header_kind kind_ = runs::header_kind::other;
  char name_[17] = {};  // as long as the longest name we look for
  std::uint8_t name_len_ = 0;
  bool name_too_long_ = false;

  // Content-Length being parsed on the current line, and the one announced so far.
  std::uint64_t line_length_ = 0;
  length_state length_state_ = length_state::empty;
  bool has_content_length_ = false;
  std::uint64_t content_length_ = 0;

  // One comma-separated token of Connection or Transfer-Encoding, lowercased.
  char token_[16] = {};
  std::uint8_t token_len_ = 0;
  bool token_invalid_ = false;  // too long, or a second word inside one list element
  bool token_ended_ = false;    // whitespace seen after the element's name
  bool token_params_ = false;   // ';' seen: the rest of the element is parameters
  bool connection_close_ = false;
  bool connection_keep_alive_ = false;
  bool has_transfer_encoding_ = false;
  bool chunked_last_ = false;

  bool close_delimited_ = false;
  std::uint64_t remaining_ = 0;  // body or chunk bytes still to read
  std::uint64_t body_bytes_ = 0;
  const body_needle* needle_ = nullptr;
  std::uint32_t needle_state_ = 0;
};

}  // namespace punctual::http
