// Constant and Poisson arrivals without stages: the exact formula, sharding and worker splits,
// determinism, counts, windows, the --schedule-out format and validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "schedule/grid.hpp"
#include "schedule/stream.hpp"
#include "schedule_streams.hpp"

namespace {

using namespace std::chrono_literals;
using namespace punctual::schedule;
using punctual::test::drain;
using u128 = unsigned __int128;

// floor(i * 1e9 / (num / den)) = floor(i * 1e9 * den / num), in exact integers.
std::int64_t exact_offset(std::uint64_t i, std::uint64_t num, std::uint64_t den) {
  return static_cast<std::int64_t>(static_cast<u128>(i) * 1000000000u * den / num);
}

struct rational_rate {
  double value;
  std::uint64_t num, den;
};
const rational_rate rates[] = {{3, 3, 1},
                               {7, 7, 1},
                               {1500, 1500, 1},
                               {2000, 2000, 1},
                               {1.5, 3, 2},
                               {0.1, 1, 10},
                               {2500, 2500, 1},
                               {1234.5, 12345, 10},
                               {33.3333, 333333, 10000},
                               {999999937, 999999937, 1}};

TEST(ConstantGrid, ExactAtIndexOneBillion) {
  for (const auto& r : rates) {
    if (r.value < 1) continue;  // 1e9 requests at 0.1/s would be beyond any valid window
    const constant_grid grid(r.value);
    for (const std::uint64_t i : {1000000000ULL, 1000000001ULL, 999999999ULL}) {
      EXPECT_EQ(grid.offset(i).count(), exact_offset(i, r.num, r.den)) << r.value << " i=" << i;
    }
  }
  // The double formula drifts here; the exact one does not.
  EXPECT_EQ(constant_grid(3).offset(1000000000).count(), 333333333333333333);
  EXPECT_EQ(constant_grid(7).offset(1000000000).count(), 142857142857142857);
}

TEST(ConstantGrid, ExactForEveryEarlyIndex) {
  for (const auto& r : rates) {
    const constant_grid grid(r.value);
    for (std::uint64_t i = 0; i < 20000; ++i) {
      ASSERT_EQ(grid.offset(i).count(), exact_offset(i, r.num, r.den)) << r.value << " i=" << i;
    }
  }
}

TEST(ConstantGrid, CountBeforeMatchesBruteForce) {
  for (const auto& r : {3.0, 7.0, 1.5, 2000.0, 33.3333}) {
    const constant_grid grid(r);
    for (const std::int64_t end :
         {0LL, 1LL, 333333333LL, 333333334LL, 1000000000LL, 4321987654LL}) {
      std::uint64_t n = 0;
      while (grid.offset(n).count() < end) ++n;
      EXPECT_EQ(grid.count_before(std::chrono::nanoseconds{end}), n) << r << " end " << end;
    }
  }
}

plan make_plan(arrival_kind kind, double rate, std::chrono::nanoseconds duration,
               std::uint32_t shards = 1, std::uint32_t shard = 0, std::uint32_t workers = 1) {
  plan p;
  p.arrival = kind;
  p.rate_per_s = rate;
  p.duration = duration;
  p.shards = shards;
  p.shard_index = shard;
  p.workers = workers;
  return p;
}

bool same(const std::vector<entry>& a, const std::vector<entry>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const entry& x, const entry& y) {
           return x.index == y.index && x.offset == y.offset && x.warmup == y.warmup;
         });
}

// The union over every shard and worker, sorted by global index.
std::vector<entry> union_of(plan p, std::uint32_t shards, std::uint32_t workers) {
  std::vector<entry> all;
  p.shards = shards;
  p.workers = workers;
  for (std::uint32_t s = 0; s < shards; ++s) {
    p.shard_index = s;
    for (std::uint32_t w = 0; w < workers; ++w) {
      for (const auto& e : drain(worker_stream(p, w))) {
        EXPECT_EQ(e.index % shards, s);
        EXPECT_EQ((e.index / shards) % workers, w);
        all.push_back(e);
      }
    }
  }
  std::sort(all.begin(), all.end(),
            [](const entry& a, const entry& b) { return a.index < b.index; });
  return all;
}

TEST(WorkerStream, ConstantFollowsTheFormula) {
  const plan p = make_plan(arrival_kind::constant, 1500, 2s);
  const auto all = drain(worker_stream(p, 0));
  ASSERT_EQ(all.size(), 3000u);
  for (std::uint64_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].index, i);
    EXPECT_EQ(all[i].offset.count(), exact_offset(i, 1500, 1));
  }
}

TEST(WorkerStream, ReachesIndexOneBillionExactly) {
  // One shard of a billion: its stream strides straight to i = 1e9, 2e9.
  for (const auto& r : rates) {
    if (r.value < 1) continue;
    plan p = make_plan(arrival_kind::constant, r.value,
                       std::chrono::nanoseconds{exact_offset(2000000001, r.num, r.den)});
    p.shards = 1000000000;
    const auto got = drain(worker_stream(p, 0));
    ASSERT_EQ(got.size(), 3u) << r.value;
    EXPECT_EQ(got[1].index, 1000000000u);
    EXPECT_EQ(got[1].offset.count(), exact_offset(1000000000, r.num, r.den)) << r.value;
    EXPECT_EQ(got[2].offset.count(), exact_offset(2000000000, r.num, r.den)) << r.value;
  }
}

