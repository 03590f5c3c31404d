#include "punctual/histogram/log_merge.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "punctual/histogram/percentile_text.hpp"

namespace punctual::hdr {

namespace {

struct located {
  const log_interval* interval;
  std::size_t log_index;
};

std::string where(const merge_options& options, const located& item) {
  const std::string name = item.log_index < options.names.size()
                               ? options.names[item.log_index]
                               : "log #" + std::to_string(item.log_index + 1);
  return name + " line " + std::to_string(item.interval->line);
}

std::string seconds_text(double seconds) { return java_fixed(seconds, 3) + " s"; }

// The latest start of each (input, tag) stream: only that interval may be a short one.
std::map<std::pair<std::size_t, std::string>, double> last_starts(std::span<const located> all) {
  std::map<std::pair<std::size_t, std::string>, double> last;
  for (const located& item : all) {
    auto [it, inserted] = last.try_emplace({item.log_index, item.interval->tag},
                                           item.interval->start_unix_seconds);
    if (!inserted) it->second = std::max(it->second, item.interval->start_unix_seconds);
  }
  return last;
}

std::string check_lengths(std::span<const located> all, double grid, const merge_options& o) {
  const auto last = last_starts(all);
  const double tol = o.tolerance_seconds;
  for (const located& item : all) {
    const log_interval& iv = *item.interval;
    const bool is_last = last.at({item.log_index, iv.tag}) == iv.start_unix_seconds;
    const bool ok = is_last ? iv.length_seconds <= grid + tol
                            : std::fabs(iv.length_seconds - grid) <= tol;
    if (!ok) {
      return "interval lengths differ: " + seconds_text(iv.length_seconds) + " at " +
             where(o, item) + ", " + seconds_text(grid) + " elsewhere";
    }
  }
  return {};
}

struct slot_group {
  double length = 0;
  std::vector<located> members;
};

using group_key = std::pair<long long, std::string>;  // (grid slot, tag): ordered as output

std::string group_by_slot(std::span<const located> all, double origin, double grid,
                          const merge_options& o, std::map<group_key, slot_group>& groups) {
  for (const located& item : all) {
    const log_interval& iv = *item.interval;
    const double offset = iv.start_unix_seconds - origin;
    const double slot = std::round(offset / grid);
    if (!(slot < 9e15) || std::fabs(offset - slot * grid) > o.tolerance_seconds) {
      return "interval at " + where(o, item) + " starts " + seconds_text(offset) +
             " after the earliest start, not on the common grid of " + seconds_text(grid);
    }
    slot_group& group = groups[{static_cast<long long>(slot), iv.tag}];
    for (const located& other : group.members) {
      if (other.log_index == item.log_index) {
        return "intervals at " + where(o, other) + " and line " + std::to_string(iv.line) +
               " overlap (same tag, same time slot)";
      }
    }
    group.length = std::max(group.length, iv.length_seconds);
    group.members.push_back(item);
  }
  return {};
}

std::map<std::string, histogram_params> widest_by_tag(std::span<const located> all) {
  std::map<std::string, histogram_params> widest;
  for (const located& item : all) {
    const auto& params = item.interval->value.params();
    auto [it, inserted] = widest.try_emplace(item.interval->tag, params);
    if (!inserted) it->second = widest_params(it->second, params);
  }
  return widest;
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
  interval_log merged;
  merged.format_version = "1.3";
  merged.has_start_time_line = merged.has_base_time_line = true;
  merged.start_time_unix_seconds = logs.front().start_time_unix_seconds;
  std::vector<located> all;
  double origin = 0, grid = 0;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    merged.start_time_unix_seconds =
        std::min(merged.start_time_unix_seconds, logs[i].start_time_unix_seconds);
    for (const log_interval& iv : logs[i].intervals) {
      origin = all.empty() ? iv.start_unix_seconds : std::min(origin, iv.start_unix_seconds);
      grid = std::max(grid, iv.length_seconds);
      all.push_back({&iv, i});
    }
  }
  if (!all.empty()) {
    merged.start_time_unix_seconds = std::min(merged.start_time_unix_seconds, origin);
  }
  merged.base_time_unix_seconds = merged.start_time_unix_seconds;
  if (!all.empty() && grid <= options.tolerance_seconds) {
    result.error = "intervals have zero length: no time grid to align them on";
    return result;
  }
  std::map<group_key, slot_group> groups;
  result.error = check_lengths(all, grid, options);
  if (result.error.empty()) result.error = group_by_slot(all, origin, grid, options, groups);
  if (!result.error.empty()) return result;

  const auto widest = widest_by_tag(all);
  for (auto& [key, group] : groups) {
    histogram sum(widest.at(key.second));
    for (const located& item : group.members) sum.add(item.interval->value);
    merged.intervals.push_back(log_interval{key.second,
                                            origin + static_cast<double>(key.first) * grid,
                                            group.length, 0.0, 0, std::move(sum)});
  }
  result.log = std::move(merged);
  return result;
}

}  // namespace punctual::hdr
