// What every fuzz target asserts with: a broken promise aborts, which libFuzzer reports as a
// crash with the input that caused it (assert() would vanish under NDEBUG).
#pragma once

#include <cstdlib>

namespace punctual::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace punctual::fuzz
