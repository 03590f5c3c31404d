#include "http/h2_request.hpp"

#include "http/text.hpp"

namespace punctual::http {
namespace {

nghttp2_nv field(std::string_view name, std::string_view value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool is_http1_only_header(std::string_view name) noexcept {
  for (const std::string_view h :
       {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}) {
    if (iequals(name, h)) return true;
  }
  return false;
}

std::optional<h2_request_parts> to_h2_headers(std::string_view request, bool tls,
                                              std::string& names, std::vector<nghttp2_nv>& fields) {
  const auto head_end = request.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return std::nullopt;
  std::string_view head = request.substr(0, head_end + 2);
  const std::string_view body = request.substr(head_end + 4);
  const auto line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  head.remove_prefix(line_end + 2);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 <= sp1) return std::nullopt;
  // The lowercased names go into `names`; it must not move while `fields` point into it.
  names.clear();
  if (names.capacity() < head.size()) names.reserve(head.size());
  fields.clear();
  fields.push_back(field(":method", line.substr(0, sp1)));
  fields.push_back(field(":scheme", tls ? "https" : "http"));
  fields.push_back(field(":authority", ""));  // Host's value, below
  fields.push_back(field(":path", line.substr(sp1 + 1, sp2 - sp1 - 1)));
  while (!head.empty()) {
    const auto end = head.find("\r\n");
    const std::string_view header = head.substr(0, end);
    head.remove_prefix(end + 2);
    const auto colon = header.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const std::string_view name = header.substr(0, colon);
    const std::string_view value = trim(header.substr(colon + 1));
    if (iequals(name, "host")) {
      fields[2] = field(":authority", value);
      continue;
    }
    if (is_http1_only_header(name)) continue;
    const std::size_t at = names.size();
    for (const char ch : name)
      names.push_back(ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch);
    fields.push_back(field(std::string_view(names).substr(at, name.size()), value));
  }
  return h2_request_parts{body};
}

}  // namespace punctual::http
