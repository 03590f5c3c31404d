#include "schedule/exp_gap.hpp"

#include <cmath>

// A fused multiply-add would round differently from a separate multiply and add, so contracting
// them would make the result depend on the target CPU. GCC leaves contraction off in ISO mode
// (-std=c++20, which the build uses); clang honours this pragma.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace punctual::schedule {

double portable_log(double x) noexcept {
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // fdlibm: 0x3fe62e42fee00000
  constexpr double ln2_lo = 1.90821492927058770002e-10;  // fdlibm: 0x3dea39ef35793c76
  constexpr double sqrt_half = 0.70710678118654752440;
  int e = 0;
  double m = std::frexp(x, &e);  // m in [0.5, 1)
  if (m < sqrt_half) {
    m *= 2.0;  // exact
    e -= 1;
  }
  const double s = (m - 1.0) / (m + 1.0);  // m - 1 is exact (Sterbenz)
  const double s2 = s * s;
  // Horner form of 1 + s2/3 + s2^2/5 + ... + s2^11/23, one rounding per step. The compiler folds
  // the divisions with correct rounding, so the coefficients are the same bits everywhere.
  static constexpr double coefficients[] = {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15,
                                            1.0 / 13, 1.0 / 11, 1.0 / 9,  1.0 / 7,
                                            1.0 / 5,  1.0 / 3,  1.0};
  double p = 1.0 / 23;
  for (const double c : coefficients) {
    const double t = p * s2;
    p = t + c;
  }
  const double ln_m = 2.0 * s * p;
  const double fe = static_cast<double>(e);
  const double low = fe * ln2_lo;
  const double high = fe * ln2_hi;
  return high + (ln_m + low);
}

double unit_exponential(double u) noexcept {
  return -portable_log(1.0 - u);
}

}  // namespace punctual::schedule
