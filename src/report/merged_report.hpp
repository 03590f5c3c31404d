// One report from the reports of a distributed run's shards (docs/distributed.md), exactly:
// counts and histograms are added, never percentiles, and the verdicts are judged again on the
// sums. What only a shard can know (its connections against its share of the rate, its start
// lag) stays that shard's verdict, named by shard.
#pragma once

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/slo.hpp"
#include "report/json.hpp"
#include "report/run_report.hpp"

namespace punctual::report {

// One shard's JSON report, and where the interval log written beside it is (its per-second
// histograms, read one interval at a time during the merge; empty: none).
struct shard_report {
  std::string name;  // its file, for messages
  nlohmann::ordered_json doc;
  std::string log_path;
};

struct merge_settings {
  std::vector<std::string> command_line;  // the merge's own, for the merged report
  std::vector<analysis::slo_expression> slos;
  analysis::bound_mode bound = analysis::bound_mode::point;
};

struct merged_run {
  nlohmann::ordered_json doc;  // a run report (docs/report.schema.json) with `shards`
  verdicts verdict;
  bool interrupted = false;  // some shard was interrupted
  std::string log_text;      // the merged interval log, one interval per row of the timeline
};

// One line: why these reports cannot be merged.
struct merge_refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Checks that the reports are exactly the N shards of one plan (one each, none missing, the
// same N and plan_sha256), and puts them in shard order.
void order_shards(std::vector<shard_report>& shards);

// The merged report of shards in order (order_shards).
merged_run merge_runs(const std::vector<shard_report>& shards, const merge_settings& settings);

void write_merged_text(std::ostream& out, const merged_run& m);

}  // namespace punctual::report
