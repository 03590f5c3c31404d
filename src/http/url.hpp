// The target URL: http[s]://host[:port][/path][?query]. Parsed once, before a run; every failure
// is one line that names the value and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace punctual::http {

struct url {
  bool tls = false;         // https
  std::string host;         // a name, an IPv4 literal, or an IPv6 literal without its brackets
  std::uint16_t port = 80;  // 443 by default for https
  std::string path_and_query = "/";  // the request target; the fragment is dropped
  bool is_ipv6_literal = false;
};

struct url_result {
  std::optional<http::url> value;  // set on success
  std::string error;               // set on failure: one line, no trailing newline

  explicit operator bool() const noexcept { return value.has_value(); }
};

url_result parse_url(std::string_view text);

// The Host header value: host, IPv6 in brackets, ":port" unless it is the scheme's default.
std::string host_header_value(const url& target);

// "http[s]://host[:port]/path" back again, for reports.
std::string to_string(const url& target);

}  // namespace punctual::http
