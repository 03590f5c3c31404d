// Character classes and quoting shared by everything that reads or names HTTP text: the request
// builder, the URL parser, the response parser and the test server's request reader, so they
// all accept and print the same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace punctual::http {

namespace detail {
constexpr std::array<bool, 256> make_token_table() {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (const char c : std::string_view{"!#$%&'*+-.^_`|~"})
    table[static_cast<unsigned char>(c)] = true;
  return table;
}
// A table, not a chain of comparisons: the response parser calls this once per header-name byte.
inline constexpr std::array<bool, 256> token_table = make_token_table();
}  // namespace detail

// RFC 9110 section 5.6.2 tchar: the bytes of a method, a header name or a list token.
constexpr bool is_token_char(char c) noexcept {
  return detail::token_table[static_cast<unsigned char>(c)];
}

// The text in single quotes for a one-line message, with control bytes, DEL and non-ASCII bytes
// written as \xNN: a user's stray CR or UTF-8 cannot break the line or the terminal.
// Pass a string_view or call it qualified: for a std::string argument, argument-dependent lookup
// would prefer std::quoted whenever <iomanip> happens to be included.
std::string quoted(std::string_view text);

// A control byte (below 0x20, or DEL): what may not go into a request line or header value a
// user's data fills in (csv values, captures, cookies), since CR and LF would end or split it.
constexpr bool is_control_byte(char c) noexcept {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// Without the optional whitespace (SP and HTAB) around a field value or list element.
constexpr std::string_view trim_ows(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// ASCII case-insensitive equality, as header names, schemes and host names compare.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + 32) : a[i];
    const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] + 32) : b[i];
    if (x != y) return false;
  }
  return true;
}

}  // namespace punctual::http
