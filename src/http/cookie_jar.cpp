#include "http/cookie_jar.hpp"

#include <algorithm>

#include "http/text.hpp"

namespace punctual::http {
namespace {

bool clean(std::string_view s) noexcept {
  return std::none_of(s.begin(), s.end(), [](char c) { return is_control_byte(c) || c == ';'; });
}

// Whether the attributes (after the first ';') hold a Max-Age of 0 or less.
bool expires_now(std::string_view attributes) noexcept {
  while (!attributes.empty()) {
    const auto semi = attributes.find(';');
    const std::string_view a = trim_ows(attributes.substr(0, semi));
    attributes = semi == std::string_view::npos ? std::string_view{} : attributes.substr(semi + 1);
    const auto eq = a.find('=');
    if (eq == std::string_view::npos || !iequals(trim_ows(a.substr(0, eq)), "max-age")) continue;
    const std::string_view v = trim_ows(a.substr(eq + 1));
    return !v.empty() && (v[0] == '-' || v.find_first_not_of('0') == std::string_view::npos);
  }
  return false;
}

}  // namespace

void cookie_jar::take(std::string_view set_cookie) {
  const auto semi = set_cookie.find(';');
  const std::string_view pair = set_cookie.substr(0, semi);
  const auto eq = pair.find('=');
  if (eq == std::string_view::npos) return;
  const std::string_view name = trim_ows(pair.substr(0, eq));
  const std::string_view value = trim_ows(pair.substr(eq + 1));
  if (name.empty() || !clean(name) || !clean(value)) return;
  const bool remove = semi != std::string_view::npos && expires_now(set_cookie.substr(semi + 1));
  const auto live = cookies_.begin() + static_cast<std::ptrdiff_t>(count_);
  const auto it =
      std::find_if(cookies_.begin(), live, [&](const cookie& c) { return c.name == name; });
  if (remove) {
    if (it == live) return;
    std::rotate(it, it + 1, live);  // keep the others in the order they were set
    --count_;
    return;
  }
  if (it != live) {
    it->value.assign(value);
    return;
  }
  if (count_ == cookies_.size()) cookies_.emplace_back();
  cookies_[count_].name.assign(name);
  cookies_[count_].value.assign(value);
  ++count_;
}

void cookie_jar::header_value(std::string& out) const {
  out.clear();
  for (std::size_t i = 0; i < count_; ++i) {
    if (i) out += "; ";
    out.append(cookies_[i].name).append("=").append(cookies_[i].value);
  }
}

}  // namespace punctual::http
