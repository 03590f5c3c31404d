// Trace replay (--schedule-in): the grammar and its errors with their line numbers, the worker
// split of a replayed trace, counts with warm-up and a cut, and the round trip through
// --schedule-out's format.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "schedule/stream.hpp"
#include "schedule/trace.hpp"
#include "schedule_streams.hpp"

namespace {

using namespace std::chrono_literals;
using namespace punctual::schedule;
using punctual::test::drain;
using std::chrono::nanoseconds;

std::shared_ptr<const trace> parse_trace_ok(std::string_view text) {
  trace_error error;
  auto t = parse_trace(text, "t.txt", error);
  EXPECT_TRUE(t) << "line " << error.line << ": " << error.message;
  return t;
}

trace_error parse_fails(std::string_view text) {
  trace_error error;
  EXPECT_FALSE(parse_trace(text, "t.txt", error)) << text;
  return error;
}

std::vector<std::int64_t> offsets_of(const trace& t) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < t.size(); ++i) out.push_back(t.offset(i).count());
  return out;
}

plan replay_plan(std::shared_ptr<const trace> t, nanoseconds warmup, nanoseconds duration,
                 std::uint32_t workers = 1) {
  plan p;
  p.arrival = arrival_kind::trace;
  p.replay = std::move(t);
  p.warmup = warmup;
  p.duration = duration;
  p.workers = workers;
  return p;
}

// The rows of a --schedule-out text, comments left out.
std::vector<std::string> rows_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) != 0) rows.push_back(line);
  }
  return rows;
}

TEST(ParseTrace, ReadsOffsetsNamesCommentsAndBlankLines) {
  const auto t = parse_trace_ok(
      "# a trace\n"
      "\n"
      "0\n"
      "  \t \r\n"
      "  # indented comment\n"
      "1500 get_item\r\n"
      "1500\t post-Order_2 \n"
      "0001501\n"
      "4611686018427387903 get_item");  // 2^62 - 1, and no final newline
  ASSERT_TRUE(t);
  EXPECT_EQ(offsets_of(*t), (std::vector<std::int64_t>{0, 1500, 1500, 1501, 4611686018427387903}));
  EXPECT_EQ(t->source(), "t.txt");
  ASSERT_TRUE(t->has_names());
  EXPECT_EQ(t->name(0), "");
  EXPECT_EQ(t->name(1), "get_item");
  EXPECT_EQ(t->name(2), "post-Order_2");
  EXPECT_EQ(t->name(3), "");
  EXPECT_EQ(t->name(4), "get_item");
}

TEST(ParseTrace, OffsetsOnlyKeepNoNames) {
  const auto t = parse_trace_ok("5\n5\n6\n");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->has_names());
  EXPECT_EQ(t->name(2), "");
}

