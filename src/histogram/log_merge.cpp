#include "punctual/histogram/log_merge.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "punctual/histogram/percentile_text.hpp"
#include "punctual/histogram/sparse_counts.hpp"

namespace punctual::hdr {

namespace {

// One input interval as the alignment sees it: where it lies, and (in memory) its counts.
struct located {
  std::string tag;
  double start = 0;
  double length = 0;
  int line = 0;
  histogram_params params;
  std::size_t log_index = 0;
  const histogram* value = nullptr;  // null when the counts are read in a second pass
};

located locate(const log_interval& iv, std::size_t log_index, bool keep_value) {
  return {iv.tag,    iv.start_unix_seconds,           iv.length_seconds, iv.line, iv.value.params(),
          log_index, keep_value ? &iv.value : nullptr};
}

std::string where(const merge_options& options, const located& item) {
  const std::string name = item.log_index < options.names.size()
                               ? options.names[item.log_index]
                               : "log #" + std::to_string(item.log_index + 1);
  return name + " line " + std::to_string(item.line);
}

std::string seconds_text(double seconds) {
  return java_fixed(seconds, 3) + " s";
}

// The latest start of each (input, tag) stream: only that interval may be a short one.
std::map<std::pair<std::size_t, std::string>, double> last_starts(std::span<const located> all) {
  std::map<std::pair<std::size_t, std::string>, double> last;
  for (const located& item : all) {
    auto [it, inserted] = last.try_emplace({item.log_index, item.tag}, item.start);
    if (!inserted) it->second = std::max(it->second, item.start);
  }
  return last;
}

std::string check_lengths(std::span<const located> all, double grid, const merge_options& o) {
  const auto last = last_starts(all);
  const double tol = o.tolerance_seconds;
  for (const located& item : all) {
    const bool is_last = last.at({item.log_index, item.tag}) == item.start;
    const bool ok = is_last ? item.length <= grid + tol : std::fabs(item.length - grid) <= tol;
    if (!ok) {
      return "interval lengths differ: " + seconds_text(item.length) + " at " + where(o, item) +
             ", " + seconds_text(grid) + " elsewhere";
    }
  }
  return {};
}

struct slot_group {
  double length = 0;
  std::vector<const located*> members;
  sparse_counts counts;  // a second pass's counts, in the tag's widest layout
};

using group_key = std::pair<long long, std::string>;  // (grid slot, tag): ordered as output

// Each interval's group, in `keys` (one per interval of `all`, in order).
std::string group_by_slot(std::span<const located> all, double origin, double grid,
                          const merge_options& o, std::map<group_key, slot_group>& groups,
                          std::vector<const group_key*>& keys) {
  for (const located& item : all) {
    const double offset = item.start - origin;
    const double slot = std::round(offset / grid);
    if (!(slot < 9e15) || std::fabs(offset - slot * grid) > o.tolerance_seconds) {
      return "interval at " + where(o, item) + " starts " + seconds_text(offset) +
             " after the earliest start, not on the common grid of " + seconds_text(grid);
    }
    const auto it = groups.try_emplace({static_cast<long long>(slot), item.tag}).first;
    slot_group& group = it->second;
    for (const located* other : group.members) {
      if (other->log_index == item.log_index) {
        return "intervals at " + where(o, *other) + " and line " + std::to_string(item.line) +
               " overlap (same tag, same time slot)";
      }
    }
    group.length = std::max(group.length, item.length);
    group.members.push_back(&item);
    keys.push_back(&it->first);
  }
  return {};
}

std::map<std::string, histogram_params> widest_by_tag(std::span<const located> all) {
  std::map<std::string, histogram_params> widest;
  for (const located& item : all) {
    auto [it, inserted] = widest.try_emplace(item.tag, item.params);
    if (!inserted) it->second = widest_params(it->second, item.params);
  }
  return widest;
}

// Where every input interval goes in the merged log.
struct merge_plan {
  double start_time = 0;  // the merged log's StartTime and BaseTime
  double origin = 0;      // the earliest interval start: slot 0 of the grid
  double grid = 0;
  std::map<group_key, slot_group> groups;
  std::vector<const group_key*> keys;  // each interval's group, in the order of `all`
  std::map<std::string, histogram_params> widest;
  std::string error;

