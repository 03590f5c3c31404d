// The simulation as the binary: a command line in, the JSON report, the text and the exit code
// out. One seed gives the same report, byte for byte.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

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

}  // namespace
}  // namespace punctual::sim::report_cases
