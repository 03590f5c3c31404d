// parse_url on arbitrary bytes: never crashes, errors are one non-empty line, and every URL it
// accepts prints back to a URL that parses to the same thing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/url.hpp"

using punctual::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  const auto r = punctual::http::parse_url(text);
  if (!r) {
    check(!r.error.empty());
    check(r.error.find('\n') == std::string::npos);
    check(r.error.find('\r') == std::string::npos);
    return 0;
  }
  const auto& url = *r.value;
  check(r.error.empty());
  check(!url.host.empty());
  check(url.port != 0);
  check(!url.path_and_query.empty() && url.path_and_query.front() == '/');
  check(url.path_and_query.find('#') == std::string::npos);
  const auto again = punctual::http::parse_url(punctual::http::to_string(url));
  check(static_cast<bool>(again));
  check(again.value->host == url.host);
  check(again.value->port == url.port);
  check(again.value->path_and_query == url.path_and_query);
  check(again.value->is_ipv6_literal == url.is_ipv6_literal);
  return 0;
}
