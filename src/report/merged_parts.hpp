// The pieces of a merge of shards' reports (report/merged_report.hpp): the sums it judges, and
// the sections it rewrites from them. Internal to src/report.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "analysis/interval_series.hpp"
#include "analysis/validity.hpp"
#include "punctual/histogram/sparse_counts.hpp"
#include "record/counters.hpp"
#include "record/view_set.hpp"
#include "report/json.hpp"
#include "report/merged_report.hpp"

namespace punctual::report {

// A second of a merge: each stream's counts (by tag, "" the untagged response time; views,
// names and sessions alike), in record::latency_params()'s layout.
using second_counts = std::map<std::string, hdr::sparse_counts>;

// Everything the verdicts need, added over the shards.
struct merged_sums {
  explicit merged_sums(std::span<const double> slo_percentiles) : series(slo_percentiles) {}

  std::vector<std::string> names;  // the mix's names, in its order (none without a mix)
  record::view_set views;          // the measured window's totals, names included
  record::counters counts;
  std::vector<record::name_counts> by_name;  // by `names`
  // Each row of the timeline: its summary, from the logs' histograms added (no row: no log had
  // it), and the same rows in order as the confidence intervals want them.
  std::map<std::int64_t, record::interval_row> rows;
  analysis::interval_series series;
  record::per_second_load load;
  bool has_schedule = false;
  std::chrono::nanoseconds window{};
  // The merged interval log (every stream, each row of the timeline), as a run writes its own,
  // from the first shard log's start: the window's start, T in every shard.
  std::string log_text;
  double log_start_unix_s = 0;
};

// Adds src's whole numbers into dst, key by key; keys dst lacks are copied from src.
void add_numbers(nlohmann::ordered_json& dst, const nlohmann::ordered_json& src);

merged_sums add_shards(const std::vector<shard_report>& shards,
                       std::span<const double> slo_percentiles);

// The checks only a shard can make (its connections and users against its share of the load,
// its start lag, its workers' CPU, and those from data a report does not carry): of each, the
// worst failing shard's, naming the others that failed, else the one closest to failing.
void carry_shard_checks(const std::vector<shard_report>& shards, analysis::validity_report& report);

// series.per_second: counts added row by row, latency from the rows' added histograms.
void write_series(const std::vector<shard_report>& shards, const merged_sums& sums,
                  nlohmann::ordered_json& doc);
// by_name and sessions: counts added, views from the added named histograms.
void write_names(const std::vector<shard_report>& shards, const merged_sums& sums,
                 nlohmann::ordered_json& doc);
// attempts: the amplification and each second's attempts again from the added counts.
void merge_attempts(const std::vector<shard_report>& shards, std::uint64_t planned,
                    nlohmann::ordered_json& doc);
// protocol: connections and HTTP/2 counts added, the protocol most connections spoke named.
void merge_protocol(const std::vector<shard_report>& shards, nlohmann::ordered_json& doc);
// generator's totals: threads, sent_for_others, claimed_away and host_steal_ns add up over the
// shards (the steal absent when no shard had it), longest_wake_lateness_ns is the longest;
// threads_from is the shards' own when they share it, else "mixed", and pinned is true only when
// every shard was pinned (both absent when a shard's report lacks them).
void merge_generator(const std::vector<shard_report>& shards, nlohmann::ordered_json& doc);
// `histograms` re-encoded from the sums, with the sections `like` has.
nlohmann::ordered_json histograms_of(const merged_sums& sums, const nlohmann::ordered_json& like);

}  // namespace punctual::report
