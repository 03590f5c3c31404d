// N shards, each simulated and then merged by `punctual merge`'s own code, give exactly the sum
// of the shards' counts and histograms; and when no request ever waited for a connection (and
// the server answers every request alike), exactly the single run's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_run.hpp"
#include "punctual/histogram/codec.hpp"
#include "report/merged_report.hpp"
#include "schedule/prng.hpp"
#include "sim_seeds.hpp"

namespace punctual::sim::shards_cases {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

struct drawn_run {
  std::vector<std::string> args;
  surroundings around;
  bool alike = true;  // the server treats every request alike, and nothing can wait
  std::string text;
};

drawn_run draw_run(std::uint64_t seed) {
  schedule::xoshiro256ss r(seed);
  const auto between = [&](std::uint64_t lo, std::uint64_t hi) {
    return lo + r.next() % (hi - lo + 1);
  };
  drawn_run d;
  const auto threads = between(1, 2);
  const auto rate = between(200, 3000);
  const auto ms = between(100, 600);
  d.args = {"-R",        std::to_string(rate),
            "-d",        fmt::format("{}ms", ms),
            "-t",        std::to_string(threads),
            "-c",        std::to_string(between(threads, 3 * threads) * (r.next() % 2 ? 8 : 1)),
            "--timeout", fmt::format("{}ms", between(5, 500)),
            "--seed",    std::to_string(seed)};
  if (r.next() % 2) d.args.insert(d.args.end(), {"--arrival", "poisson"});
  if (r.next() % 3 == 0) d.args.insert(d.args.end(), {"--precision", "spin"});
  d.around.server.service.a = microseconds(between(20, 3000));
  if (r.next() % 3 == 0) {
    d.alike = false;
    d.around.server.service.shape = service_time::kind::exponential;
    d.around.server.shares[static_cast<std::size_t>(fate::status_503)] = 0.1;
    d.around.server.stalls = {{milliseconds(between(0, 100)), milliseconds(between(100, 300))}};
    d.args.insert(d.args.end(), {"--retries", "1"});
  }
  d.args.push_back("http://127.0.0.1:8080/");
  d.text = fmt::format("seed {}:", seed);
  for (const auto& a : d.args) d.text += " " + a;
  return d;
}

hdr::histogram decoded(const json& doc, const char* view) {
  return *hdr::decode_compressed_base64(doc["histograms"]["views"][view].get<std::string>()).value;
}

bool same_counts(const hdr::histogram& a, const hdr::histogram& b) {
  if (a.total_count() != b.total_count()) return false;
  for (std::int32_t i = 0; i < a.counts_length(); ++i) {
    if (a.count_at_index(i) != b.count_at_index(i)) return false;
  }
  return true;
}

bool nothing_waited(const simulation& sim) {
  const auto& v = sim.result().measured.views;
  return v[record::view::queue_wait].max() == 0 && v[record::view::connect_time].total_count() == 0;
}

TEST(sim_shards, merged_shards_add_up_exactly) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("sim-shards-{}", getpid());
  std::filesystem::create_directories(dir);
  int failed = 0;
  int against_single = 0;
  const auto seeds = seeds_to_run(60);
  for (const std::uint64_t seed : seeds) {
    const drawn_run d = draw_run(seed);
    const std::uint32_t n = 2 + static_cast<std::uint32_t>(seed % 3);
    std::vector<cli_result> runs;
    std::vector<report::shard_report> shards;
    bool alike = d.alike;
    for (std::uint32_t i = 0; i < n; ++i) {
      auto args = d.args;
      // Without --start-at, only a shared --run-id makes the shards one run.
      args.insert(args.end() - 1, {"--shard", fmt::format("{}/{}", i, n), "--run-id",
                                   fmt::format("seed-{}", seed)});
      runs.push_back(run_cli(args, d.around));
      const auto path = dir / fmt::format("shard-{}.hlog", i);
      std::ofstream(path) << runs.back().hlog;
      shards.push_back({fmt::format("shard-{}.json", i), runs.back().doc, path.string()});
      alike = alike && nothing_waited(*runs.back().sim);
    }
    std::vector<std::string> problems;
    report::order_shards(shards);
    const report::merged_run merged = report::merge_runs(shards, {});
    json outcomes = runs.front().doc["outcomes"];
    hdr::histogram sum = decoded(runs.front().doc, "response_time");
    for (std::size_t i = 1; i < runs.size(); ++i) {
      for (auto& [k, v] : outcomes.items())
        v = v.get<std::uint64_t>() + runs[i].doc["outcomes"][k].get<std::uint64_t>();
      sum.add(decoded(runs[i].doc, "response_time"));
    }
    if (merged.doc["outcomes"] != outcomes)
      problems.push_back("merged outcomes " + merged.doc["outcomes"].dump() + ", the shards' sum " +
                         outcomes.dump());
    if (!same_counts(decoded(merged.doc, "response_time"), sum))
      problems.push_back("the merged response-time histogram is not the shards' sum");
    if (alike) {
      const cli_result single = run_cli(d.args, d.around);
      if (nothing_waited(*single.sim)) {
        ++against_single;
        if (single.doc["outcomes"] != merged.doc["outcomes"]) {
          problems.push_back("merged outcomes " + merged.doc["outcomes"].dump() +
                             ", the single run's " + single.doc["outcomes"].dump());
        }
        if (!same_counts(decoded(merged.doc, "response_time"),
                         decoded(single.doc, "response_time"))) {
          problems.push_back("the merged response-time histogram is not the single run's");
        }
      }
    }
    if (problems.empty()) continue;
    std::string text;
    for (const auto& p : problems) text += "\n  " + p;
    ADD_FAILURE() << d.text << " (" << n << " shards)" << text << "\n  replay: SIM_SEED=" << seed
                  << " ctest -R sim --output-on-failure";
    if (++failed == 3) break;
  }
  std::filesystem::remove_all(dir);
  // Enough of the drawn runs had nothing wait for the single-run comparison to mean something.
  if (seeds.size() > 20) {
    EXPECT_GT(against_single, static_cast<int>(seeds.size()) / 5);
  }
}

}  // namespace
}  // namespace punctual::sim::shards_cases
