// A header's value and the body out of one whole response's bytes, as kept for a scenario
// step's captures and cookies. The bytes are the ones the response parser accepted (a final
// response, maybe after 1xx ones); this reads them again without trusting them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "http/text.hpp"

namespace punctual::http {

// The value (spaces trimmed) of the final response's first header called `name` (any case).
std::optional<std::string_view> response_header(std::string_view response,
                                                std::string_view name) noexcept;
// Calls `each(value)` for every header of the final response called `name`, in order.
template <typename F>
void for_each_response_header(std::string_view response, std::string_view name, F each);

// The final response's body, de-chunked when it was chunked, into `out`. False when the bytes
// hold no whole head or a malformed chunked body.
bool response_body(std::string_view response, std::string& out);

namespace detail {
// The final response's head (status line and headers, without the blank line) and what follows.
bool final_head(std::string_view response, std::string_view& head, std::string_view& rest) noexcept;
// The next header line of `head` after `at`: its name and trimmed value; false at the end.
bool next_header(std::string_view head, std::size_t& at, std::string_view& name,
                 std::string_view& value) noexcept;
}  // namespace detail

template <typename F>
void for_each_response_header(std::string_view response, std::string_view name, F each) {
  std::string_view head, rest, n, v;
  if (!detail::final_head(response, head, rest)) return;
  std::size_t at = 0;
  while (detail::next_header(head, at, n, v)) {
    if (iequals(n, name)) each(v);
  }
}

}  // namespace punctual::http
