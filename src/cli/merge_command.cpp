// `punctual merge A.hlog B.hlog ... -o OUT.hlog`: interval-by-interval merge of interval logs
// (several runs or the shards of one distributed run), written atomically.
#include "cli/merge_command.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/report_command.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/log_merge.hpp"

namespace punctual::cli {

int merge_command(const merge_command_options& o) {
  std::size_t reports = 0;
  for (const auto& path : o.inputs) reports += is_json_report(path) ? 1 : 0;
  if (reports == o.inputs.size()) return merge_runs_command(o);
  if (reports > 0)
    throw usage_error("merge: give either JSON run reports or interval logs, not both");
  if (!o.html_out.empty() || !o.timeline_out.empty() || !o.slos.empty() || !o.junit_out.empty()) {
    throw usage_error(
        "merge: --html, --timeline, --slo and --junit apply to JSON run reports, not interval "
        "logs");
  }
  hdr::merge_options options;
  options.names = o.inputs;
  options.tolerance_seconds = o.tolerance_ms / 1000.0;
  // One merged interval at a time into the text: a long log's decoded histograms would not fit.
  std::ostringstream text;
  std::unique_ptr<hdr::interval_log_writer> writer;
  double base = 0;
  const auto begin = [&](const hdr::file_merge_result& header) {
    const double ratio = o.unit_ratio > 0                 ? o.unit_ratio
                         : header.inferred_unit_ratio > 0 ? header.inferred_unit_ratio
                                                          : 1e6;
    base = header.start_time_unix_seconds;
    writer = std::make_unique<hdr::interval_log_writer>(text, base, ratio);
    writer->write_header(fmt::format("[Merged by punctual 0.1.0 from {} logs]", o.inputs.size()));
  };
  const auto on_interval = [&](hdr::log_interval&& iv) {
    writer->write_interval(iv.tag, iv.start_unix_seconds - base, iv.length_seconds, iv.value);
  };
  const auto merged = hdr::merge_log_files(o.inputs, options, begin, on_interval);
  if (!merged)
    throw usage_error(merged.read_error ? merged.error : "cannot merge: " + merged.error);
  write_file_atomically(o.output, text.str());
  std::cout << fmt::format("merged {} logs into {}: {} intervals\n", o.inputs.size(), o.output,
                           merged.intervals);
  return exit_ok;
}

}  // namespace punctual::cli
