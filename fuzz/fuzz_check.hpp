// What every fuzz target asserts with: a broken promise aborts, which libFuzzer reports as a
// crash with the input that caused it (assert() would vanish under NDEBUG).
#pragma once

#include <cstdlib>
#include <optional>
#include <string_view>

namespace punctual::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

// What `load()` accepted, or nothing when it threw an Error: a loader's refusal, which must be one
// line that starts with the name the file was given. Any other exception escapes (a crash).
template <class Error, class Load>
auto accepted(Load&& load, std::string_view file) -> std::optional<decltype(load())> {
  try {
    return load();
  } catch (const Error& e) {
    const std::string_view message = e.what();
    check(message.starts_with(file));
    check(message.find('\n') == std::string_view::npos);
    check(message.find('\r') == std::string_view::npos);
    return std::nullopt;
  }
}

}  // namespace punctual::fuzz
