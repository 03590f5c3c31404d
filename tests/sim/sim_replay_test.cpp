// Trace replay (--schedule-in) in the simulation: a bursty trace (bursts of 50 requests within
// 1 ms, in pairs at the same instant, over a steady part) is sent exactly at its offsets, its
// --schedule-out gives the trace back, the report counts exactly the trace's entries in warm-up
// and in the window, and -d cuts the trace.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "schedule/stream.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::replay_cases {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using json = nlohmann::ordered_json;

constexpr nanoseconds warmup = milliseconds(200);

// An entry: its offset from the run's start and its name ("" for none).
using entry = std::pair<std::int64_t, std::string>;

// 400 req/s from 50 ms to 2.45 s, every other one named; and four bursts of 50 requests within
// 1 ms whose requests come in pairs at the same instant.
std::vector<entry> bursty_trace() {
  std::vector<entry> entries;
  for (std::int64_t i = 0; i < 960; ++i) {
    entries.emplace_back(50'000'000 + i * 2'500'000, i % 2 ? "steady" : "");
  }
  for (const std::int64_t start :
       {600'000'000LL, 1'200'000'000LL, 1'800'000'000LL, 2'400'000'000LL}) {
    for (std::int64_t k = 0; k < 50; ++k) {
      entries.emplace_back(start + 333'000 + (k / 2) * 40'000, "burst");
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const entry& a, const entry& b) { return a.first < b.first; });
  return entries;
}

// The trace written to a file for --schedule-in, removed with it.
class trace_file {
 public:
  explicit trace_file(const std::vector<entry>& entries)
      : path_(std::filesystem::temp_directory_path() / fmt::format("sim-replay-{}.txt", getpid())) {
    std::ofstream out(path_);
    out << "# a bursty trace: offset_ns [name]\n\n";
    for (const auto& [offset, name] : entries) {
      out << offset << (name.empty() ? "" : " " + name) << '\n';
    }
  }
  ~trace_file() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// What --schedule-out writes for the run (its own code), read back as entries.
std::vector<entry> schedule_out(const cli_result& r) {
  std::ostringstream text;
  schedule::write_schedule(text, *r.setup.config.plan());
  std::istringstream in(text.str());
  std::vector<entry> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string index, worker, phase, name;
    std::int64_t offset = 0;
    fields >> index >> offset >> worker >> phase >> name;
    rows.emplace_back(offset, name);
  }
  return rows;
}

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

// The report counts exactly the trace's entries before `end`, in warm-up and in the window; every
// request was answered.
void expect_counts(const json& doc, const std::vector<entry>& entries, nanoseconds end,
                   nanoseconds duration) {
  const json& model = doc["model"];
  EXPECT_EQ(model["arrival"], "trace");
  EXPECT_TRUE(model["rate_per_s"].is_null());
  std::uint64_t in_run = 0;
  std::uint64_t in_warmup = 0;
  for (const auto& [offset, name] : entries) {
    in_run += offset < end.count() ? 1 : 0;
    in_warmup += offset < warmup.count() ? 1 : 0;
  }
  EXPECT_EQ(number(model["trace"]["entries"]), entries.size());
  EXPECT_EQ(number(model["trace"]["requests"]), in_run);
  EXPECT_EQ(model["schedule"].get<std::string>().rfind("trace replay of ", 0), 0u)
      << model["schedule"];
  EXPECT_EQ(number(doc["schedule"]["duration_ns"]), static_cast<std::uint64_t>(duration.count()));
  EXPECT_EQ(number(doc["schedule"]["planned"]), in_run - in_warmup);
  EXPECT_EQ(number(doc["warmup"]["planned"]), in_warmup);
  EXPECT_EQ(number(doc["outcomes"]["ok"]), in_run - in_warmup);
  EXPECT_EQ(number(doc["warmup"]["outcomes"]["ok"]), in_warmup);
}

// Every entry before `end` was sent once, at exactly its offset, and reached the server after the
// same trip as every other request of its size: no burst made one wait, in the engine or on the
// way.
void expect_sent_on_time(const simulation& sim, const std::vector<entry>& entries,
                         nanoseconds end) {
  std::vector<std::int64_t> offsets;
  std::map<std::size_t, nanoseconds> trip;  // by the request's size
  const nanoseconds start = sim.result().start.mono;
  for (const auto& a : sim.sent()) {
    offsets.push_back((a.t.intended - start).count());
    EXPECT_EQ(a.t.sent, a.t.intended) << "request " << a.t.index << " went out late";
    const served_request* s = sim.server().find(a.sim_id);
    ASSERT_NE(s, nullptr) << "request " << a.t.index << " never reached the server";
    const nanoseconds first = trip.emplace(s->head.size(), s->read_at - a.t.sent).first->second;
    EXPECT_EQ(s->read_at - a.t.sent, first)
        << "request " << a.t.index << " took longer to reach the server";
  }
  std::vector<std::int64_t> expected;
  for (const auto& [offset, name] : entries) {
    if (offset < end.count()) expected.push_back(offset);
  }
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(offsets, expected);
  EXPECT_EQ(sim.server().log().size(), expected.size());
}

TEST(sim_replay, a_bursty_trace_is_sent_at_its_offsets) {
  const std::vector<entry> entries = bursty_trace();
  const trace_file file(entries);
  // 32 connections per worker: a burst's 25 requests per worker never wait for one.
  const cli_result r =
      run_cli({"--schedule-in", file.path(), "-t2", "-c64", "--warmup", "200ms", target});
  const auto problems = check_run(*r.sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  EXPECT_EQ(schedule_out(r), entries);
  // No -d: the time line runs to the next whole second after the last offset (2.4 s).
  expect_counts(r.doc, entries, seconds(3), seconds(3) - warmup);
  expect_sent_on_time(*r.sim, entries, seconds(3));
}

// -d 1s after --warmup 200ms: the time line is [0, 1.2 s); later entries are neither planned nor
// waited for.
TEST(sim_replay, a_duration_cuts_the_trace) {
  const std::vector<entry> entries = bursty_trace();
  const trace_file file(entries);
  const cli_result r = run_cli(
      {"--schedule-in", file.path(), "-t1", "-c32", "--warmup", "200ms", "-d", "1s", target});
  const simulation& sim = *r.sim;
  const auto problems = check_run(sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  const nanoseconds end = milliseconds(1200);
  std::vector<entry> cut;
  for (const auto& e : entries) {
    if (e.first < end.count()) cut.push_back(e);
  }
  EXPECT_EQ(schedule_out(r), cut);
  expect_counts(r.doc, entries, end, seconds(1));
  expect_sent_on_time(sim, entries, end);
  // The run ended with its last answer.
  nanoseconds last{};
  for (const auto& f : sim.finals()) last = std::max(last, f.at - sim.result().start.mono);
  EXPECT_EQ(sim.result().elapsed, last);
  EXPECT_LT(last, end);
}

}  // namespace
}  // namespace punctual::sim::replay_cases
