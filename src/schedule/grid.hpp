// Constant arrivals computed exactly: t_i = floor(i * 1e9 / rate) ns, with no floating-point
// step at all once the rate is known as a fraction.
#pragma once

#include <chrono>
#include <cstdint>

namespace punctual::schedule {

// The rate is taken as the decimal number its double prints as (the shortest text that reads
// back as the same double, which is what the user typed: "0.1" is 1/10, not the binary double
// 0.1000000000000000055...). With rate = digits / 10^k the period is N / digits ns where
// N = 1e9 * 10^k, and every offset is an integer division, identical on every machine.
class constant_grid {
 public:
  // Requires min_rate_per_s <= rate_per_s <= max_rate_per_s (validate() checks it).
  explicit constant_grid(double rate_per_s) noexcept;

  // floor(index * 1e9 / rate) ns, saturating at INT64_MAX.
  std::chrono::nanoseconds offset(std::uint64_t index) const noexcept;
  // How many indices i >= 0 have offset(i) < end: ceil(end * rate / 1e9).
  std::uint64_t count_before(std::chrono::nanoseconds end) const noexcept;

  // The period as an exact fraction, period_numerator / period_denominator ns.
  unsigned __int128 period_numerator() const noexcept { return numerator_; }
  std::uint64_t period_denominator() const noexcept { return denominator_; }

  // Stepping by `stride` indices: offset(i + stride) = offset(i) + whole + (carry when the
  // running remainder reaches the denominator). Lets a worker stream walk its own indices with
  // a few integer operations and no division.
  struct step {
    unsigned __int128 whole;
    std::uint64_t remainder;
  };
  step stride_step(std::uint64_t stride) const noexcept;
  // index * period = whole + remainder / denominator.
  step position(std::uint64_t index) const noexcept;

 private:
  unsigned __int128 numerator_ = 1;  // 1e9 * 10^k
  std::uint64_t denominator_ = 1;    // the rate's decimal digits
  unsigned __int128 quotient_ = 0;   // numerator_ / denominator_
  std::uint64_t remainder_ = 0;      // numerator_ % denominator_
};

}  // namespace punctual::schedule