TEST(ParseTrace, ReadsTheScheduleOutLayout) {
  const auto t = parse_trace_ok(
      "# punctual schedule: constant arrivals, 4 req/s\n"
      "# index offset_ns worker phase\n"
      "0 0 0 warmup\n"
      "1 250000000 1 measured\n"
      "2 500000000 0 measured search\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(offsets_of(*t), (std::vector<std::int64_t>{0, 250000000, 500000000}));
  EXPECT_EQ(t->name(2), "search");
}

TEST(ParseTrace, RejectsWithTheLineNumber) {
  struct bad {
    const char* text;
    std::uint64_t line;
    const char* message;
  };
  const bad cases[] = {
      {"100\n# c\n1500\n1200\n", 4, "offsets must not decrease (1200 after 1500)"},
      {"\n-5\n", 2, "offsets must not be negative (-5)"},
      {"1\n2\n1.5\n", 3, "offset '1.5' is not a whole number of nanoseconds"},
      {"+3\n", 1, "offset '+3' is not a whole number of nanoseconds"},
      {"12abc\n", 1, "offset '12abc' is not a whole number of nanoseconds"},
      {"4611686018427387904\n", 1,
       "offset 4611686018427387904 is beyond the bound of 2^62 ns (~146 years)"},
      {"99999999999999999999999\n", 1,
       "offset 99999999999999999999999 is beyond the bound of 2^62 ns (~146 years)"},
      {"1 a.b\n", 1, "request name 'a.b' may hold only letters, digits, '_' and '-'"},
      {"1 x\x01y\n", 1, "request name 'x?y' may hold only letters, digits, '_' and '-'"},
      {"1 2 3\n", 1,
       "3 columns (expected OFFSET_NS [NAME], or INDEX OFFSET_NS WORKER PHASE [NAME] as "
       "--schedule-out writes)"},
      {"1 2 3 4 5 6 7\n", 1,
       "more than 5 columns (expected OFFSET_NS [NAME], or INDEX OFFSET_NS WORKER PHASE [NAME] as "
       "--schedule-out writes)"},
      {"1\n\n0 5 0 measured\n", 3, "4 columns, but line 1 began a trace of OFFSET_NS [NAME]"},
      {"0 5 0 measured\n7\n", 2,
       "1 column, but line 1 began a --schedule-out file of INDEX OFFSET_NS WORKER PHASE [NAME]"},
      {"0 5 0 later\n", 1, "phase 'later' is neither warmup nor measured"},
      {"x 5 0 measured\n", 1, "index 'x' is not a whole number"},
      {"0 5 -1 measured\n", 1, "worker '-1' is not a whole number"},
      {"0 -5 0 measured\n", 1, "offsets must not be negative (-5)"},
      {"0 10 0 measured\n1 9 0 measured\n", 2, "offsets must not decrease (9 after 10)"},
      {"", 0, "no offsets in it (a trace holds one offset in ns per line)"},
      {"# only\n\n  \n", 0, "no offsets in it (a trace holds one offset in ns per line)"},
  };
  for (const auto& c : cases) {
    const trace_error e = parse_fails(c.text);
    EXPECT_EQ(e.line, c.line) << c.text;
    EXPECT_EQ(e.message, c.message) << c.text;
  }
  const std::string long_name = "1 " + std::string(max_request_name + 1, 'a') + "\n";
  EXPECT_EQ(
      parse_fails(long_name).message.find("is longer than 64 characters") != std::string::npos,
      true);
  EXPECT_TRUE(parse_trace_ok("1 " + std::string(max_request_name, 'a') + "\n"));
}

TEST(ParseTrace, StreamAndTextAgree) {
  const std::string text = "# x\n3\n4 a\n\n9\n";
  std::istringstream in(text);
  trace_error error;
  const auto from_stream = parse_trace(in, "s", error);
  ASSERT_TRUE(from_stream);
  const auto from_text = parse_trace_ok(text);
  EXPECT_EQ(offsets_of(*from_stream), offsets_of(*from_text));
  EXPECT_EQ(from_stream->name(1), "a");
  std::istringstream bad("3\n2\n");
  EXPECT_FALSE(parse_trace(bad, "s", error));
  EXPECT_EQ(error.line, 2u);
}

TEST(LoadTrace, ReadsAFileAndNamesWhatItCannotRead) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("punctual-trace-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "trace.txt").string();
  std::ofstream(path) << "10\n20 x\n";
  trace_error error;
  const auto t = load_trace(path, error);
  ASSERT_TRUE(t) << error.message;
  EXPECT_EQ(offsets_of(*t), (std::vector<std::int64_t>{10, 20}));
  EXPECT_EQ(t->source(), path);
  EXPECT_FALSE(load_trace((dir / "missing.txt").string(), error));
  EXPECT_EQ(error.line, 0u);
  EXPECT_EQ(error.message, "cannot read it (No such file or directory)");
  EXPECT_FALSE(load_trace(dir.string(), error));
  EXPECT_EQ(error.message, "cannot read it (a directory)");
  std::filesystem::remove_all(dir);
}

TEST(TraceReplay, NaturalEndIsTheNextWholeSecondAfterTheLastOffset) {
  EXPECT_EQ(parse_trace_ok("0\n2300000000\n")->natural_end(), 3s);
  EXPECT_EQ(parse_trace_ok("2000000000\n")->natural_end(), 3s);  // the last entry stays inside
  EXPECT_EQ(parse_trace_ok("1999999999\n")->natural_end(), 2s);
  EXPECT_EQ(parse_trace_ok("0\n")->natural_end(), 1s);
}

// A bursty trace: 50 requests within 1 ms, ties among them, then a steady part.
std::shared_ptr<const trace> bursty() {
  std::string text;
  for (int i = 0; i < 50; ++i) text += std::to_string(100'000'000 + (i / 5) * 100'000) + "\n";
  for (int i = 0; i < 37; ++i) text += std::to_string(300'000'000 + i * 13'000'000LL) + "\n";
  return parse_trace_ok(text);
}

TEST(TraceReplay, WorkersTogetherYieldExactlyTheTrace) {
  const auto t = bursty();
  const nanoseconds end = t->natural_end();
  for (const std::uint32_t shards : {1u, 2u}) {
    for (const std::uint32_t workers : {1u, 2u, 3u}) {
      std::vector<entry> all;
      for (std::uint32_t s = 0; s < shards; ++s) {
        plan p = replay_plan(t, 0s, end, workers);
        p.shards = shards;
        p.shard_index = s;
        for (std::uint32_t w = 0; w < workers; ++w) {
          for (const auto& e : drain(worker_stream(p, w))) {
            EXPECT_EQ(e.index % shards, s);
            EXPECT_EQ(worker_of(e.index, shards, workers), w);
            EXPECT_EQ(e.offset, t->offset(e.index));
            all.push_back(e);
          }
        }
      }
      std::sort(all.begin(), all.end(),
                [](const entry& a, const entry& b) { return a.index < b.index; });
      ASSERT_EQ(all.size(), t->size()) << shards << " shards, " << workers << " workers";
      for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].index, i);
    }
  }
}

