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

// Warn when the send gaps of a Poisson run are further (KS distance) from Erlang(T, R) than
// sampling noise explains by at least poisson_ks_effect: the threshold is that effect plus D's 99%
// critical value 1.63/sqrt(n). An effect size over the noise, not a bare p-value: with 1e5 gaps
// any goodness-of-fit test rejects deviations far too small to matter, and a fixed 0.03 alone
// sits at the noise of a 6,000-gap run (measured here: healthy fine-mode runs of 6,000 gaps gave
// D = 0.015-0.030, of 12,000 gaps 0.016-0.039), so it warned healthy runs by chance. D - noise
// = 0.02 means some gap length is below (or above) its intended CDF by 2 percentage points more
// than chance allows: a visible distortion, e.g. every gap stretched by 20 us at 1000 req/s per
// worker, or timer-tick batching (D ~ 0.6).
inline constexpr double poisson_ks_effect = 0.02;
inline constexpr double poisson_ks_critical = 1.63;  // sqrt(n) * D at the 99% level (Kolmogorov)

// The warning threshold for a fit of `samples` gaps.
double poisson_ks_threshold(std::uint64_t samples) noexcept;

// Below this many gaps D's own noise dominates the threshold: 1.63/sqrt(5000) = 0.023.
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
