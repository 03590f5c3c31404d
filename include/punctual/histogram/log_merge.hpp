// Interval-by-interval merge of parsed interval logs (several runs, or the shards of one
// distributed run) into one log, and the histogram sums both merge and report need.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "punctual/histogram/histogram.hpp"
#include "punctual/histogram/interval_log.hpp"

namespace punctual::hdr {

// The layout that holds both: smallest ldv, largest htv, most significant digits.
histogram_params widest_params(const histogram_params& a, const histogram_params& b) noexcept;

// Sum of the histograms of every interval carrying `tag` ("" = untagged), in the widest layout
// among them; nullopt when no interval carries the tag.
std::optional<histogram> sum_intervals(std::span<const log_interval> intervals,
                                       std::string_view tag);

struct merge_options {
  // How far apart two starts (or two lengths) may be and still count as the same.
  double tolerance_seconds = 0.001;
  // Names for the inputs in error messages (e.g. file names); "log #N" when missing.
  std::vector<std::string> names;
};

struct merge_result {
  std::optional<interval_log> log;
  std::string error;
  explicit operator bool() const noexcept { return log.has_value(); }
};

// Every interval must have the same length L (the last interval of each tag's stream in each
// input may be shorter: a run's final partial second) and start on a common grid of step L
// (absolute start times, BaseTime applied). Intervals of one tag in the same grid slot are
// summed in the widest layout of that tag. The result is ordered by start, then tag, with
// StartTime = BaseTime = the earliest input StartTime, and an empty error. Inputs that cannot
// be aligned give no log and an error naming the input and line.
merge_result merge_logs(std::span<const interval_log> logs, const merge_options& options = {});

// The same merge of interval-log files, each read twice one interval at a time: first where
// its intervals lie (to align them, with the same rules and errors), then their counts into the
// merged intervals' non-empty slots. Memory is the merged intervals' used slots, however long
// the logs; merge_logs holds every decoded interval (~270 KB each in punctual's layout).
struct file_merge_result {
  std::string error;                   // empty on success
  bool read_error = false;             // the error is a file's (it names the file and the line)
  double start_time_unix_seconds = 0;  // the merged log's StartTime and BaseTime
  double inferred_unit_ratio = 0;      // the max columns' ratio in the inputs (0: none could tell)
  std::size_t intervals = 0;           // merged intervals handed out
  explicit operator bool() const noexcept { return error.empty(); }
};
// Called once, after the alignment and before the first merged interval.
using merge_begin_handler = std::function<void(const file_merge_result& header)>;
// Each merged interval in order (start, then tag); start_unix_seconds is absolute.
using merged_interval_handler = std::function<void(log_interval&& merged)>;
file_merge_result merge_log_files(std::span<const std::string> paths, const merge_options& options,
                                  const merge_begin_handler& begin,
                                  const merged_interval_handler& on_interval);

}  // namespace punctual::hdr
