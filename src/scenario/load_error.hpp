// What the YAML loaders (request mixes, scenarios) share with their callers, without yaml-cpp:
// the error they throw and the rules every file follows.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>

namespace punctual::scenario {

// "FILE:LINE: KEY: what is wrong", one line.
class load_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Files larger than this are refused before they are parsed.
inline constexpr std::size_t max_file_bytes = 1 << 20;

// [A-Za-z0-9_-]+: names that reports, JSON keys and .hlog tags carry unchanged.
bool valid_name(std::string_view name) noexcept;

}  // namespace punctual::scenario
