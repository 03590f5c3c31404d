// `punctual merge DIR/*.json -o merged.json`: the shards of a distributed run, each a JSON report
// with its interval log beside it, merged into one report and judged again (docs/distributed.md).
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "analysis/slo.hpp"
#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/merge_command.hpp"
#include "cli/renderings.hpp"
#include "cli/run_options.hpp"
#include "report/merged_report.hpp"

namespace punctual::cli {
namespace {

report::shard_report read_shard(const std::string& path) {
  report::shard_report s;
  s.name = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(path + ": cannot open");
  try {
    s.doc = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw usage_error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  s.log_path = log_beside(path);
  if (access(s.log_path.c_str(), R_OK) != 0) {
    throw usage_error(path + ": its interval log " + s.log_path +
                      " cannot be read (the merge takes each second's histograms from it)");
  }
  return s;
}

// --slo NAME:EXPR names one of the shards' request names or SCENARIO.session entries.
void resolve_names(std::vector<analysis::slo_expression>& slos, const report::shard_report& s) {
  std::vector<std::string> names;
  std::vector<bool> sessions;
  const auto& h = s.doc["histograms"];
  if (h.contains("names")) {
    for (const auto& [name, views] : h["names"].items()) {
      names.push_back(name);
      sessions.push_back(name.ends_with(".session") && s.doc.contains("sessions"));
    }
  }
  resolve_slo_names(slos, names, sessions);
}

}  // namespace

std::string log_beside(const std::string& json_path) {
  const auto dot = json_path.rfind('.');
  const auto slash = json_path.rfind('/');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_extension ? json_path.substr(0, dot) : json_path) + ".hlog";
}

int merge_runs_command(const merge_command_options& o) {
  report::merge_settings settings;
  settings.command_line = command_line();
  settings.slos = parse_slo_options(o.slos);
  settings.bound = parse_slo_bound(o.slo_bound);
  std::vector<report::shard_report> shards;
  for (const auto& path : o.inputs) shards.push_back(read_shard(path));
  report::merged_run merged;
  try {
    report::order_shards(shards);
    resolve_names(settings.slos, shards.front());
    merged = report::merge_runs(shards, settings);
  } catch (const report::merge_refused& e) {
    throw usage_error(e.what());
  }
  std::ostringstream text;
  report::write_merged_text(text, merged);
  std::cout << text.str() << std::flush;
  merged.doc["text_report"] = text.str();
  write_file_atomically(o.output, merged.doc.dump(2) + "\n");
  // Beside the report as beside each shard's: HdrHistogram's tools read the whole run from it.
  write_file_atomically(log_beside(o.output), merged.log_text);
  write_renderings(merged.doc, o.html_out, o.timeline_out);
  write_junit(merged.doc, "punctual merge", o.junit_out);
  return report::exit_code(merged.interrupted, merged.verdict);
}

}  // namespace punctual::cli
