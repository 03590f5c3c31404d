// Unit-rate exponential draws for Poisson arrivals, by inverse CDF.
#pragma once

namespace punctual::schedule {

// Natural logarithm for positive, finite, normal x, built only from frexp (exact) and the IEEE
// basic operations + - * / (correctly rounded by IEEE 754). std::log is not used because its
// result may differ in the last bit between libm versions and platforms; this one gives the same
// bits everywhere, which is what makes a Poisson schedule a pure function of the seed. Accuracy
// is within a few ulp of the true value (tested against std::log).
// Method: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m-1)/(m+1), summed
// as the odd series to s^23 (|s| <= 0.1716, so the truncation error is below 1e-19 relative);
// ln 2 is split into a high part with trailing zero bits (fdlibm's ln2_hi/ln2_lo) so e * ln2_hi
// is exact.
double portable_log(double x) noexcept;

// -ln(1 - u) for u in [0, 1): the inverse CDF of the unit exponential distribution. 1 - u is
// exact for u a multiple of 2^-53, so the result is finite (at most 53 ln 2 ~ 36.7).
double unit_exponential(double u) noexcept;

}  // namespace punctual::schedule
