// Small helpers several unit test files share: defined once, so the unity build of the tests
// sees one definition.
#pragma once

#include <cstdint>
#include <random>

namespace punctual::test {

inline constexpr std::int64_t ms = 1'000'000;  // nanoseconds in a millisecond

// Uniform in (0, 1) from a fixed engine: mt19937_64's output is defined by the standard, unlike
// the std:: distributions.
inline double uniform(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace punctual::test
