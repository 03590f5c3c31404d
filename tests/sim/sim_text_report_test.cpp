// The text report as people see it, byte for byte: a simulated run is the same on every machine,
// so its report can be compared with a golden file. Each run names -t, whose default follows the
// machine's CPUs. PUNCTUAL_UPDATE_GOLDEN=1 rewrites the files (then read the diff: it is the
// change people will see).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "sim_seeds.hpp"

namespace punctual::sim {
namespace {

using std::chrono::milliseconds;

std::string golden_path(const std::string& name) {
  return std::string(PUNCTUAL_TEST_DATA) + "/reports/text/" + name + ".txt";
}

void expect_golden(const cli_result& r, const std::string& name) {
  const std::string path = golden_path(name);
  const char* update = std::getenv("PUNCTUAL_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << r.text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (PUNCTUAL_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(r.text, expected.str()) << "the text report differs from " << path;
}

const std::string url = "http://127.0.0.1:8080/";

TEST(sim_text_report, healthy_run) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("the stall and verbose reports print every line it prints");
  surroundings around;
  around.server.service = {service_time::kind::exponential, milliseconds(1)};
  const cli_result r = run_cli({"-t", "2", "-R", "1000", "-d", "5s", "-c", "20", url}, around);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.text.rfind("VALID · no SLO · exit 0\n", 0), 0u) << r.text;
  expect_golden(r, "healthy");
}

// Every answer a 503: valid (the generator did its job) and exit 0 without an SLO, but the
// first line after the verdict says that nothing succeeded.
TEST(sim_text_report, every_request_failed) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(fate::status_503)] = 1.0;
  const cli_result r = run_cli({"-t", "2", "-R", "500", "-d", "3s", url}, around);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.text.find("\n0 of 1,500 ok: 1,500 answered 503 (expected 200-399)\n"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("no request was ok: the latencies below are those of the failures"),
            std::string::npos);
  expect_golden(r, "failures");
}

// Some timeouts and resets: the errors line counts the timeouts, never "none".
TEST(sim_text_report, timeouts_are_errors) {
  surroundings around;
  around.server.shares[static_cast<std::size_t>(fate::never)] = 0.05;
  around.server.shares[static_cast<std::size_t>(fate::reset)] = 0.02;
  const cli_result r =
      run_cli({"-t", "2", "-R", "500", "-d", "3s", "--timeout", "200ms", "-c", "50", url}, around);
  EXPECT_NE(r.text.find("FAILURES: "), std::string::npos) << r.text;
  const auto errors = r.text.find("\nerrors: ");
  ASSERT_NE(errors, std::string::npos);
  EXPECT_NE(r.text.find("timed out after 200ms", errors), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("errors: none"), std::string::npos);
  expect_golden(r, "timeouts");
}

// A 1 s stall at 2000 req/s on 10 connections: the requests queued behind connections the
// server held, so the worst second names the server, not the queue.
TEST(sim_text_report, stall_run) {
  surroundings around;
  around.server.stalls = {{milliseconds(2300), milliseconds(3300)}};
  const cli_result r = run_cli({"-t", "2", "-R", "2000", "-d", "6s", "-c", "10", url}, around);
  EXPECT_NE(r.text.find("cause: server: all 10 connections were held by slow responses"),
            std::string::npos)
      << r.text;
  expect_golden(r, "stall");
}

TEST(sim_text_report, slo_run) {
  surroundings around;
  around.server.service = {service_time::kind::exponential, milliseconds(2)};
  const cli_result r = run_cli({"-t", "2", "-R", "1000", "-d", "5s", "-c", "30", "--slo",
                                "p99<=50ms", "--slo", "errors<=1%", url},
                               around);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.text.rfind("VALID · SLOs p99<=50ms passed (", 0), 0u) << r.text;
  expect_golden(r, "slo");
}

// -R 200 -d 2s: too few samples beyond p99 for a verdict, but with no SLO there is none to
// withhold; a warning says how long a run would resolve it.
TEST(sim_text_report, smoke_run) {
  const cli_result r = run_cli({"-t", "2", "-R", "200", "-d", "2s", url});
  EXPECT_EQ(r.exit_code, 0) << r.text;
  EXPECT_NE(r.text.find("  warn  too few samples: p99 has 4, p99.9 has 0.4 and p99.99 has 0.04 "
                        "samples beyond it, fewer than 10 each; runs of 5s, 50s and 500s at the "
                        "observed 200 req/s would resolve them\n"),
            std::string::npos)
      << r.text;
  expect_golden(r, "smoke");
}

// --verbose lists every check in words; the default lists only those that failed or warned.
TEST(sim_text_report, verbose_lists_every_check) {
  const cli_result quiet = run_cli({"-R", "1000", "-d", "3s", url});
  const cli_result loud = run_cli({"-R", "1000", "-d", "3s", "--verbose", url});
  EXPECT_EQ(quiet.text.find("  pass "), std::string::npos) << quiet.text;
  EXPECT_NE(loud.text.find("  pass  no request was dropped\n"), std::string::npos) << loud.text;
  EXPECT_NE(loud.text.find("  pass  the schedule was kept in every whole second\n"),
            std::string::npos);
  EXPECT_EQ(loud.text.find(">= 0."), std::string::npos) << "a check in figures, not words";
}

}  // namespace
}  // namespace punctual::sim
