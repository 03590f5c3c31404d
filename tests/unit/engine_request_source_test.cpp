#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/request_source.hpp"
#include "schedule/prng.hpp"

namespace punctual::engine {
namespace {

std::vector<run::named_request> entries(std::initializer_list<double> weights) {
  std::vector<run::named_request> out;
  for (const double w : weights) {
    run::named_request r;
    r.name = "n" + std::to_string(out.size());
    r.bytes = "GET /" + std::to_string(out.size());
    r.weight = w;
    out.push_back(std::move(r));
  }
  return out;
}

template <std::size_t n>
std::array<int, n> counts(const weighted_mix& mix, std::uint64_t requests) {
  std::array<int, n> c{};
  for (std::uint64_t i = 0; i < requests; ++i) c.at(mix.name_of(i))++;
  return c;
}

// The committed vector: a change to the draw (its key, its mixing or the mapping of weights)
// changes which request every index sends, so it must show up here.
TEST(weighted_mix, seed_7_gives_the_committed_counts) {
  const weighted_mix mix(entries({70, 20, 10}), 7);
  const auto c = counts<3>(mix, 20'000);
  EXPECT_EQ(c, (std::array<int, 3>{13978, 4013, 2009}));
  EXPECT_EQ(c[0] + c[1] + c[2], 20'000);
}

TEST(weighted_mix, shares_follow_the_weights_within_2_points) {
  for (const std::uint64_t seed : {1ULL, 2ULL, 42ULL, 12345ULL}) {
    const weighted_mix mix(entries({5, 1, 3, 1}), seed);
    const auto c = counts<4>(mix, 20'000);
    const double expected[] = {0.5, 0.1, 0.3, 0.1};
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_NEAR(c[i] / 20'000.0, expected[i], 0.02) << "seed " << seed << " entry " << i;
    }
  }
}

// A draw depends on its key only: asking in another order, or asking twice, changes nothing,
// so threads and shards that each see every Nth index draw what one process would.
TEST(weighted_mix, a_draw_depends_only_on_its_index) {
  const weighted_mix mix(entries({1, 1, 1}), 3);
  std::vector<std::uint16_t> forward;
  for (std::uint64_t i = 0; i < 1000; ++i) forward.push_back(mix.name_of(i));
  for (std::uint64_t i = 1000; i-- > 0;) EXPECT_EQ(mix.name_of(i), forward[i]);
  const weighted_mix other_seed(entries({1, 1, 1}), 4);
  int same = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) same += other_seed.name_of(i) == forward[i];
  EXPECT_LT(same, 500);  // another seed is another sequence (~1/3 agree by chance)
}

TEST(weighted_mix, zero_weights_are_never_drawn) {
  const weighted_mix mix(entries({0, 2, 0, 1, 0}), 9);
  const auto c = counts<5>(mix, 30'000);
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[2], 0);
  EXPECT_EQ(c[4], 0);
  EXPECT_NEAR(c[1] / 30'000.0, 2.0 / 3, 0.02);
}

TEST(weighted_mix, each_name_sends_its_own_bytes) {
  auto e = entries({1, 1});
  e[1].head = true;
  const weighted_mix mix(e, 1);
  EXPECT_EQ(mix.request(0).bytes, "GET /0");
  EXPECT_FALSE(mix.request(0).head);
  EXPECT_EQ(mix.request(1).bytes, "GET /1");
  EXPECT_TRUE(mix.request(1).head);
}

TEST(fixed_request, every_index_is_the_one_request) {
  const fixed_request f("GET / HTTP/1.1\r\n\r\n", false);
  EXPECT_EQ(f.name_of(12345), 0);
  EXPECT_EQ(f.request(0).bytes, "GET / HTTP/1.1\r\n\r\n");
}

// keyed_unit over consecutive indices is uniform: a chi-square test over 100 bins of 100,000
// draws, for several seeds, below the 99.9% critical value for 99 degrees of freedom (148.2).
TEST(keyed_unit, draws_are_uniform_and_in_range) {
  for (const std::uint64_t seed : {1ULL, 5ULL, 77ULL}) {
    std::array<int, 100> bins{};
    for (std::uint64_t i = 0; i < 100'000; ++i) {
      const double u = schedule::keyed_unit(seed, schedule::draw_purpose::request_mix, i);
      ASSERT_GE(u, 0.0);
      ASSERT_LT(u, 1.0);
      bins[static_cast<std::size_t>(u * 100)]++;
    }
    double chi2 = 0;
    for (const int b : bins) chi2 += (b - 1000.0) * (b - 1000.0) / 1000.0;
    EXPECT_LT(chi2, 148.2) << "seed " << seed;
  }
}

}  // namespace
}  // namespace punctual::engine