TEST(WorkerStream, UnionOverWorkersAndShardsIsTheSingleSchedule) {
  for (const auto kind : {arrival_kind::constant, arrival_kind::poisson}) {
    for (const double rate : {3.0, 1500.0, 33.3333}) {
      plan p = make_plan(kind, rate, 3s);
      p.warmup = 500ms;
      p.seed = 99;
      const auto single = drain(worker_stream(p, 0));
      ASSERT_GT(single.size(), 5u);
      for (std::uint32_t shards = 1; shards <= 3; ++shards) {
        for (std::uint32_t workers = 1; workers <= 4; ++workers) {
          EXPECT_TRUE(same(union_of(p, shards, workers), single))
              << "rate " << rate << " S=" << shards << " T=" << workers;
        }
      }
    }
  }
}

TEST(WorkerStream, WholeShardIsTheUnionOfItsWorkers) {
  plan p = make_plan(arrival_kind::poisson, 500, 2s, 3, 1, 4);
  const auto shard = drain(worker_stream::whole_shard(p));
  std::vector<entry> merged;
  for (std::uint32_t w = 0; w < 4; ++w) {
    const auto mine = drain(worker_stream(p, w));
    merged.insert(merged.end(), mine.begin(), mine.end());
  }
  std::sort(merged.begin(), merged.end(),
            [](const entry& a, const entry& b) { return a.index < b.index; });
  EXPECT_TRUE(same(merged, shard));
  for (const auto& e : shard) EXPECT_EQ(e.index % 3, 1u);
}

TEST(WorkerStream, PoissonIsDeterministicPerSeed) {
  plan p = make_plan(arrival_kind::poisson, 2000, 1s);
  p.seed = 5;
  const auto a = drain(worker_stream(p, 0));
  const auto b = drain(worker_stream(p, 0));
  EXPECT_TRUE(same(a, b));
  p.seed = 6;
  const auto c = drain(worker_stream(p, 0));
  EXPECT_FALSE(same(a, c));
  for (std::size_t i = 1; i < a.size(); ++i) ASSERT_LE(a[i - 1].offset, a[i].offset);
}

TEST(WorkerStream, PoissonGapsAreExponentialWithTheRate) {
  const double rate = 1000;
  plan p = make_plan(arrival_kind::poisson, rate, 100s);
  p.seed = 12345;
  const auto all = drain(worker_stream(p, 0));
  const double n = static_cast<double>(all.size());
  // 1e5 expected; the count is Poisson-distributed with sd ~316.
  EXPECT_NEAR(n, 1e5, 5 * std::sqrt(1e5));
  std::vector<double> gaps;
  std::int64_t previous = 0;
  for (const auto& e : all) {
    gaps.push_back(static_cast<double>(e.offset.count() - previous));
    previous = e.offset.count();
  }
  double sum = 0;
  for (const double g : gaps) sum += g;
  const double mean_ns = 1e9 / rate;
  EXPECT_NEAR(sum / n, mean_ns, 5 * mean_ns / std::sqrt(n));
  std::sort(gaps.begin(), gaps.end());
  double ks = 0;
  for (std::size_t i = 0; i < gaps.size(); ++i) {
    const double cdf = 1 - std::exp(-gaps[i] / mean_ns);
    ks = std::max({ks, cdf - i / n, (i + 1) / n - cdf});
  }
  EXPECT_LT(ks, 0.01);
}

TEST(WorkerStream, WarmupFlagsAndWindow) {
  plan p = make_plan(arrival_kind::constant, 10, 2s);
  p.warmup = 1s;
  const auto all = drain(worker_stream(p, 0));
  ASSERT_EQ(all.size(), 30u);
  for (const auto& e : all) {
    EXPECT_EQ(e.warmup, e.offset < 1s) << e.index;
    EXPECT_LT(e.offset, 3s);
  }
  EXPECT_TRUE(all[9].warmup);
  EXPECT_FALSE(all[10].warmup);
  EXPECT_EQ(all[10].offset, 1s);
  entry e;
  worker_stream s(p, 0);
  while (s.next(e)) {
  }
  EXPECT_FALSE(s.next(e));  // stays finished
}

TEST(Counts, ClosedFormMatchesEnumeration) {
  for (const double rate : {3.0, 7.0, 1500.0, 2000.0, 1.5, 33.3333}) {
    for (std::uint32_t shards = 1; shards <= 3; ++shards) {
      for (std::uint32_t workers = 1; workers <= 3; ++workers) {
        for (std::uint32_t shard = 0; shard < shards; ++shard) {
          plan p = make_plan(arrival_kind::constant, rate, 2s + 333ms, shards, shard, workers);
          p.warmup = 700ms;
          counts total{};
          for (std::uint32_t w = 0; w < workers; ++w) {
            counts expected{};
            for (const auto& e : drain(worker_stream(p, w)))
              ++(e.warmup ? expected.warmup : expected.planned);
            const counts got = count_requests(p, w);
            EXPECT_EQ(got.warmup, expected.warmup);
            EXPECT_EQ(got.planned, expected.planned);
            total.warmup += got.warmup;
            total.planned += got.planned;
          }
          const counts shard_counts = count_requests(p);
          EXPECT_EQ(shard_counts.warmup, total.warmup);
          EXPECT_EQ(shard_counts.planned, total.planned);
        }
      }
    }
  }
}

