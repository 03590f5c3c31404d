// A golden vector pins the Poisson schedule: the first 1000 offsets for seed 7 at 1000 req/s are
// committed in tests/data/schedule and must come out bit for bit, so a new compiler, libm or
// refactoring cannot silently move a user's schedule. The file is also checked against an
// independent transcription of the documented algorithm, so it is not only the code agreeing
// with itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "schedule/stream.hpp"

namespace {

using namespace std::chrono_literals;
using namespace punctual::schedule;

constexpr std::size_t golden_count = 1000;

// Offsets in ns by index; '#' lines are the file's comment header.
std::vector<std::int64_t> read_golden() {
  std::ifstream in(std::string(PUNCTUAL_TEST_DATA) + "/schedule/poisson-seed7-r1000.txt");
  std::vector<std::int64_t> offsets;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::uint64_t index = 0;
    std::int64_t offset = 0;
    fields >> index >> offset;
    EXPECT_TRUE(fields && index == offsets.size()) << "bad line: " << line;
    offsets.push_back(offset);
  }
  return offsets;
}

plan golden_plan(std::uint32_t workers) {
  plan p;
  p.arrival = arrival_kind::poisson;
  p.rate_per_s = 1000;
  p.seed = 7;
  p.workers = workers;
  // 1000 arrivals take ~1 s (sd ~32 ms): 2 s always holds them.
  p.duration = 2s;
  return p;
}

TEST(ScheduleGolden, FileHoldsOneThousandOffsets) {
  const auto golden = read_golden();
  ASSERT_EQ(golden.size(), golden_count);
  for (std::size_t i = 1; i < golden.size(); ++i) ASSERT_LE(golden[i - 1], golden[i]) << i;
}

TEST(ScheduleGolden, OneWorkerReproducesEveryOffsetExactly) {
  const auto golden = read_golden();
  ASSERT_EQ(golden.size(), golden_count);
  worker_stream s(golden_plan(1), 0);
  entry e;
  for (std::size_t i = 0; i < golden_count; ++i) {
    ASSERT_TRUE(s.next(e)) << "schedule ended after " << i << " entries";
    ASSERT_EQ(e.index, i);
    ASSERT_EQ(e.offset.count(), golden[i]) << "index " << i;
  }
}

// SplitMix64 seeding, xoshiro256** and the inverse-CDF gap, written from the description in
// prng.hpp and stream.hpp rather than calling them. std::log stands in for portable_log: the two
// differ by a few ulp at most, far below the half nanosecond that could change a rounded gap.
std::vector<std::int64_t> recompute(std::size_t n) {
  auto rotl = [](std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); };
  std::uint64_t seed_state = 7;
  std::uint64_t s[4];
  for (auto& word : s) {
    std::uint64_t z = (seed_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    word = z ^ (z >> 31);
  }
  std::vector<std::int64_t> offsets;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t draw = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t shifted = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= shifted;
    s[3] = rotl(s[3], 45);
    const double u = std::ldexp(static_cast<double>(draw >> 11), -53);
    const double gap_ns = -std::log(1.0 - u) * (1e9 / 1000);
    t += std::llround(gap_ns);
    offsets.push_back(t);
  }
  return offsets;
}

TEST(ScheduleGolden, FirstOffsetsFollowTheDocumentedAlgorithm) {
  const auto golden = read_golden();
  ASSERT_GE(golden.size(), 50u);
  const auto expected = recompute(50);
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(golden[i], expected[i]) << "index " << i;
}

TEST(ScheduleGolden, TwoWorkersSplitItByIndexParity) {
  const auto golden = read_golden();
  ASSERT_EQ(golden.size(), golden_count);
  for (std::uint32_t w = 0; w < 2; ++w) {
    worker_stream s(golden_plan(2), w);
    entry e;
    std::size_t seen = 0;
    while (s.next(e) && e.index < golden_count) {
      ASSERT_EQ(e.index, 2 * seen + w) << "worker " << w;
      ASSERT_EQ(e.offset.count(), golden[e.index]) << "worker " << w << " index " << e.index;
      ++seen;
    }
    EXPECT_EQ(seen, golden_count / 2) << "worker " << w;
  }
}

TEST(ScheduleGolden, ScheduleOutWritesTheSameOffsets) {
  const auto golden = read_golden();
  ASSERT_EQ(golden.size(), golden_count);
  std::ostringstream out;
  write_schedule(out, golden_plan(1));
  std::istringstream lines(out.str());
  std::string line;
  std::size_t i = 0;
  while (i < golden_count && std::getline(lines, line)) {
    if (line[0] == '#') continue;
    std::istringstream fields(line);
    std::uint64_t index = 0;
    std::int64_t offset = 0;
    fields >> index >> offset;
    ASSERT_EQ(index, i);
    ASSERT_EQ(offset, golden[i]) << "index " << i;
    ++i;
  }
  EXPECT_EQ(i, golden_count);
}

}  // namespace