TEST(TraceReplay, CountsWithWarmupAndACut) {
  const auto t = bursty();  // 50 at 100..100.9 ms, then 37 at 300 ms + 13 ms * i (up to 768 ms)
  // Warm-up 200 ms takes the burst; -d 300ms cuts at 500 ms: 300 + 13i < 500 for i <= 15.
  const plan p = replay_plan(t, 200ms, 300ms, 2);
  const counts c = count_requests(p);
  EXPECT_EQ(c.warmup, 50u);
  EXPECT_EQ(c.planned, 16u);
  counts by_workers{};
  for (std::uint32_t w = 0; w < 2; ++w) {
    const counts cw = count_requests(p, w);
    counts enumerated{};
    for (const auto& e : drain(worker_stream(p, w)))
      ++(e.warmup ? enumerated.warmup : enumerated.planned);
    EXPECT_EQ(cw.warmup, enumerated.warmup);
    EXPECT_EQ(cw.planned, enumerated.planned);
    by_workers.warmup += cw.warmup;
    by_workers.planned += cw.planned;
  }
  EXPECT_EQ(by_workers.warmup, 50u);
  EXPECT_EQ(by_workers.planned, 16u);
  // Cut exactly at an entry: it is left out.
  EXPECT_EQ(count_requests(replay_plan(t, 0s, 300ms)).planned, 50u);
  EXPECT_EQ(count_requests(replay_plan(t, 0s, 300ms + 1ns)).planned, 51u);
}

TEST(TraceReplay, ScheduleOutRoundTripsExactly) {
  // A Poisson schedule written, read back as a trace, replayed and written again: same rows.
  plan poisson;
  poisson.arrival = arrival_kind::poisson;
  poisson.rate_per_s = 2000;
  poisson.seed = 7;
  poisson.warmup = 100ms;
  poisson.duration = 500ms;
  poisson.workers = 2;
  std::ostringstream first;
  write_schedule(first, poisson);
  const auto t = parse_trace_ok(first.str());
  ASSERT_TRUE(t);
  std::vector<std::int64_t> expected;
  for (const auto& e : drain(worker_stream::whole_shard(poisson)))
    expected.push_back(e.offset.count());
  EXPECT_EQ(offsets_of(*t), expected);
  std::ostringstream second;
  write_schedule(second, replay_plan(t, poisson.warmup, poisson.duration, 2));
  EXPECT_EQ(rows_of(second.str()), rows_of(first.str()));
  EXPECT_NE(second.str().find("# punctual schedule: trace replay of t.txt ("), std::string::npos);
}

TEST(TraceReplay, NamesRoundTripThroughScheduleOut) {
  const auto t = parse_trace_ok("0 a\n10\n20 b-2\n");
  std::ostringstream out;
  write_schedule(out, replay_plan(t, 0s, 1s));
  EXPECT_EQ(rows_of(out.str()), (std::vector<std::string>{"0 0 0 measured a", "1 10 0 measured",
                                                          "2 20 0 measured b-2"}));
  EXPECT_NE(out.str().find("# index offset_ns worker phase name\n"), std::string::npos);
  const auto again = parse_trace_ok(out.str());
  ASSERT_TRUE(again);
  EXPECT_EQ(offsets_of(*again), offsets_of(*t));
  for (std::size_t i = 0; i < t->size(); ++i) EXPECT_EQ(again->name(i), t->name(i));
}

TEST(TraceReplay, DescribeAndValidate) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += std::to_string(i * 5'000'000LL) + "\n";  // 0 .. 1.995 s
  const auto t = parse_trace_ok(text);
  EXPECT_EQ(describe(replay_plan(t, 0s, 2s)),
            "trace replay of t.txt (400 requests over 2s, mean 200 req/s)");
  EXPECT_EQ(
      describe(replay_plan(t, 500ms, 500ms)),
      "trace replay of t.txt (200 requests over 1s, mean 200 req/s; 200 entries at or after 1s "
      "left out)");
  EXPECT_EQ(describe(replay_plan(parse_trace_ok("0\n"), 0s, 3s)),
            "trace replay of t.txt (1 request over 3s, mean 0.333 req/s)");
  const replay_summary cut = summarize(*t, 1s);
  EXPECT_EQ(cut.requests, 200u);
  EXPECT_EQ(cut.cut, 200u);
  EXPECT_DOUBLE_EQ(cut.mean_rate_per_s, 200.0);
  EXPECT_FALSE(validate(replay_plan(t, 0s, 2s)));
  EXPECT_EQ(validate(replay_plan(nullptr, 0s, 2s)).value_or(""), "trace replay without a trace");
  EXPECT_EQ(validate(replay_plan(parse_trace_ok("5000000000\n"), 1s, 1s)).value_or(""),
            "the trace's first offset, 5s, is at or after warm-up + duration (2s), so no request "
            "would be sent");
  plan staged = replay_plan(t, 0s, 2s);
  staged.stages.push_back({1s, 10});
  EXPECT_EQ(validate(staged).value_or(""), "a trace replay has no stages");
  plan constant = replay_plan(t, 0s, 2s);
  constant.arrival = arrival_kind::constant;
  constant.rate_per_s = 10;
  EXPECT_EQ(validate(constant).value_or(""),
            "a trace is set but the arrival process is not trace replay");
}

}  // namespace