TEST(Counts, ProductExample) {
  const plan p = make_plan(arrival_kind::constant, 2000, 20s);
  EXPECT_EQ(count_requests(p).planned, 40000u);
  EXPECT_EQ(count_requests(p).warmup, 0u);
  plan q = make_plan(arrival_kind::constant, 3, 1s);
  q.warmup = 1s;
  EXPECT_EQ(count_requests(q).warmup, 3u);   // 0, 333333333, 666666666
  EXPECT_EQ(count_requests(q).planned, 3u);  // 1e9, 1333333333, 1666666666
  q.arrival = arrival_kind::poisson;
  q.rate_per_s = 1000;
  q.duration = 10s;
  counts sum{};
  for (const auto& e : drain(worker_stream(q, 0))) ++(e.warmup ? sum.warmup : sum.planned);
  EXPECT_EQ(count_requests(q).warmup, sum.warmup);
  EXPECT_EQ(count_requests(q).planned, sum.planned);
}

TEST(WriteSchedule, OneLinePerRequestOfTheShard) {
  plan p = make_plan(arrival_kind::constant, 4, 1s, 2, 1, 2);
  p.warmup = 500ms;
  std::ostringstream out;
  write_schedule(out, p);
  std::istringstream in(out.str());
  std::string line;
  std::vector<std::string> comments;
  std::vector<std::string> rows;
  while (std::getline(in, line)) (line.rfind("#", 0) == 0 ? comments : rows).push_back(line);
  ASSERT_GE(comments.size(), 2u);
  EXPECT_NE(comments[0].find("constant arrivals, 4 req/s"), std::string::npos);
  EXPECT_EQ(comments.back(), "# index offset_ns worker phase");
  // Global requests at 0, 250, 500, 750, 1000, 1250 ms; shard 1 of 2 owns the odd ones.
  const std::vector<std::string> expected = {"1 250000000 0 warmup", "3 750000000 1 measured",
                                             "5 1250000000 0 measured"};
  EXPECT_EQ(rows, expected);
}

TEST(Describe, NamesArrivalAndRate) {
  EXPECT_EQ(describe(make_plan(arrival_kind::constant, 2000, 1s)), "constant arrivals, 2000 req/s");
  plan p = make_plan(arrival_kind::poisson, 1500, 1s);
  p.seed = 7;
  EXPECT_EQ(describe(p), "poisson arrivals (seed 7), 1500 req/s");
  EXPECT_EQ(describe(make_plan(arrival_kind::constant, 0.5, 1s)), "constant arrivals, 0.5 req/s");
}

TEST(Validate, AcceptsGoodPlansAndNamesTheProblem) {
  EXPECT_FALSE(validate(make_plan(arrival_kind::constant, 2000, 1s)));
  auto message = [](plan p) { return validate(p).value_or("<ok>"); };
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 0, 1s)),
            "rate must be > 0 and finite, got 0");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, -5, 1s)),
            "rate must be > 0 and finite, got -5");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, INFINITY, 1s)),
            "rate must be > 0 and finite, got inf");
  EXPECT_EQ(
      message(make_plan(arrival_kind::constant, NAN, 1s)).rfind("rate must be > 0 and finite", 0),
      0u);
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 2e9, 1s)),
            "rate must be at most 1e9 req/s (one per ns), got 2000000000");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 1e-9, 1s)),
            "rate must be at least 1e-06 req/s, got 0.000000001");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 10, 0s)), "duration must be > 0");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 10, 1s, 1, 0, 0)), "workers must be >= 1");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 10, 1s, 0, 0, 1)), "shards must be >= 1");
  EXPECT_EQ(message(make_plan(arrival_kind::constant, 10, 1s, 2, 2, 1)),
            "shard index 2 must be below the shard count 2");
  plan w = make_plan(arrival_kind::constant, 10, 1s);
  w.warmup = -1s;
  EXPECT_EQ(message(w), "warm-up must be >= 0");
  w.warmup = std::chrono::nanoseconds{max_window_ns};
  EXPECT_EQ(message(w).rfind("warm-up + duration is too long", 0), 0u);
  EXPECT_THROW(worker_stream(make_plan(arrival_kind::constant, 0, 1s), 0), std::invalid_argument);
  EXPECT_THROW(worker_stream(make_plan(arrival_kind::constant, 10, 1s, 1, 0, 2), 2),
               std::invalid_argument);
  EXPECT_THROW(count_requests(make_plan(arrival_kind::constant, 10, 1s), 1), std::invalid_argument);
}

}  // namespace
