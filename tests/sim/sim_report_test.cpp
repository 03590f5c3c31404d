// The simulation as the binary: a command line in, the JSON report, the text and the exit code
// out. One seed gives the same report, byte for byte.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "cli/run_options.hpp"
#include "cli_run.hpp"

namespace punctual::sim::report_cases {
namespace {

using std::chrono::milliseconds;

surroundings stalling_faulty_server() {
  surroundings a;
  a.server.service.shape = service_time::kind::exponential;
  a.server.service.a = std::chrono::microseconds(300);
  a.server.stalls = {{milliseconds(400), milliseconds(700)}};
  a.server.shares[static_cast<std::size_t>(fate::status_503)] = 0.05;
  a.server.shares[static_cast<std::size_t>(fate::reset)] = 0.02;
  a.pauses = {{0, milliseconds(900), milliseconds(5)}};
  return a;
}

TEST(sim_report, one_seed_gives_a_bit_identical_json_report) {
  const std::vector<std::string> args{"-R",
                                      "2000",
                                      "-d",
                                      "2s",
                                      "-c",
                                      "8",
                                      "-t",
                                      "2",
                                      "--arrival",
                                      "poisson",
                                      "--retries",
                                      "1",
                                      "--timeout",
                                      "200ms",
                                      "--slo",
                                      "p99<=100ms",
                                      "http://127.0.0.1:8080/"};
  const cli_result a = run_cli(args, stalling_faulty_server());
  const cli_result b = run_cli(args, stalling_faulty_server());
  ASSERT_FALSE(a.json.empty());
  EXPECT_EQ(a.json, b.json);
  EXPECT_EQ(a.hlog, b.hlog);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.exit_code, b.exit_code);
  // Another seed of the world (the server's draws) gives another report.
  surroundings other = stalling_faulty_server();
  other.seed = 2;
  EXPECT_NE(run_cli(args, other).json, a.json);
  if (const char* dump = std::getenv("SIM_DUMP_JSON")) {
    FILE* f = std::fopen(dump, "w");
    std::fputs(a.json.c_str(), f);
    std::fclose(f);
  }
}

// The generator section says how many workers ran and where their count came from: -t, or its
// default from the CPUs this process may use.
TEST(sim_report, the_generator_says_where_its_thread_count_came_from) {
  const std::string url = "http://127.0.0.1:8080/";
  const cli_result given = run_cli({"-t", "3", "-c", "6", "-R", "300", "-d", "1s", url});
  const auto& g = given.doc["generator"];
  EXPECT_EQ(g["threads"], 3);
  EXPECT_EQ(g["workers"].size(), 3u);
  EXPECT_EQ(g["threads_from"], "flag");
  EXPECT_EQ(g["pinned"], false);
  for (const auto& w : g["workers"]) EXPECT_FALSE(w.contains("pinned_cpu"));
  EXPECT_EQ(given.text.find("\npinned: "), std::string::npos) << given.text;

  const cli_result by_default = run_cli({"-c", "6", "-R", "300", "-d", "1s", url});
  const auto& d = by_default.doc["generator"];
  EXPECT_EQ(d["threads"], cli::default_threads());
  EXPECT_EQ(d["workers"].size(), cli::default_threads());
  EXPECT_EQ(d["threads_from"], "cpus_allowed");
}

// --pin: the report writes each worker's CPU as the engine recorded it (the simulation runs no
// threads, so it pins none: here it is told worker 0 was pinned to CPU 3), in the JSON and on the
// text's pinned line; a worker the kernel would not pin has no CPU and says so.
TEST(sim_report, a_pinned_run_names_each_workers_cpu) {
  const std::vector<std::string> args{"-t",  "1",  "--pin", "-R",
                                      "300", "-d", "1s",    "http://127.0.0.1:8080/"};
  surroundings around;
  around.before_run = [](simulation& sim) {
    // The engine exists once the run has begun; its workers' stats are read at the finish.
    sim.set_poll_hook([&sim](const engine::run_collector&, bool final) {
      if (!final) sim.engine().workers()[0]->pinned_to(3);
    });
  };
  const cli_result pinned = run_cli(args, around);
  EXPECT_EQ(pinned.doc["generator"]["pinned"], true);
  EXPECT_EQ(pinned.doc["generator"]["workers"][0]["pinned_cpu"], 3);
  EXPECT_NE(pinned.text.find("\npinned: worker 0 on CPU 3\n"), std::string::npos) << pinned.text;

  const cli_result refused = run_cli(args);
  EXPECT_EQ(refused.doc["generator"]["pinned"], true);
  EXPECT_FALSE(refused.doc["generator"]["workers"][0].contains("pinned_cpu"));
  EXPECT_NE(refused.text.find("\npinned: worker 0 not pinned\n"), std::string::npos)
      << refused.text;
}

}  // namespace
}  // namespace punctual::sim::report_cases
