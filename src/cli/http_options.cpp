#include "cli/http_options.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cli/command.hpp"
#include "http/h2_request.hpp"
#include "http/text.hpp"

namespace punctual::cli {
namespace {

run::http_version parse_http_version(const std::string& text) {
  if (text == "1.1") return run::http_version::http1;
  if (text == "2") return run::http_version::http2;
  if (text == "auto") return run::http_version::automatic;
  throw usage_error("--http " + http::quoted(text) + ": expected 1.1, 2 or auto");
}

// The name of the first header of an encoded request that `wanted` accepts, if any.
template <typename Predicate>
std::string_view first_header(std::string_view request, Predicate wanted) {
  const auto end = request.find("\r\n\r\n");
  std::string_view head = request.substr(0, end);
  head.remove_prefix(std::min(head.size(), head.find("\r\n") + 2));  // the request line
  while (!head.empty()) {
    const auto line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    const std::string_view name = line.substr(0, line.find(':'));
    if (wanted(name)) return name;
    if (line_end == std::string_view::npos) break;
    head.remove_prefix(line_end + 2);
  }
  return {};
}

// The first header of an encoded request that HTTP/2 has no place for, if any.
std::string_view http1_only_header(std::string_view request) {
  return first_header(request, http::is_http1_only_header);
}

// Headers that say how a request is framed, routed or carried: an id in one would change the
// request itself, and HTTP/2 leaves the HTTP/1.1-only ones out.
bool carries_meaning(std::string_view name) {
  for (const std::string_view h : {"host", "content-length", "expect", "te", "cookie"}) {
    if (http::iequals(name, h)) return true;
  }
  return http::is_http1_only_header(name);
}

// Where the run's requests (-H, --requests, --scenario) already set header `name`, if anywhere.
std::string already_sets(const run::config& c, std::string_view name) {
  const auto same = [name](std::string_view h) { return http::iequals(h, name); };
  if (c.mix.empty()) return first_header(c.request, same).empty() ? "" : "-H";
  for (const auto& entry : c.mix) {
    if (!first_header(entry.bytes, same).empty()) return "request '" + entry.name + "'";
  }
  return {};
}

}  // namespace

// The first HTTP/1.1-only header of any of the run's requests, and where it was given.
std::pair<std::string_view, std::string> first_http1_only_header(const run::config& c) {
  if (c.mix.empty()) return {http1_only_header(c.request), "-H"};
  for (const auto& entry : c.mix) {
    if (const std::string_view name = http1_only_header(entry.bytes); !name.empty()) {
      return {name, "request '" + entry.name + "'"};
    }
  }
  return {};
}

std::string apply_http_options(const run_options& o, run::config& c) {
  c.http = parse_http_version(o.http);
  if (o.max_streams_given && c.http == run::http_version::http1) {
    throw usage_error("--max-streams: streams are HTTP/2's; give --http 2 or --http auto");
  }
  if (o.max_streams < 1 || o.max_streams > 1000) {
    throw usage_error("--max-streams " + std::to_string(o.max_streams) + ": expected 1 to 1000");
  }
  // The closed model's users: one per connection unless --max-streams puts more on each (as
  // h2load's -m does), so that -c keeps its meaning over either protocol.
  c.max_streams = c.kind() == run::model_kind::closed && !o.max_streams_given ? 1 : o.max_streams;
  if (c.tls.enabled) {
    using offer = net::tls_client_config::alpn_offer;
    c.tls.alpn = c.http == run::http_version::http1   ? offer::http1
                 : c.http == run::http_version::http2 ? offer::h2
                                                      : offer::h2_or_http1;
  }
  if (c.http == run::http_version::http1) return {};
  const auto [name, where] = first_http1_only_header(c);
  if (c.http == run::http_version::automatic) {
    if (name.empty()) return {};
    return where + ": the header " + http::quoted(name) +
           " exists only in HTTP/1.1: connections that speak h2 send the request without it";
  }
  if (o.no_keepalive) {
    throw usage_error(
        "--no-keepalive: HTTP/2 keeps its connections open; it cannot go with --http 2");
  }
  if (!name.empty()) {
    throw usage_error(where + ": the header " + http::quoted(name) +
                      " exists only in HTTP/1.1 and cannot be sent with --http 2");
  }
  return {};
}

void apply_request_id_header(const run_options& o, run::config& c) {
  if (!o.request_id_header_given) return;
  const std::string& name = o.request_id_header;
  const std::string option = "--request-id-header " + http::quoted(name);
  if (name.empty() || !std::all_of(name.begin(), name.end(), http::is_token_char)) {
    throw usage_error(option + ": expected a header name (letters, digits, -), e.g. x-request-id");
  }
  if (carries_meaning(name)) {
    throw usage_error(option + ": HTTP gives this header a meaning of its own; name another");
  }
  if (c.kind() == run::model_kind::closed) {
    throw usage_error(option + ": the closed model has no schedule to number its requests by");
  }
  if (const std::string where = already_sets(c, name); !where.empty()) {
    throw usage_error(option + ": " + where + " already sets this header");
  }
  c.request_id_header = name;
}

}  // namespace punctual::cli
