// How well a Poisson run's actual send gaps fit the distribution they should have.
//
// With `--arrival poisson` at R req/s over T workers, request i goes to worker i mod T, so the
// intended gap between two consecutive requests of one worker is the sum of T independent
// Exp(R) gaps: Erlang(shape T, rate R). Each worker records the gaps between its own consecutive
// actual sends; fit_erlang() measures the Kolmogorov-Smirnov distance
//     D = sup_x |F_emp(x) - F_erlang(x)|
// between those gaps and Erlang(T, R). A generator that batches sends on a timer tick, sleeps
// too coarsely or stalls distorts the gaps and shows up as a large D.
//
// Reading D off the histogram: a populated slot [lo, hi] holding samples ranked c_prev+1..c
// leaves the empirical CDF exactly c_prev/n just below lo and exactly c/n at hi, so comparing
// the theoretical CDF at both ends gives two exact points of |F_emp - F|. Between slots F_emp is
// flat and F is monotone, so no larger deviation hides there. Only inside a slot is the position
// of the samples unknown, which bounds the error by the CDF's rise across one slot:
//     ks_distance <= D_true <= ks_distance + bucket_slack,
//     bucket_slack = max over populated slots of F(hi) - F(lo).
// With 3 significant digits a slot is at most ~0.1% of its value wide, so the slack is at most
// ~0.001 * max_x x*f(x), e.g. 0.001/e ~ 0.00037 for an exponential: far below the warning level.
#pragma once

#include <cstdint>

#include "punctual/histogram/histogram.hpp"

namespace punctual::analysis {

// Warn when the send gaps of a Poisson run are at least this far (KS distance) from Erlang(T, R).
// An effect size, not a p-value: a run records ~1e5 gaps or more, and with that many samples any
// goodness-of-fit test rejects deviations far too small to matter (the 1% critical value of D is
// 1.63/sqrt(n) ~ 0.005), so a p-value would flag every real machine. D = 0.03 means some gap
// length is below (or above) its intended CDF by 3 percentage points: a visible distortion, e.g.
// every gap stretched by 30 us at 1000 req/s per worker (D = 1 - e^-0.03), or timer-tick batching.
inline constexpr double poisson_ks_warning = 0.03;

// Below this many gaps D's own sampling noise approaches the threshold: for a perfect Poisson
// run P(D >= 0.03) ~ 2 exp(-2 n 0.03^2), ~ 3e-4 at n = 5000 but ~ 0.3 at n = 1000.
inline constexpr std::uint64_t poisson_ks_min_samples = 5000;

struct gap_fit {
  double ks_distance = 0.0;   // lower bound of the true D (see the file comment)
  std::uint64_t samples = 0;  // gaps recorded; 0 leaves ks_distance and bucket_slack 0
  double bucket_slack = 0.0;  // the true D is at most ks_distance + bucket_slack
};

// Erlang(shape, rate) CDF: 1 - sum_{k<shape} e^{-y} y^k / k!, y = rate_per_ns * x_ns. Accurate to
// a few ulps of 1 for any shape (log-space terms, no overflow or underflow into wrong results).
// x <= 0 (or NaN) gives 0; shape 0 is the sum of no gaps, a step at 0 (gives 1 for x > 0);
// rate <= 0 gives 0.
double erlang_cdf(std::uint32_t shape, double rate_per_ns, double x_ns) noexcept;

// KS distance of the gaps (ns) to Erlang(shape, rate_per_s); all zeros for an empty histogram.
// Not a hot path: allocates one step per populated slot.
gap_fit fit_erlang(const hdr::histogram& gaps, std::uint32_t shape, double rate_per_s);

}  // namespace punctual::analysis
