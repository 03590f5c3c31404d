#include "http/url.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

#include "http/text.hpp"

namespace punctual::http {

namespace {

constexpr std::string_view expected_form = "expected http[s]://host[:port][/path]";

url_result failure(std::string_view text, std::string_view what) {
  return {std::nullopt, "target " + quoted(text) + ": " + std::string{what}};
}

bool is_host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

// Host names: letters, digits, '-', '_' and '.', as DNS and /etc/hosts use them. All-numeric
// names must be a valid dotted quad, so "999.1.1.1" is not quietly looked up as a name.
std::optional<std::string> check_host_name(std::string_view host) {
  if (host.size() > 253) return "host name is longer than 253 characters";
  for (const char c : host) {
    if (!is_host_char(c)) {
      return "invalid character " + quoted(std::string_view{&c, 1}) + " in host (" +
             std::string{expected_form} + ")";
    }
  }
  const bool numeric = std::all_of(host.begin(), host.end(),
                                   [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
  if (numeric) {
    in_addr address{};
    const std::string copy{host};
    if (inet_pton(AF_INET, copy.c_str(), &address) != 1) {
      return quoted(host) +
             " is not a valid IPv4 address (expected four numbers 0..255, e.g. 127.0.0.1)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_port(std::string_view port, std::uint16_t& out) {
  if (port.empty()) return "empty port after ':' (expected a number in 1..65535)";
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec == std::errc{} && end == port.data() + port.size() && value >= 1 && value <= 65535 &&
      port.size() <= 5) {
    out = static_cast<std::uint16_t>(value);
    return std::nullopt;
  }
  return "port " + quoted(port) + " is not a number in 1..65535";
}

// Splits the authority into host and port and checks both.
std::optional<std::string> parse_authority(std::string_view authority, url& out) {
  if (authority.find('@') != std::string_view::npos) {
    return "user info ('user@') is not supported in the URL (" + std::string{expected_form} +
           "; send credentials with -H 'Authorization: ...')";
  }
  std::string_view host = authority;
  std::string_view port;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos)
      return "unterminated IPv6 literal (expected http://[::1]:8080/)";
    host = authority.substr(1, close - 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return "unexpected text after the IPv6 literal (expected http://[::1]:8080/)";
    }
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
    in6_addr address{};
    const std::string copy{host};
    if (host.find('%') != std::string_view::npos) return "IPv6 zone identifiers are not supported";
    if (inet_pton(AF_INET6, copy.c_str(), &address) != 1) {
      return quoted(host) + " is not a valid IPv6 address (expected e.g. http://[::1]:8080/)";
    }
    out.is_ipv6_literal = true;
  } else {
    const auto colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      has_port = true;
      if (port.find(':') != std::string_view::npos) {
        return "too many ':' in host (IPv6 literals need brackets, e.g. http://[::1]:8080/)";
      }
    }
  }
  if (host.empty()) return "empty host (" + std::string{expected_form} + ")";
  if (!out.is_ipv6_literal) {
    if (auto error = check_host_name(host)) return error;
  }
  out.host = std::string{host};
  if (has_port) return check_port(port, out.port);
  return std::nullopt;
}

}  // namespace

url_result parse_url(std::string_view text) {
  if (text.empty())
    return {std::nullopt, "target '': empty URL (" + std::string{expected_form} + ")"};
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return failure(text,
                     "contains a space, control or non-ASCII byte (percent-encode it, e.g. %20)");
    }
  }
  const auto scheme_end = text.find("://");
  const bool scheme_chars = scheme_end != std::string_view::npos &&
                            std::all_of(text.begin(), text.begin() + scheme_end, [](char c) {
                              return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                     (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
                            });
  if (scheme_end == std::string_view::npos || scheme_end == 0 || !scheme_chars) {
    return failure(text, "no scheme (" + std::string{expected_form} + "; did you mean " +
                             quoted(std::string_view{"http://" + std::string{text}}) + "?)");
  }
  const std::string_view scheme = text.substr(0, scheme_end);
  const bool tls = iequals(scheme, "https");
  if (!tls && !iequals(scheme, "http")) {
    return failure(
        text, "unsupported scheme " + quoted(scheme) + " (" + std::string{expected_form} + ")");
  }
  std::string_view rest = text.substr(scheme_end + 3);
  if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  const auto path_start = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, path_start);
  url out;
  out.tls = tls;
  out.port = tls ? 443 : 80;
  if (auto error = parse_authority(authority, out)) return failure(text, *error);
  if (path_start != std::string_view::npos) {
    const std::string_view target = rest.substr(path_start);
    out.path_and_query = target.front() == '?' ? "/" + std::string{target} : std::string{target};
  }
  return {std::move(out), {}};
}

std::string host_header_value(const url& target) {
  std::string value = target.is_ipv6_literal ? "[" + target.host + "]" : target.host;
  if (target.port != (target.tls ? 443 : 80)) value += ":" + std::to_string(target.port);
  return value;
}

std::string to_string(const url& target) {
  return (target.tls ? "https://" : "http://") + host_header_value(target) + target.path_and_query;
}

}  // namespace punctual::http
