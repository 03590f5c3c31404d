// The names of a fault option's kinds (--fault, --tls-fault): a table whose entry 0 is "none",
// looked up by name and listed for error messages.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace punctual::server {

template <class Kind, std::size_t n>
std::optional<Kind> kind_from_name(const std::array<std::string_view, n>& names,
                                   std::string_view name) {
  for (std::size_t i = 1; i < n; ++i) {
    if (names[i] == name) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

// "a, b, c": every kind but "none".
template <std::size_t n>
std::string known_kinds(const std::array<std::string_view, n>& names) {
  std::string list;
  for (std::size_t i = 1; i < n; ++i) {
    if (!list.empty()) list += ", ";
    list += names[i];
  }
  return list;
}

}  // namespace punctual::server
