// Request encoding, done once before a run: every send then writes the same bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::http {

inline constexpr std::string_view user_agent = "punctual/0.1.0";

struct request_spec {
  std::string method = "GET";
  std::string host;  // Host header value: host[:port], IPv6 in brackets
  std::string path_and_query = "/";
  std::vector<std::string> headers;  // "Name: value", as given with -H
  std::string body;
  bool keep_alive = true;  // false adds "Connection: close"
};

// The request's bytes. A user-given Host, User-Agent or Connection header replaces the default
// one; Content-Length comes from the body (and is 0 for an empty POST, PUT or PATCH).
// Call validate_request first: encode_request assumes a valid spec.
std::string encode_request(const request_spec& spec);
// What encode_request writes before Content-Length and the blank line: the head a per-user
// template (http/request_template.hpp) renders before the body it sizes.
std::string encode_request_head(const request_spec& spec);
// POST, PUT and PATCH carry a Content-Length even with an empty body.
bool method_implies_body(std::string_view method) noexcept;

// A -H value: "Name: value", token characters in the name, no CR, LF or other control bytes
// in the value. Returns one line naming the value and what was expected, or nothing if valid.
std::optional<std::string> validate_header(std::string_view header);

// The method must be a token (GET, POST, ...). Same contract as validate_header.
std::optional<std::string> validate_method(std::string_view method);

// Checks the method and every header, and refuses headers that would break framing
// (Content-Length, Transfer-Encoding): punctual frames the body itself.
std::optional<std::string> validate_request(const request_spec& spec);

// The name of a "Name: value" header, without surrounding whitespace.
std::string_view header_name(std::string_view header) noexcept;

}  // namespace punctual::http
