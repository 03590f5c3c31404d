#include "schedule/grid.hpp"

#include <charconv>
#include <limits>

namespace punctual::schedule {
namespace {

using u128 = unsigned __int128;

struct decimal {
  std::uint64_t digits = 0;  // value = digits * 10^exponent
  int exponent = 0;
};

// Reads the shortest round-trip text of a positive double ("1500", "1.5", "1e-06",
// "1.2345e+08") as digits and a power of ten. At most 17 significant digits, so it fits u64.
decimal shortest_decimal(double value) noexcept {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  decimal d;
  if (ec != std::errc{}) return d;
  const char* p = buffer;
  bool after_point = false;
  for (; p != end && *p != 'e'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    d.digits = d.digits * 10 + static_cast<std::uint64_t>(*p - '0');
    if (after_point) --d.exponent;
  }
  if (p != end) {
    int e = 0;
    std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), end, e);
    d.exponent += e;
  }
  while (d.digits != 0 && d.digits % 10 == 0) {
    d.digits /= 10;
    ++d.exponent;
  }
  return d;
}

u128 power_of_ten(int n) noexcept {
  u128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

}  // namespace

constant_grid::constant_grid(double rate_per_s) noexcept {
  decimal d = shortest_decimal(rate_per_s);
  if (d.digits == 0) d = decimal{1, 0};  // unreachable for a validated rate
  // 1e9 / (digits * 10^e) = (1e9 * 10^-e) / digits, or 1e9 / (digits * 10^e) when e >= 0.
  if (d.exponent >= 0) {
    // rate <= 1e9, so digits * 10^e fits easily.
    numerator_ = 1000000000;
    denominator_ = static_cast<std::uint64_t>(d.digits * power_of_ten(d.exponent));
  } else {
    numerator_ = power_of_ten(9 - d.exponent);  // rate >= 1e-6 and 17 digits: at most 10^32
    denominator_ = d.digits;
  }
  quotient_ = numerator_ / denominator_;
  remainder_ = static_cast<std::uint64_t>(numerator_ % denominator_);
}

constant_grid::step constant_grid::position(std::uint64_t index) const noexcept {
  // index * N / D = index * q + index * r / D; index * r < 2^64 * 2^64 cannot overflow, and
  // index * q <= 2^64 * 1e15 (q <= 1e9 / min_rate) cannot either.
  const u128 spill = static_cast<u128>(index) * remainder_;
  return step{static_cast<u128>(index) * quotient_ + spill / denominator_,
              static_cast<std::uint64_t>(spill % denominator_)};
}

constant_grid::step constant_grid::stride_step(std::uint64_t stride) const noexcept {
  return position(stride);
}

std::chrono::nanoseconds constant_grid::offset(std::uint64_t index) const noexcept {
  const u128 whole = position(index).whole;
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  return std::chrono::nanoseconds{
      whole > static_cast<u128>(max) ? max : static_cast<std::int64_t>(whole)};
}

std::uint64_t constant_grid::count_before(std::chrono::nanoseconds end) const noexcept {
  if (end.count() <= 0) return 0;
  // floor(i N / D) < E  <=>  i N / D < E (E is an integer)  <=>  i < E D / N.
  const u128 scaled = static_cast<u128>(end.count()) * denominator_;
  const u128 n = (scaled + numerator_ - 1) / numerator_;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  return n > max ? max : static_cast<std::uint64_t>(n);
}

}  // namespace punctual::schedule
