#include "server/request_reader.hpp"

#include <algorithm>
#include <cstring>

#include "http/text.hpp"

namespace punctual::server {

namespace {

using http::iequals;

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), http::is_token_char);
}

bool is_field_char(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits off the next line, without its "\n" or "\r\n".
std::string_view next_line(std::string_view& rest) {
  const auto nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// METHOD SP request-target SP HTTP/1.x; sets the default keep-alive of the version.
bool parse_request_line(std::string_view line, request_head& out) {
  const auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || !is_token(line.substr(0, sp1))) return false;
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return false;
  for (char c : line.substr(sp1 + 1, sp2 - sp1 - 1)) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  const std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    out.keep_alive = true;
  } else if (version == "HTTP/1.0") {
    out.keep_alive = false;
  } else {
    return false;
  }
  return true;
}

bool parse_content_length(std::string_view value, std::uint64_t& out) {
  if (value.empty() || value.size() > 15) return false;
  std::uint64_t n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = n;
  return true;
}

void apply_connection(std::string_view value, request_head& out) {
  while (!value.empty()) {
    const auto comma = value.find(',');
    const std::string_view item = trim_ows(value.substr(0, comma));
    if (iequals(item, "close")) out.keep_alive = false;
    if (iequals(item, "keep-alive")) out.keep_alive = true;
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
  }
}

struct header_state {
  bool seen_length = false;
  bool close = false;
};

bool apply_header(std::string_view line, request_head& out, header_state& state) {
  if (line.front() == ' ' || line.front() == '\t') return false;  // obsolete line folding
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return false;
  const std::string_view name = line.substr(0, colon);
  const std::string_view raw = line.substr(colon + 1);
  if (!std::all_of(raw.begin(), raw.end(),
                   [](char c) { return is_field_char(static_cast<unsigned char>(c)); })) {
    return false;
  }
  const std::string_view value = trim_ows(raw);
  if (iequals(name, "content-length")) {
    std::uint64_t n = 0;
    if (!parse_content_length(value, n)) return false;
    if (state.seen_length && n != out.content_length) return false;
    state.seen_length = true;
    out.content_length = n;
  } else if (iequals(name, "transfer-encoding")) {
    return false;  // chunked request bodies are not supported by the test server
  } else if (iequals(name, "connection")) {
    request_head probe{true, 0};
    apply_connection(value, probe);
    if (!probe.keep_alive) state.close = true;
    apply_connection(value, out);
  }
  return true;
}

}  // namespace

bool parse_request_head(std::string_view head, request_head& out) {
  out = request_head{};
  std::string_view rest = head;
  if (!parse_request_line(next_line(rest), out)) return false;
  header_state state;
  for (;;) {
    const std::string_view line = next_line(rest);
    if (line.empty()) break;
    if (line.find('\r') != std::string_view::npos) return false;
    if (!apply_header(line, out, state)) return false;
  }
  if (state.close) out.keep_alive = false;  // "close" wins over any "keep-alive"
  return true;
}

std::string_view request_header(std::string_view head, std::string_view name) {
  std::string_view rest = head;
  next_line(rest);  // the request line
  for (std::string_view line = next_line(rest); !line.empty(); line = next_line(rest)) {
    const auto colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), name)) {
      return trim_ows(line.substr(colon + 1));
    }
  }
  return {};
}

request_reader::request_reader(std::size_t max_head_bytes) : head_(max_head_bytes) {}

std::size_t request_reader::skip_body(std::string_view input) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, input.size()));
  body_left_ -= n;
  return n;
}

request_event request_reader::finish_head() {
  request_head head;
  const std::string_view bytes(head_.data(), head_size_);
  const bool ok = parse_request_head(bytes, head);
  head_size_ = 0;
  line_start_ = 0;
  if (!ok) {
    failed_ = true;
    return {request_event::kind::error, 0, false, {}};
  }
  body_left_ = head.content_length;
  return {request_event::kind::request, 0, head.keep_alive, bytes};
}

request_event request_reader::feed(std::string_view input) {
  if (failed_) return {request_event::kind::error, 0, false, {}};
  std::size_t used = skip_body(input);
  input.remove_prefix(used);
  while (!input.empty()) {
    const auto* nl = static_cast<const char*>(std::memchr(input.data(), '\n', input.size()));
    const std::size_t take = nl ? static_cast<std::size_t>(nl - input.data()) + 1 : input.size();
    if (head_size_ + take > head_.size()) {
      failed_ = true;
      return {request_event::kind::error, used + take, false, {}};
    }
    std::memcpy(head_.data() + head_size_, input.data(), take);
    head_size_ += take;
    used += take;
    input.remove_prefix(take);
    if (!nl) break;
    const std::size_t line_len = head_size_ - line_start_;
    const bool blank = line_len == 1 || (line_len == 2 && head_[line_start_] == '\r');
    if (blank && line_start_ == 0) {  // blank lines before a request line are ignored
      head_size_ = 0;
      continue;
    }
    line_start_ = head_size_;
    if (blank) {
      request_event ev = finish_head();
      ev.consumed = used;
      return ev;
    }
  }
  return {request_event::kind::need_more, used, true, {}};
}

}  // namespace punctual::server
