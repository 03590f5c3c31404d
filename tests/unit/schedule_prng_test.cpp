// The PRNG and the exponential draw: reference vectors of Blackman & Vigna's algorithms, an
// independent transcription of the reference C code, and distribution checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "schedule/exp_gap.hpp"
#include "schedule/prng.hpp"

namespace {

using punctual::schedule::portable_log;
using punctual::schedule::splitmix64;
using punctual::schedule::unit_exponential;
using punctual::schedule::xoshiro256ss;

// Transcribed separately from https://prng.di.unimi.it/xoshiro256starstar.c and splitmix64.c,
// in the reference's own style (global-like state arrays), to cross-check the class.
struct reference_generator {
  std::uint64_t s[4];
  static std::uint64_t rotl(const std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  explicit reference_generator(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : s) {
      std::uint64_t z = (x += 0x9e3779b97f4a7c15);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
      z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
      word = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

TEST(SplitMix64, PublishedOutputsForSeedZero) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(state), 0x06c45d188009454fULL);
}

TEST(SplitMix64, PublishedOutputsForSeed1234567) {
  // Rosetta Code, "Pseudo-random numbers/Splitmix64".
  std::uint64_t state = 1234567;
  const std::uint64_t expected[] = {6457827717110365317ULL, 3203168211198807973ULL,
                                    9817491932198370423ULL, 4593380528125082431ULL,
                                    16408922859458223821ULL};
  for (const auto e : expected) EXPECT_EQ(splitmix64(state), e);
}

TEST(Xoshiro256ss, PublishedOutputsForState1234) {
  // The reference implementation's outputs from state {1, 2, 3, 4} (as used by rand_xoshiro).
  xoshiro256ss g(1, 2, 3, 4);
  const std::uint64_t expected[] = {11520ULL,
                                    0ULL,
                                    1509978240ULL,
                                    1215971899390074240ULL,
                                    1216172134540287360ULL,
                                    607988272756665600ULL,
                                    16172922978634559625ULL,
                                    8476171486693032832ULL,
                                    10595114339597558777ULL,
                                    2904607092377533576ULL};
  for (const auto e : expected) EXPECT_EQ(g.next(), e);
}

TEST(Xoshiro256ss, SeededThroughSplitMixMatchesIndependentTranscription) {
  for (const std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xdeadbeefULL, ~0ULL}) {
    xoshiro256ss g(seed);
    reference_generator r(seed);
    for (int i = 0; i < 1000; ++i)
      ASSERT_EQ(g.next(), r.next()) << "seed " << seed << " draw " << i;
  }
  // Seed 42 through SplitMix64, as published by other independent implementations.
  xoshiro256ss g(42);
  EXPECT_EQ(g.next(), 1546998764402558742ULL);
  EXPECT_EQ(g.next(), 6990951692964543102ULL);
  EXPECT_EQ(g.next(), 12544586762248559009ULL);
}

TEST(Xoshiro256ss, UnitDoubleIsTheTop53Bits) {
  xoshiro256ss g(7);
  reference_generator r(7);
  for (int i = 0; i < 10000; ++i) {
    const double u = g.next_unit();
    const std::uint64_t bits = r.next() >> 11;
    ASSERT_EQ(u, std::ldexp(static_cast<double>(bits), -53));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Xoshiro256ss, DifferentSeedsGiveDifferentStreams) {
  xoshiro256ss a(1), b(2);
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a.next() == b.next();
  EXPECT_EQ(equal, 0);
}

double ulp_distance(double a, double b) {
  return std::fabs(a - b) / std::fabs(std::nextafter(b, 0.0) - b);
}

TEST(PortableLog, AgreesWithStdLogWithinFourUlp) {
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_LE(ulp_distance(portable_log(0.5), -0.69314718055994530942), 1.0);
  EXPECT_LE(ulp_distance(portable_log(0x1.0p-53), -53 * 0.69314718055994530942), 1.0);
  xoshiro256ss g(3);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    // 1 - u over the whole range the exponential draw uses, plus values close to 1.
    const double u = g.next_unit();
    const double x = i % 2 ? 1.0 - u : 1.0 - u * 1e-6;
    const double want = std::log(x);
    if (want == 0) {
      ASSERT_EQ(portable_log(x), 0.0);
      continue;
    }
    worst = std::max(worst, ulp_distance(portable_log(x), want));
  }
  EXPECT_LE(worst, 4.0);
  EXPECT_LE(ulp_distance(portable_log(123456.789), std::log(123456.789)), 4.0);
}

TEST(UnitExponential, MeanAndKolmogorovSmirnovDistance) {
  constexpr int n = 100000;
  xoshiro256ss g(2024);
  std::vector<double> draws(n);
  double sum = 0;
  for (auto& d : draws) {
    d = unit_exponential(g.next_unit());
    ASSERT_GE(d, 0.0);
    sum += d;
  }
  // Mean 1, standard error 1/sqrt(n) ~ 0.0032: allow five of them.
  EXPECT_NEAR(sum / n, 1.0, 5.0 / std::sqrt(n));
  std::sort(draws.begin(), draws.end());
  double ks = 0;
  for (int i = 0; i < n; ++i) {
    const double cdf = 1.0 - std::exp(-draws[i]);
    ks = std::max({ks, cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf});
  }
  EXPECT_LT(ks, 0.01);
}

TEST(UnitExponential, IsInverseCdf) {
  EXPECT_EQ(unit_exponential(0.0), 0.0);
  EXPECT_NEAR(unit_exponential(0.5), std::log(2.0), 1e-15);
  EXPECT_NEAR(unit_exponential(1.0 - 0x1.0p-53), 53 * std::log(2.0), 1e-12);
}

}  // namespace
