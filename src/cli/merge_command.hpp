// `punctual merge`: interval logs merged interval by interval into one, or the JSON reports of
// a distributed run's shards merged into one report (docs/distributed.md).
#pragma once

#include <string>
#include <vector>

namespace punctual::cli {

struct merge_command_options {
  std::vector<std::string> inputs;
  std::string output;
  double unit_ratio = 0;  // 0: inferred from the inputs' max column
  double tolerance_ms = 1.0;
  // Shards' JSON reports only
  std::string html_out;
  std::string timeline_out;
  std::vector<std::string> slos;
  std::string slo_bound = "point";
  std::string junit_out;
};

int merge_command(const merge_command_options& o);
// Where a JSON report's interval log is: shard-0-of-3.json -> shard-0-of-3.hlog.
std::string log_beside(const std::string& json_path);
// The JSON reports of shards: the merged report to `output`, its text on stdout; the exit code
// is run's (docs/design.md, "Exit codes").
int merge_runs_command(const merge_command_options& o);

}  // namespace punctual::cli
