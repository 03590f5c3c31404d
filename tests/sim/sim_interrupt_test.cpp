// Ctrl-C in the simulation (load_run::interrupt, what the SIGINT handler calls): the window ends
// at the interruption, the drain after it lasts at most 1 s, every report says the run was
// interrupted and counts exactly the requests planned before it, and what the drain sends and
// completes is outside the window's rates. The signal itself, exit 130 of a real process and the
// files it writes stay in tests/integration/test_interrupt.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checks.hpp"
#include "cli_run.hpp"
#include "record/view_set.hpp"
#include "schedule/prng.hpp"
#include "sim_setups.hpp"

namespace punctual::sim::interrupt_cases {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using json = nlohmann::ordered_json;

constexpr nanoseconds period{2'500'000};  // -R400

std::uint64_t number(const json& j) {
  return j.get<std::uint64_t>();
}

// The interruption `after` the start of a 10 s run at 400 req/s against a server that answers in
// 2 ms, or one that answers nothing.
void interrupt_once(nanoseconds after, bool stalling) {
  surroundings around;
  around.server.service.a = milliseconds(2);
  if (stalling) around.server.stalls = {{seconds(0), seconds(600)}};
  around.interrupt_at = after;
  const cli_result r = run_cli({"-t2", "-c4", "-d10s", "-R400", target}, around);
  const simulation& sim = *r.sim;
  const auto problems = check_run(sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  EXPECT_EQ(r.exit_code, 130);
  EXPECT_TRUE(r.doc["interrupted"].get<bool>());
  EXPECT_NE(("\n" + r.text).find("\nmodel: open"), std::string::npos) << r.text.substr(0, 200);
  EXPECT_NE(r.hlog.find("#[Histogram log format version"), std::string::npos);
  // The window is [start, interruption): it holds exactly the requests due before it.
  const std::uint64_t planned =
      static_cast<std::uint64_t>((after + period - nanoseconds{1}) / period);
  EXPECT_EQ(number(r.doc["schedule"]["planned"]), planned);
  EXPECT_EQ(number(r.doc["schedule"]["window_ns"]), static_cast<std::uint64_t>(after.count()));
  const nanoseconds start = sim.result().start.mono;
  for (const auto& a : sim.sent()) {
    EXPECT_LT(a.t.intended, start + after) << "request " << a.t.index;
  }
  const json& o = r.doc["outcomes"];
  const json& rt = r.doc["latency"]["response_time"];
  EXPECT_EQ(number(rt["censored"]), number(o["timeout"]) + number(o["unfinished"]));
  if (stalling) {
    // Nothing is answered: the drain waits its whole second, and every request is unfinished,
    // recorded at the interruption (the first one, due at the start, took all of it).
    EXPECT_EQ(sim.result().elapsed, after + seconds(1));
    EXPECT_EQ(number(o["unfinished"]), planned);
    hdr::histogram longest(record::latency_params());
    longest.record(after.count());
    EXPECT_EQ(rt["max_ns"].get<std::int64_t>(), longest.max());
  } else {
    // What is in flight at the interruption is answered within 2 ms, and the run ends with the
    // last answer (or at once, when nothing was in flight).
    EXPECT_EQ(number(o["ok"]), planned);
    nanoseconds last{};
    for (const auto& f : sim.finals()) last = std::max(last, f.at - start);
    EXPECT_EQ(sim.result().elapsed, std::max(after, last));
    EXPECT_LT(last, after + milliseconds(3));
  }
}

// Interruptions at drawn instants from 0.3 to 2.5 s, against a healthy and a stalling server in
// turn.
TEST(sim_interrupt, an_interruption_ends_the_window_and_every_report_says_so) {
  schedule::xoshiro256ss draw(20261129);
  for (int round = 0; round < 8; ++round) {
    const nanoseconds after = milliseconds(300) + microseconds(draw.next() % 2'200'000);
    const bool stalling = round % 2 == 1;
    SCOPED_TRACE("interrupted " + std::to_string(after.count()) + " ns into the run, " +
                 (stalling ? "stalling" : "healthy") + " server");
    interrupt_once(after, stalling);
  }
}

// A rate (per second of the window) back to the count it was made of.
std::uint64_t count_of_rate(const json& rate, nanoseconds window) {
  return static_cast<std::uint64_t>(
      std::llround(rate.get<double>() * static_cast<double>(window.count()) / 1e9));
}

// A 50 ms server behind 4 connections cannot keep up with 400 req/s: requests queue, and the
// drain after the interruption goes on sending and completing them. The window's rates count
// exactly the sends and completions before the interruption, as the network saw them.
TEST(sim_interrupt, the_drain_is_outside_the_window) {
  surroundings around;
  around.server.service.a = milliseconds(50);
  around.interrupt_at = seconds(1);
  const cli_result r = run_cli({"-t1", "-c4", "-d10s", "-R400", "--timeout", "3s", target}, around);
  const simulation& sim = *r.sim;
  const auto problems = check_run(sim);
  EXPECT_TRUE(problems.empty()) << describe(problems);
  EXPECT_EQ(r.exit_code, 130);
  const nanoseconds end = sim.result().start.mono + seconds(1);
  std::uint64_t sent_inside = 0;
  std::uint64_t sent_after = 0;
  for (const auto& a : sim.sent()) {
    // The server read each request after it was sent: the send instant is the write's.
    ASSERT_NE(sim.server().find(a.sim_id), nullptr);
    EXPECT_GT(sim.server().find(a.sim_id)->read_at, a.t.sent);
    (a.t.sent < end ? sent_inside : sent_after)++;
  }
  std::uint64_t completed_inside = 0;
  std::uint64_t completed_after = 0;
  for (const auto& s : sim.server().log()) {
    if (!s.answered) continue;
    const nanoseconds read =
        sim.net().connections()[s.connection - 1]->read_stamp_of(s.end_offset - 1);
    if (read.count() == 0) continue;  // still on its way when the drain ended
    (read < end ? completed_inside : completed_after)++;
  }
  const nanoseconds window{r.doc["schedule"]["window_ns"].get<std::int64_t>()};
  EXPECT_EQ(window, seconds(1));
  EXPECT_EQ(count_of_rate(r.doc["rates_per_s"]["sent"], window), sent_inside);
  EXPECT_EQ(count_of_rate(r.doc["rates_per_s"]["completed"], window), completed_inside);
  // The drain did send and complete enough for the difference to show.
  EXPECT_GT(sent_after, 10u);
  EXPECT_GT(completed_after, 10u);
}

}  // namespace
}  // namespace punctual::sim::interrupt_cases
