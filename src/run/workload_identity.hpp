// The workload identity: whether two runs describe the same load, judged by the same rules. A
// merge of shards refuses shards whose identities differ, and anything that compares reports
// asks the same question. It is a list of canonical fields (each a name and a text, in a fixed
// order) and a SHA-256 over them; the report carries both, so that a refusal can name the first
// field that differs. What varies between runs of one workload (the seed, the duration, the
// warm-up, threads, connections, the outputs) is left out, and the report lists it beside.
#pragma once

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace punctual::analysis {
enum class bound_mode;  // analysis/slo.hpp: --slo-bound, part of the judgement
}  // namespace punctual::analysis

namespace punctual::run {

struct config;

struct workload_field {
  std::string name;
  std::string value;  // "-" where the field does not apply to the run's model
  bool operator==(const workload_field&) const = default;
};

struct workload_identity {
  std::vector<workload_field> fields;  // in the order workload_fields() gives them
  std::string digest;                  // SHA-256 (hex) of workload_digest(fields)
};

// The fields, in this order: model, arrival, rate, stages (a scenario's phases), trace, think,
// expected_interval, target (the origin), resolve, http, method, path, headers, body, requests
// (a --requests mix), scenario, feeder, timeout, expect_status, retry, retry_budget, slo_bound.
// Contents (a long body, a mix, a scenario, a feeder, a trace) are named by their size and a
// SHA-256 of their parsed form, so a copy kept anywhere, formatted any way, is the same.
// "200-399", "200,204,300-399": the statuses that count as ok ("none" for none).
std::string status_text(const std::bitset<600>& ok);

std::vector<workload_field> workload_fields(const config& c, analysis::bound_mode slo_bound);

// SHA-256 (hex) over each field's name and value, each prefixed by its length in bytes, in
// order: no two lists of fields encode alike.
std::string workload_digest(const std::vector<workload_field>& fields);

workload_identity identify_workload(const config& c, analysis::bound_mode slo_bound);

// The first field in which `other` differs from `reference`, in the reference's order, as one
// line: `expect_status "200" vs "200-399"` (other's value first; `none` for a missing field).
// Nothing when the lists are equal.
std::optional<std::string> first_difference(const std::vector<workload_field>& other,
                                            const std::vector<workload_field>& reference);

// How `other` differs from `reference`: its first differing field, or, when the fields agree
// but the digests do not (a report was edited), the digests. Nothing when the digests agree.
std::optional<std::string> workload_difference(const workload_identity& other,
                                               const workload_identity& reference);

// A run's id, the same on every shard of one run: derived from --start-at and the workload's
// digest, so that shards started together without --run-id agree.
std::string derived_run_id(std::chrono::nanoseconds start_at, std::string_view digest);
// 128 random bits in hex: a run that no other process shares.
std::string random_run_id();
// Why `id` cannot be a --run-id (1 to 64 of A-Z a-z 0-9 . _ : -), or nothing.
std::optional<std::string> run_id_problem(std::string_view id);

// SHA-256 of `bytes`, in lowercase hex.
std::string sha256_hex(std::string_view bytes);

}  // namespace punctual::run
