// `punctual merge A.hlog B.hlog ... -o OUT.hlog`: interval-by-interval merge of interval logs
// (several runs or the shards of one distributed run), written atomically.
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
#include "cli/merge_command.hpp"
#include "cli/report_command.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/log_merge.hpp"

namespace punctual::cli {

namespace {

// The max column holds max / ratio, so any interval with both non-zero tells the ratio the
// input was written with; it is a power of ten in every writer we know of.
double infer_unit_ratio(const std::vector<hdr::interval_log>& logs) {
  for (const auto& log : logs) {
    for (const auto& iv : log.intervals) {
      if (iv.max_column <= 0 || iv.value.max() <= 0) continue;
      const double exponent =
          std::round(std::log10(static_cast<double>(iv.value.max()) / iv.max_column));
      if (exponent >= 0 && exponent <= 12) return std::pow(10.0, exponent);
    }
  }
  return 1e6;
}

}  // namespace

int merge_command(const merge_command_options& o) {
  std::size_t reports = 0;
  for (const auto& path : o.inputs) reports += is_json_report(path) ? 1 : 0;
  if (reports == o.inputs.size()) return merge_runs_command(o);
  if (reports > 0) throw usage_error("merge: give either JSON run reports or interval logs, not both");
  if (!o.html_out.empty() || !o.timeline_out.empty() || !o.slos.empty()) {
    throw usage_error("merge: --html, --timeline and --slo apply to JSON run reports, not interval logs");
  }
  std::vector<hdr::interval_log> logs;
  for (const auto& path : o.inputs) {
    auto read = hdr::read_interval_log_file(path);
    if (!read) throw usage_error(read.error_line > 0 ? path + ": " + read.error : read.error);
    logs.push_back(std::move(*read.log));
  }
  hdr::merge_options options;
  options.names = o.inputs;
  options.tolerance_seconds = o.tolerance_ms / 1000.0;
  const auto merged = hdr::merge_logs(logs, options);
  if (!merged) throw usage_error("cannot merge: " + merged.error);
  const double ratio = o.unit_ratio > 0 ? o.unit_ratio : infer_unit_ratio(logs);
  std::ostringstream text;
  hdr::interval_log_writer writer(text, merged.log->start_time_unix_seconds, ratio);
  writer.write_header(fmt::format("[Merged by punctual 0.1.0 from {} logs]", o.inputs.size()));
  for (const auto& iv : merged.log->intervals) {
    writer.write_interval(iv.tag, iv.start_unix_seconds - merged.log->base_time_unix_seconds,
                          iv.length_seconds, iv.value);
  }
  write_file_atomically(o.output, text.str());
  std::cout << fmt::format("merged {} logs into {}: {} intervals\n", o.inputs.size(), o.output,
                           merged.log->intervals.size());
  return exit_ok;
}



}  // namespace punctual::cli
