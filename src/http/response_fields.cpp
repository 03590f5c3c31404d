#include "http/response_fields.hpp"

#include "http/text.hpp"

namespace punctual::http {
namespace {

bool chunked(std::string_view response) noexcept {
  bool last_chunked = false;
  for_each_response_header(response, "transfer-encoding", [&](std::string_view v) {
    const auto comma = v.rfind(',');
    const std::string_view last = comma == std::string_view::npos ? v : v.substr(comma + 1);
    last_chunked = iequals(trim_ows(last.substr(0, last.find(';'))), "chunked");
  });
  return last_chunked;
}

bool dechunk(std::string_view rest, std::string& out) {
  for (;;) {
    const auto eol = rest.find('\n');
    if (eol == std::string_view::npos) return false;
    std::size_t size = 0;
    std::size_t digits = 0;
    for (const char c : rest.substr(0, eol)) {
      const int d = (c >= '0' && c <= '9')   ? c - '0'
                    : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                    : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                             : -1;
      if (d < 0) break;
      if (++digits > 15) return false;
      size = size * 16 + static_cast<std::size_t>(d);
    }
    if (digits == 0) return false;
    rest.remove_prefix(eol + 1);
    if (size == 0) return true;  // trailers follow; nothing of the body
    if (rest.size() < size) return false;
    out.append(rest.substr(0, size));
    rest.remove_prefix(size);
    if (rest.starts_with("\r\n"))
      rest.remove_prefix(2);
    else if (rest.starts_with("\n"))
      rest.remove_prefix(1);
    else
      return false;
  }
}

}  // namespace

namespace detail {

bool final_head(std::string_view response, std::string_view& head,
                std::string_view& rest) noexcept {
  for (;;) {
    std::size_t end = response.find("\r\n\r\n");
    std::size_t blank = 4;
    // A head of bare LFs ends before any CRLF one would: never look for it in the body.
    const std::size_t lf =
        response.substr(0, end == std::string_view::npos ? end : end + 2).find("\n\n");
    if (lf != std::string_view::npos && (end == std::string_view::npos || lf < end)) {
      end = lf;
      blank = 2;
    }
    if (end == std::string_view::npos || response.size() < 12) return false;
    head = response.substr(0, end);
    rest = response.substr(end + blank);
    if (response[9] != '1') return true;  // not a 1xx: the final response
    response = rest;
  }
}

bool next_header(std::string_view head, std::size_t& at, std::string_view& name,
                 std::string_view& value) noexcept {
  if (at == 0) {  // skip the status line
    at = head.find('\n');
    if (at == std::string_view::npos) return false;
    ++at;
  }
  while (at < head.size()) {
    const auto eol = head.find('\n', at);
    const std::string_view line =
        head.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at);
    at = eol == std::string_view::npos ? head.size() : eol + 1;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    name = line.substr(0, colon);
    std::string_view rest = line.substr(colon + 1);
    if (rest.ends_with('\r')) rest.remove_suffix(1);
    value = trim_ows(rest);
    return true;
  }
  return false;
}

}  // namespace detail

std::optional<std::string_view> response_header(std::string_view response,
                                                std::string_view name) noexcept {
  std::optional<std::string_view> found;
  for_each_response_header(response, name, [&](std::string_view v) {
    if (!found) found = v;
  });
  return found;
}

bool response_body(std::string_view response, std::string& out) {
  std::string_view head, rest;
  out.clear();
  if (!detail::final_head(response, head, rest)) return false;
  if (!chunked(response)) {
    out.assign(rest);
    return true;
  }
  return dechunk(rest, out);
}

}  // namespace punctual::http
