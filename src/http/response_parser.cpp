#include "http/response_parser.hpp"

#include <algorithm>
#include <limits>

#include "http/byte_runs.hpp"

namespace punctual::http {

namespace {

using namespace runs;  // the byte classes both parser paths share

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view to_string(parse_error error) noexcept {
  switch (error) {
    case parse_error::none:
      return "no error";
    case parse_error::bad_status_line:
      return "malformed status line";
    case parse_error::bad_header:
      return "malformed header";
    case parse_error::bad_content_length:
      return "invalid, duplicate or overflowing Content-Length";
    case parse_error::conflicting_framing:
      return "both Transfer-Encoding and Content-Length";
    case parse_error::bad_chunk:
      return "malformed chunked body";
    case parse_error::header_too_large:
      return "header section too large";
    case parse_error::closed_before_response:
      return "connection closed before the response";
    case parse_error::truncated:
      return "connection closed in the middle of the response";
    case parse_error::h2_protocol:
      return "HTTP/2 protocol error";
  }
  return "unknown parse error";
}

void response_parser::reset(bool head_request, const body_needle* needle) noexcept {
  needle_ = needle;
  needle_state_ = 0;
  state_ = state::version;
  error_ = parse_error::none;
  head_request_ = head_request;
  started_ = false;
  minor_version_ = 1;
  status_code_ = 0;
  index_ = 0;
  section_bytes_ = 0;
  close_delimited_ = false;
  remaining_ = 0;
  body_bytes_ = 0;
  reset_headers();
}

void response_parser::reset_headers() noexcept {
  kind_ = header_kind::other;
  name_len_ = 0;
  name_too_long_ = false;
  line_length_ = 0;
  length_state_ = length_state::empty;
  has_content_length_ = false;
  content_length_ = 0;
  token_len_ = 0;
  token_invalid_ = false;
  token_ended_ = false;
  token_params_ = false;
  connection_close_ = false;
  connection_keep_alive_ = false;
  has_transfer_encoding_ = false;
  chunked_last_ = false;
}

bool response_parser::fail(parse_error error) noexcept {
  state_ = state::failed;
  error_ = error;
  return false;
}

bool response_parser::keep_alive() const noexcept {
  if (status_code_ == 101 || close_delimited_ || connection_close_) return false;
  return minor_version_ >= 1 || connection_keep_alive_;
}

response_parser::result response_parser::feed(const char* data, std::size_t size) noexcept {
  if (state_ == state::done) return {0, parse_status::complete};
  if (state_ == state::failed) return {0, parse_status::error};
  if (size == 0) return {0, parse_status::need_more};
  started_ = true;
  std::size_t i = 0;
  while (i < size) {
    const state s = state_;
    if (s == state::body_length || s == state::chunk_data || s == state::body_until_close) {
      i += consume_body(data + i, size - i);
    } else if (const std::size_t run =
                   s <= state::headers_end_lf ? header_run(data + i, size - i) : 0) {
      i += run;
    } else {
      const char c = data[i++];
      if (s <= state::headers_end_lf) {
        if (++section_bytes_ > max_header_bytes)
          fail(parse_error::header_too_large);
        else if (s <= state::status_lf)
          step_status_line(c);
        else
          step_header(c);
      } else if (s >= state::trailer_line_start) {
        if (++section_bytes_ > max_header_bytes)
          fail(parse_error::header_too_large);
        else
          step_trailer(c);
      } else {
        if (++section_bytes_ > max_header_bytes)
          fail(parse_error::bad_chunk);
        else
          step_chunk_line(c);
      }
    }
    if (state_ == state::done) return {i, parse_status::complete};
    if (state_ == state::failed) return {i, parse_status::error};
  }
  return {i, parse_status::need_more};
}

std::size_t response_parser::consume_body(const char* p, std::size_t n) noexcept {
  const std::size_t take = state_ == state::body_until_close
                               ? n
                               : static_cast<std::size_t>(std::min<std::uint64_t>(n, remaining_));
  body_bytes_ += take;
  if (needle_ != nullptr) needle_state_ = needle_->advance(needle_state_, p, take);
  if (state_ == state::body_until_close) return take;
  remaining_ -= take;
  if (remaining_ == 0) state_ = state_ == state::body_length ? state::done : state::chunk_data_cr;
  return take;
}

bool response_parser::step_status_line(char c) noexcept {
  switch (state_) {
    case state::version:
      if (c != version_literal[index_]) return fail(parse_error::bad_status_line);
      if (++index_ == version_literal.size()) state_ = state::version_minor;
      return true;
    case state::version_minor:
      if (!is_digit(c)) return fail(parse_error::bad_status_line);
      minor_version_ = c - '0';
      state_ = state::version_space;
      return true;
    case state::version_space:
      if (c != ' ') return fail(parse_error::bad_status_line);
      index_ = 0;
      status_code_ = 0;
      state_ = state::status_code;
      return true;
    case state::status_code:
      if (!is_digit(c)) return fail(parse_error::bad_status_line);
      status_code_ = status_code_ * 10 + (c - '0');
      if (++index_ == 3) {
        if (status_code_ < 100 || status_code_ > 599) return fail(parse_error::bad_status_line);
        state_ = state::status_after_code;
      }
      return true;
    case state::status_after_code:
      if (c == ' ')
        state_ = state::reason;
      else if (c == '\r')
        state_ = state::status_lf;
      else if (c == '\n')
        state_ = state::header_line_start;
      else
        return fail(parse_error::bad_status_line);
      return true;
    case state::reason:
      if (c == '\r')
        state_ = state::status_lf;
      else if (c == '\n')
        state_ = state::header_line_start;
      else if (!is_field(c))
        return fail(parse_error::bad_status_line);
      return true;
    case state::status_lf:
      if (c != '\n') return fail(parse_error::bad_status_line);
      state_ = state::header_line_start;
      return true;
    default:
      return fail(parse_error::bad_status_line);
  }
}

bool response_parser::step_header(char c) noexcept {
  switch (state_) {
    case state::header_line_start:
      if (c == '\r')
        state_ = state::headers_end_lf;
      else if (c == '\n')
        return end_headers();
      else if (!is_token(c))
        return fail(parse_error::bad_header);  // incl. obsolete folding
      else {
        name_len_ = 0;
        name_too_long_ = false;
        state_ = state::header_name;
        return header_name_char(c);
      }
      return true;
    case state::header_name:
      if (c == ':') {
        classify_header_name(copied_name());
        if (state_ == state::failed) return false;
        state_ = state::header_value_ows;
        return true;
      }
      return header_name_char(c);
    case state::header_value_ows:
      if (is_space(c)) return true;
      state_ = state::header_value;
      [[fallthrough]];
    case state::header_value:
      if (c == '\r')
        state_ = state::header_lf;
      else if (c != '\n')
        return header_value_char(c);
      else if (!end_header_value())
        return false;
      else
        state_ = state::header_line_start;
      return true;
    case state::header_lf:
      if (c != '\n') return fail(parse_error::bad_header);
      if (!end_header_value()) return false;
      state_ = state::header_line_start;
      return true;
    case state::headers_end_lf:
      if (c != '\n') return fail(parse_error::bad_header);
      return end_headers();
    default:
      return fail(parse_error::bad_header);
  }
}

bool response_parser::header_name_char(char c) noexcept {
  if (!is_token(c)) return fail(parse_error::bad_header);  // whitespace before ':' included
  append_name(&c, 1);
  return true;
}

void response_parser::append_name(const char* p, std::size_t n) noexcept {
  // Only names that fit can be one we look for; longer ones are just "other".
  if (n > sizeof(name_) - name_len_) {
    name_too_long_ = true;
    return;
  }
  std::copy_n(p, n, name_ + name_len_);
  name_len_ = static_cast<std::uint8_t>(name_len_ + n);
}

void response_parser::classify_header_name(std::string_view name) noexcept {
  kind_ = kind_of(name);
  if (kind_ == header_kind::content_length) {
    // Two Content-Length lines, even equal ones, mean a confused or hostile server.
    if (has_content_length_) {
      fail(parse_error::bad_content_length);
      return;
    }
    line_length_ = 0;
    length_state_ = length_state::empty;
  } else if (kind_ != header_kind::other) {
    token_len_ = 0;
    token_invalid_ = false;
    token_ended_ = false;
    token_params_ = false;
  }
}

bool response_parser::header_value_char(char c) noexcept {
  if (!is_field(c)) return fail(parse_error::bad_header);
  switch (kind_) {
    case header_kind::content_length:
      return content_length_char(c);
    case header_kind::transfer_encoding:
    case header_kind::connection:
      list_token_char(c);
      return true;
    case header_kind::other:
      return true;
  }
  return true;
}

bool response_parser::content_length_char(char c) noexcept {
  if (is_digit(c)) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (length_state_ == length_state::trailing_space ||
        line_length_ > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return fail(parse_error::bad_content_length);
    }
    line_length_ = line_length_ * 10 + digit;
    length_state_ = length_state::digits;
    return true;
  }
  if (is_space(c) && length_state_ != length_state::empty) {
    length_state_ = length_state::trailing_space;
    return true;
  }
  return fail(parse_error::bad_content_length);  // '-', '+', ',' (a list), letters, ...
}

void response_parser::list_token_char(char c) noexcept {
  if (c == ',') {
    end_list_token();
  } else if (token_params_) {
    // Parameters ("gzip;q=1") say nothing about framing or persistence.
  } else if (c == ';') {
    token_params_ = true;
    if (token_len_ == 0) token_invalid_ = true;
  } else if (is_space(c)) {
    if (token_len_ > 0) token_ended_ = true;
  } else if (token_ended_) {
    token_invalid_ = true;  // a second word inside one list element
  } else if (token_len_ < sizeof(token_)) {
    token_[token_len_++] = to_lower(c);
  } else {
    token_invalid_ = true;
  }
}

void response_parser::end_list_token() noexcept {
  const std::string_view token{token_, token_len_};
  const bool valid = !token_invalid_ && !token.empty();
  if (kind_ == header_kind::connection && valid) {
    if (token == "close") connection_close_ = true;
    if (token == "keep-alive") connection_keep_alive_ = true;
  } else if (kind_ == header_kind::transfer_encoding && (valid || token_invalid_)) {
    has_transfer_encoding_ = true;
    chunked_last_ = valid && token == "chunked";
  }
  token_len_ = 0;
  token_invalid_ = false;
  token_ended_ = false;
  token_params_ = false;
}

bool response_parser::end_header_value() noexcept {
  if (kind_ == header_kind::content_length) {
    if (length_state_ == length_state::empty) return fail(parse_error::bad_content_length);
    has_content_length_ = true;
    content_length_ = line_length_;
  } else if (kind_ != header_kind::other) {
    end_list_token();
  }
  kind_ = header_kind::other;
  return true;
}

bool response_parser::end_headers() noexcept {
  if (status_code_ < 200 && status_code_ != 101) {
    // Informational (100 Continue, 103 Early Hints): the real response follows.
    reset_headers();
    state_ = state::version;
    index_ = 0;
    section_bytes_ = 0;
    return true;
  }
  if (has_transfer_encoding_ && has_content_length_) return fail(parse_error::conflicting_framing);
  if (head_request_ || status_code_ == 101 || status_code_ == 204 || status_code_ == 304) {
    state_ = state::done;
  } else if (has_transfer_encoding_ && chunked_last_) {
    start_chunk_size();
  } else if (has_content_length_ && !has_transfer_encoding_) {
    remaining_ = content_length_;
    state_ = remaining_ == 0 ? state::done : state::body_length;
  } else {
    close_delimited_ = true;  // no framing, or a final coding other than chunked
    state_ = state::body_until_close;
  }
  return true;
}

bool response_parser::step_chunk_line(char c) noexcept {
  switch (state_) {
    case state::chunk_size: {
      const int digit = hex_value(c);
      if (digit >= 0) {
        if (remaining_ > (std::numeric_limits<std::uint64_t>::max() >> 4)) {
          return fail(parse_error::bad_chunk);
        }
        remaining_ = (remaining_ << 4) | static_cast<std::uint64_t>(digit);
        ++index_;
        return true;
      }
      if (index_ == 0) return fail(parse_error::bad_chunk);
      if (is_space(c))
        state_ = state::chunk_size_ows;
      else if (c == ';')
        state_ = state::chunk_extension;
      else if (c == '\r')
        state_ = state::chunk_size_lf;
      else if (c != '\n')
        return fail(parse_error::bad_chunk);
      else
        break;
      return true;
    }
    case state::chunk_size_ows:
      if (is_space(c)) return true;
      if (c == ';')
        state_ = state::chunk_extension;
      else if (c == '\r')
        state_ = state::chunk_size_lf;
      else if (c != '\n')
        return fail(parse_error::bad_chunk);
      else
        break;
      return true;
    case state::chunk_extension:
      if (c == '\r')
        state_ = state::chunk_size_lf;
      else if (c == '\n')
        break;
      else if (!is_field(c))
        return fail(parse_error::bad_chunk);
      return true;
    case state::chunk_size_lf:
      if (c != '\n') return fail(parse_error::bad_chunk);
      break;
    case state::chunk_data_cr:
      if (c == '\r')
        state_ = state::chunk_data_lf;
      else if (c != '\n')
        return fail(parse_error::bad_chunk);
      else
        start_chunk_size();
      return true;
    case state::chunk_data_lf:
      if (c != '\n') return fail(parse_error::bad_chunk);
      start_chunk_size();
      return true;
    default:
      return fail(parse_error::bad_chunk);
  }
  // The chunk size line is over.
  section_bytes_ = 0;
  state_ = remaining_ == 0 ? state::trailer_line_start : state::chunk_data;
  return true;
}

void response_parser::start_chunk_size() noexcept {
  state_ = state::chunk_size;
  index_ = 0;
  remaining_ = 0;
  section_bytes_ = 0;
}

bool response_parser::step_trailer(char c) noexcept {
  switch (state_) {
    case state::trailer_line_start:
      if (c == '\r')
        state_ = state::trailer_end_lf;
      else if (c == '\n')
        state_ = state::done;
      else if (!is_token(c))
        return fail(parse_error::bad_header);
      else
        state_ = state::trailer_line;
      return true;
    case state::trailer_line:
      if (c == '\r')
        state_ = state::trailer_lf;
      else if (c == '\n')
        state_ = state::trailer_line_start;
      else if (!is_field(c))
        return fail(parse_error::bad_header);
      return true;
    case state::trailer_lf:
      if (c != '\n') return fail(parse_error::bad_header);
      state_ = state::trailer_line_start;
      return true;
    case state::trailer_end_lf:
      if (c != '\n') return fail(parse_error::bad_header);
      state_ = state::done;
      return true;
    default:
      return fail(parse_error::bad_header);
  }
}

parse_status response_parser::finish_on_eof() noexcept {
  if (state_ == state::done) return parse_status::complete;
  if (state_ == state::failed) return parse_status::error;
  if (state_ == state::body_until_close) {
    state_ = state::done;
    return parse_status::complete;
  }
  fail(started_ ? parse_error::truncated : parse_error::closed_before_response);
  return parse_status::error;
}

}  // namespace punctual::http