  double start_of(const group_key& key) const {
    return origin + static_cast<double>(key.first) * grid;
  }
};

// `all` must outlive the plan (its groups point into it).
merge_plan plan_merge(std::span<const located> all, double earliest_start, const merge_options& o) {
  merge_plan p;
  p.start_time = earliest_start;
  for (std::size_t i = 0; i < all.size(); ++i) {
    p.origin = i == 0 ? all[i].start : std::min(p.origin, all[i].start);
    p.grid = std::max(p.grid, all[i].length);
  }
  if (all.empty()) return p;
  p.start_time = std::min(p.start_time, p.origin);
  if (p.grid <= o.tolerance_seconds) {
    p.error = "intervals have zero length: no time grid to align them on";
    return p;
  }
  p.error = check_lengths(all, p.grid, o);
  if (p.error.empty()) p.error = group_by_slot(all, p.origin, p.grid, o, p.groups, p.keys);
  if (p.error.empty()) p.widest = widest_by_tag(all);
  return p;
}

// The max column holds max / ratio, so an interval with both non-zero tells the ratio it was
// written with: a power of ten in every writer we know of. 0 when this one cannot tell.
double unit_ratio_of(const log_interval& iv) {
  if (iv.max_column <= 0 || iv.value.max() <= 0) return 0;
  const double exponent =
      std::round(std::log10(static_cast<double>(iv.value.max()) / iv.max_column));
  return exponent >= 0 && exponent <= 12 ? std::pow(10.0, exponent) : 0;
}

file_merge_result failed_read(file_merge_result& result, const std::string& path,
                              const log_read_result& read) {
  result.error = read.error_line > 0 ? path + ": " + read.error : read.error;
  result.read_error = true;
  return result;
}

}  // namespace

histogram_params widest_params(const histogram_params& a, const histogram_params& b) noexcept {
  histogram_params out;
  out.lowest_discernible_value = std::min(a.lowest_discernible_value, b.lowest_discernible_value);
  out.highest_trackable_value = std::max(a.highest_trackable_value, b.highest_trackable_value);
  out.significant_digits = std::max(a.significant_digits, b.significant_digits);
  return out;
}

std::optional<histogram> sum_intervals(std::span<const log_interval> intervals,
                                       std::string_view tag) {
  std::optional<histogram_params> params;
  for (const log_interval& iv : intervals) {
    if (iv.tag != tag) continue;
    params = params ? widest_params(*params, iv.value.params()) : iv.value.params();
  }
  if (!params) return std::nullopt;
  histogram sum(*params);
  for (const log_interval& iv : intervals) {
    if (iv.tag == tag) sum.add(iv.value);
  }
  return sum;
}

merge_result merge_logs(std::span<const interval_log> logs, const merge_options& options) {
  merge_result result;
  if (logs.empty()) {
    result.error = "no logs to merge";
    return result;
  }
  std::vector<located> all;
  double earliest = logs.front().start_time_unix_seconds;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    earliest = std::min(earliest, logs[i].start_time_unix_seconds);
    for (const log_interval& iv : logs[i].intervals) all.push_back(locate(iv, i, true));
  }
  merge_plan plan = plan_merge(all, earliest, options);
  if (!plan.error.empty()) {
    result.error = std::move(plan.error);
    return result;
  }
  interval_log merged;
  merged.format_version = "1.3";
  merged.has_start_time_line = merged.has_base_time_line = true;
  merged.start_time_unix_seconds = merged.base_time_unix_seconds = plan.start_time;
  for (auto& [key, group] : plan.groups) {
    histogram sum(plan.widest.at(key.second));
    for (const located* item : group.members) sum.add(*item->value);
    merged.intervals.push_back(
        log_interval{key.second, plan.start_of(key), group.length, 0.0, 0, std::move(sum)});
  }
  result.log = std::move(merged);
  return result;
}

file_merge_result merge_log_files(std::span<const std::string> paths, const merge_options& options,
                                  const merge_begin_handler& begin,
                                  const merged_interval_handler& on_interval) {
  file_merge_result result;
  if (paths.empty()) {
    result.error = "no logs to merge";
    return result;
  }
  // Pass 1: where every interval lies, not its counts.
  std::vector<located> all;
  std::vector<std::size_t> first_of(paths.size() + 1, 0);  // each file's first interval in `all`
  std::optional<double> earliest;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto read = read_interval_log_file(paths[i], [&](const interval_log&, log_interval&& iv) {
      if (result.inferred_unit_ratio == 0) result.inferred_unit_ratio = unit_ratio_of(iv);
      all.push_back(locate(iv, i, false));
    });
    if (!read) return failed_read(result, paths[i], read);
    earliest = std::min(earliest.value_or(read.log->start_time_unix_seconds),
                        read.log->start_time_unix_seconds);
    first_of[i + 1] = all.size();
  }
  merge_plan plan = plan_merge(all, *earliest, options);
  if (!plan.error.empty()) {
    result.error = std::move(plan.error);
    return result;
  }
  // Pass 2: each interval's counts into its group, in the file order pass 1 saw.
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::size_t k = first_of[i];
    const auto read = read_interval_log_file(paths[i], [&](const interval_log&, log_interval&& iv) {
      if (k >= first_of[i + 1]) return;  // the file grew since pass 1
      const group_key& key = *plan.keys[k++];
      plan.groups.at(key).counts.add(iv.value, plan.widest.at(key.second));
    });
    if (!read) return failed_read(result, paths[i], read);
  }
  result.start_time_unix_seconds = plan.start_time;
  begin(result);
  for (const auto& [key, group] : plan.groups) {
    histogram sum(plan.widest.at(key.second));
    group.counts.add_to(sum);
    on_interval(log_interval{key.second, plan.start_of(key), group.length, 0.0, 0, std::move(sum)});
    ++result.intervals;
  }
  return result;
}

}  // namespace punctual::hdr
