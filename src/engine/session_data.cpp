// A hybrid user's own data: the csv row it took, the values its steps captured, and the requests
// rendered from them (docs/scenario.md). Strings live in per-session slots that are reused, so
// once they have grown to the longest value, a user costs no allocation.
#include <algorithm>

#include "engine/sessions.hpp"
#include "http/json_pointer.hpp"
#include "http/response_fields.hpp"
#include "http/text.hpp"
#include "schedule/prng.hpp"

namespace punctual::engine {
namespace {

// A value goes into request lines and headers: bytes that would end or split one are refused.
bool fits_a_request(std::string_view v) noexcept {
  return std::none_of(v.begin(), v.end(), http::is_control_byte);
}

}  // namespace

const run::hybrid_step& session_driver::step_of(const record::request_times& t) const noexcept {
  return hybrid_.scenarios[sessions_[t.user - 1].scenario].steps[t.step];
}

// A new session's variables: its csv row, no captures and no cookies yet.
void session_driver::fill_values(std::uint32_t id) {
  jars_[id].clear();
  auto& values = values_[id];
  values.resize(hybrid_.variables.size());
  for (auto& v : values) v.clear();
  const auto* rows = hybrid_.csv_rows.get();
  if (rows == nullptr || rows->empty()) return;
  const std::uint64_t user = sessions_[id].user;
  const std::size_t n = rows->size();
  const std::size_t row =
      hybrid_.csv_random
          ? std::min(n - 1, static_cast<std::size_t>(
                                schedule::keyed_unit(seed_, schedule::draw_purpose::csv_row, user) *
                                static_cast<double>(n)))
          : static_cast<std::size_t>(user % n);
  const auto& cells = (*rows)[row];
  for (std::size_t i = 0; i < cells.size() && i < values.size(); ++i) values[i].assign(cells[i]);
}

void session_driver::personalize(const record::request_times& t, wire_request& request,
                                 std::string& scratch) {
  if (t.user == 0) return;
  const auto& step = step_of(t);
  const http::cookie_jar& jar = jars_[t.user - 1];
  const bool cookies = hybrid_.cookies && !step.own_cookie && !jar.empty();
  if (!step.request && !cookies) return;
  if (step.request) {
    step.request->render(values_[t.user - 1], scratch);
  } else {
    scratch.assign(request.bytes);
  }
  if (cookies) {
    // The Cookie line goes last among the headers: before the blank line that ends the head.
    const auto end = scratch.find("\r\n\r\n");
    if (end != std::string::npos) {
      jar.header_value(cookie_value_);
      scratch.insert(end + 2, "Cookie: ");
      scratch.insert(end + 10, cookie_value_);
      scratch.insert(end + 10 + cookie_value_.size(), "\r\n");
    }
  }
  request.bytes = scratch;
}

bool session_driver::wants_response(const record::request_times& t) const noexcept {
  return t.user != 0 && (hybrid_.cookies || !step_of(t).captures.empty());
}

bool session_driver::take_response(const record::request_times& t, std::string_view response,
                                   bool capture) {
  if (t.user == 0) return true;
  if (hybrid_.cookies) {
    http::cookie_jar& jar = jars_[t.user - 1];
    http::for_each_response_header(response, "set-cookie",
                                   [&](std::string_view v) { jar.take(v); });
  }
  if (!capture) return true;
  auto& values = values_[t.user - 1];
  bool body_read = false;
  for (const auto& c : step_of(t).captures) {
    std::string& into = values[c.variable];
    if (c.from_header) {
      const auto v = http::response_header(response, c.key);
      if (!v || !fits_a_request(*v)) return false;
      into.assign(*v);
      continue;
    }
    if (!body_read && !http::response_body(response, body_)) return false;
    body_read = true;
    if (!http::json_pointer_value(body_, c.key, into) || !fits_a_request(into)) return false;
  }
  return true;
}

}  // namespace punctual::engine
