// An HTTP/1.1 request's bytes as HTTP/2 header fields: the request line becomes :method and
// :path, Host becomes :authority, names are lowercased, and the headers that only HTTP/1.1 has
// (Connection and its kin) are left out.
#pragma once

#include <nghttp2/nghttp2.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::http {

struct h2_request_parts {
  std::string_view body;
};

// Fills `fields` (pointing into `request` and into `names`, which holds the lowercased names;
// both are reused from call to call and keep their room). Nothing when the bytes are not an
// HTTP/1.1 request.
std::optional<h2_request_parts> to_h2_headers(std::string_view request, bool tls,
                                              std::string& names, std::vector<nghttp2_nv>& fields);

// Whether a header exists only in HTTP/1.1 and has no place in an HTTP/2 request.
bool is_http1_only_header(std::string_view name) noexcept;

}  // namespace punctual::http
