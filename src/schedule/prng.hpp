// The schedule's only source of randomness. Both generators are the published reference
// algorithms of Blackman & Vigna ("Scrambled linear pseudorandom number generators", 2021;
// https://prng.di.unimi.it/xoshiro256starstar.c and splitmix64.c), transcribed without change, so
// a seed gives the same numbers on every machine and with every standard library. The
// std::*_distribution templates are deliberately not used: their algorithms are unspecified.
#pragma once

#include <cstdint>

namespace punctual::schedule {

// SplitMix64 (Steele, Lea & Flood; Vigna's splitmix64.c). Advances `state` and returns the next
// output. Used only to expand a 64-bit seed into xoshiro's 256-bit state, as Vigna recommends.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** 1.0. Four words of state; never all zero (SplitMix64 seeding cannot produce
// that: its outputs are a bijection of distinct counter values).
class xoshiro256ss {
 public:
  explicit constexpr xoshiro256ss(std::uint64_t seed) noexcept {
    std::uint64_t sm = seed;
    for (auto& word : s_) word = splitmix64(sm);
  }
  // For reference vectors: start from an explicit state.
  constexpr xoshiro256ss(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2,
                         std::uint64_t s3) noexcept
      : s_{s0, s1, s2, s3} {}

  constexpr std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1): the top 53 bits, each value a multiple of 2^-53 (Vigna's recommended
  // conversion). 1.0 itself is never returned, so 1 - u is never 0.
  constexpr double next_unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  std::uint64_t s_[4]{};
};

// What a keyed draw is for. Each purpose has its own stream, so adding a draw of one kind never
// shifts the draws of another.
enum class draw_purpose : std::uint64_t { request_mix = 1, scenario = 2, think = 3, csv_row = 4 };

// One uniform draw in [0, 1) keyed by (seed, purpose, index), the same in every thread, shard
// and process: a draw depends on nothing but its key, never on how many draws came before.
// Three SplitMix64 steps mix the three words (each step is a bijection of its state).
constexpr double keyed_unit(std::uint64_t seed, draw_purpose purpose,
                            std::uint64_t index) noexcept {
  std::uint64_t state = seed;
  std::uint64_t mixed = splitmix64(state) ^ static_cast<std::uint64_t>(purpose);
  mixed = splitmix64(mixed) ^ index;
  return static_cast<double>(splitmix64(mixed) >> 11) * 0x1.0p-53;
}

}  // namespace punctual::schedule
