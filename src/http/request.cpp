#include "http/request.hpp"

#include <algorithm>

#include "http/text.hpp"

namespace punctual::http {

namespace {

bool has_header(const request_spec& spec, std::string_view name) {
  return std::any_of(spec.headers.begin(), spec.headers.end(),
                     [name](const std::string& h) { return iequals(header_name(h), name); });
}

void append_header(std::string& out, std::string_view name, std::string_view value) {
  out.append(name).append(": ").append(value).append("\r\n");
}

}  // namespace

bool method_implies_body(std::string_view method) noexcept {
  return method == "POST" || method == "PUT" || method == "PATCH";
}

std::string_view header_name(std::string_view header) noexcept {
  const auto colon = header.find(':');
  return trim_ows(header.substr(0, colon == std::string_view::npos ? header.size() : colon));
}

std::optional<std::string> validate_header(std::string_view header) {
  const auto colon = header.find(':');
  if (colon == std::string_view::npos) {
    return "-H " + quoted(header) + ": expected 'Name: value', e.g. -H 'Accept: text/html'";
  }
  const std::string_view name = header.substr(0, colon);
  if (name.empty()) return "-H " + quoted(header) + ": empty header name (expected 'Name: value')";
  for (const char c : name) {
    if (!is_token_char(c)) {
      return "-H " + quoted(header) + ": invalid character " + quoted(std::string_view{&c, 1}) +
             " in header name (letters, digits and !#$%&'*+-.^_`|~ only)";
    }
  }
  for (const char c : header.substr(colon + 1)) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7f) {
      return "-H " + quoted(header) + ": header value contains CR, LF or another control character";
    }
  }
  return std::nullopt;
}

std::optional<std::string> validate_method(std::string_view method) {
  if (method.empty() || !std::all_of(method.begin(), method.end(), is_token_char)) {
    return "method " + quoted(method) +
           " is not a valid HTTP method (expected a token, e.g. GET or POST)";
  }
  return std::nullopt;
}

std::optional<std::string> validate_request(const request_spec& spec) {
  if (auto error = validate_method(spec.method)) return error;
  const auto hosts =
      std::count_if(spec.headers.begin(), spec.headers.end(),
                    [](const std::string& h) { return iequals(header_name(h), "Host"); });
  if (hosts > 1) return "-H: Host given more than once (a request has exactly one Host header)";
  for (const auto& header : spec.headers) {
    if (auto error = validate_header(header)) return error;
    const std::string_view name = header_name(header);
    if (iequals(name, "Content-Length") || iequals(name, "Transfer-Encoding")) {
      return "-H " + quoted(std::string_view{header}) +
             ": punctual sets the body framing itself; remove this header";
    }
  }
  return std::nullopt;
}

std::string encode_request_head(const request_spec& spec) {
  std::string out;
  out.reserve(128 + spec.path_and_query.size() + 64 * spec.headers.size());
  out.append(spec.method).append(" ").append(spec.path_and_query).append(" HTTP/1.1\r\n");
  // Host first, as servers and proxies expect.
  bool host_written = false;
  for (const auto& header : spec.headers) {
    if (iequals(header_name(header), "Host")) {
      const auto colon = header.find(':');
      append_header(out, "Host", trim_ows(std::string_view{header}.substr(colon + 1)));
      host_written = true;
      break;
    }
  }
  if (!host_written) append_header(out, "Host", spec.host);
  if (!has_header(spec, "User-Agent")) append_header(out, "User-Agent", user_agent);
  for (const auto& header : spec.headers) {
    const std::string_view name = header_name(header);
    if (iequals(name, "Host")) continue;  // written above
    const auto colon = header.find(':');
    append_header(out, name, trim_ows(std::string_view{header}.substr(colon + 1)));
  }
  if (!spec.keep_alive && !has_header(spec, "Connection"))
    append_header(out, "Connection", "close");
  return out;
}

std::string encode_request(const request_spec& spec) {
  std::string out = encode_request_head(spec);
  out.reserve(out.size() + 32 + spec.body.size());
  if (!spec.body.empty() || method_implies_body(spec.method)) {
    append_header(out, "Content-Length", std::to_string(spec.body.size()));
  }
  out.append("\r\n").append(spec.body);
  return out;
}

}  // namespace punctual::http
