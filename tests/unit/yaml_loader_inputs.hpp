// Shared by the tests of the YAML loaders (request mixes, scenario files).
#pragma once

#include <string>

#include "scenario/yaml_reader.hpp"

namespace punctual::test {

// The load_error message `load()` throws, or "(accepted)".
template <class Load>
std::string load_error_of(Load&& load) {
  try {
    load();
  } catch (const scenario::load_error& e) {
    return e.what();
  }
  return "(accepted)";
}

// A billion-laughs document: ten anchors, each a list of three aliases of the one before, so
// that walking it would visit 9 * 3^9 scalars. Its first anchor is on line 1.
inline std::string alias_bomb() {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const std::string previous(1, static_cast<char>(c - 1));
    bomb += std::string(1, c) + ": &" + c + " [*" + previous + ", *" + previous + ", *" + previous +
            "]\n";
  }
  return bomb;
}

}  // namespace punctual::test
