#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/json.hpp"
#include "report/merged_parts.hpp"
#include "report/merged_report.hpp"

namespace {

using nlohmann::ordered_json;
using punctual::report::merge_refused;
using punctual::report::shard_report;

ordered_json check_json(const char* name, double figure, double threshold, bool pass,
                        const std::string& note) {
  return {{"name", name}, {"figure", figure},  {"relation", "<="}, {"threshold", threshold},
          {"unit", "ns"}, {"level", "gating"}, {"pass", pass},     {"note", note}};
}

shard_report shard_with(std::uint32_t index, std::uint32_t count, ordered_json checks) {
  shard_report s;
  s.name = "shard-" + std::to_string(index) + ".json";
  s.doc = {{"run_id", "run-a"},
           {"workload",
            {{"digest", std::string(64, 'c')},
             {"fields", {{"model", "open"}, {"expect_status", "200-399"}}}}},
           {"schedule",
            {{"shard", {{"index", index}, {"count", count}}},
             {"plan_sha256", std::string(64, 'a')},
             {"start_at_unix_ns", 5}}},
           {"validity", {{"checks", checks}}}};
  return s;
}

// The carried start_lag is the worst shard's: the largest figure when all pass; when several
// fail, the worst one, naming the other.
TEST(merged_checks, carry_the_worst_shard_and_name_the_others) {
  std::vector<shard_report> shards{
      shard_with(0, 3, ordered_json::array({check_json("start_lag", 7e5, 1e8, true, "")})),
      shard_with(1, 3, ordered_json::array({check_json("start_lag", 1.04e6, 1e8, true, "")})),
      shard_with(2, 3, ordered_json::array({check_json("start_lag", 2e5, 1e8, true, "")}))};
  punctual::analysis::validity_report report;
  punctual::report::carry_shard_checks(shards, report);
  ASSERT_EQ(report.checks.size(), 1U);
  EXPECT_DOUBLE_EQ(report.checks[0].figure, 1.04e6);
  EXPECT_TRUE(report.checks[0].pass);

  shards[0].doc["validity"]["checks"][0] = check_json("start_lag", 3e8, 1e8, false, "late A");
  shards[2].doc["validity"]["checks"][0] = check_json("start_lag", 5e8, 1e8, false, "late B");
  punctual::analysis::validity_report failed;
  punctual::report::carry_shard_checks(shards, failed);
  ASSERT_EQ(failed.checks.size(), 1U);
  EXPECT_FALSE(failed.valid());
  EXPECT_DOUBLE_EQ(failed.checks[0].figure, 5e8);
  EXPECT_EQ(failed.checks[0].note, "shard 2 of 3: late B (also failed: shard 0 of 3)");
}

std::string refusal(std::vector<shard_report> shards) {
  try {
    punctual::report::order_shards(shards);
  } catch (const merge_refused& e) {
    return e.what();
  }
  return "";
}

TEST(merged_checks, order_shards_refuses_what_is_not_one_run) {
  const auto empty = ordered_json::array();
  EXPECT_EQ(refusal({shard_with(0, 2, empty), shard_with(1, 2, empty)}), "");
  EXPECT_EQ(refusal({shard_with(1, 3, empty), shard_with(0, 3, empty)}), "shard 2 of 3 is missing");
  EXPECT_NE(refusal({shard_with(0, 2, empty), shard_with(0, 2, empty)}).find("given twice"),
            std::string::npos);
  EXPECT_NE(refusal({shard_with(0, 2, empty), shard_with(1, 3, empty)}).find("a shard of 3"),
            std::string::npos);
  // A count from a report is not trusted with memory: 4e9 slots would be 32 GB.
  EXPECT_NE(refusal({shard_with(0, 4'000'000'000U, empty)}).find("a shard count of 4000000000"),
            std::string::npos);
  EXPECT_EQ(refusal({shard_with(0, 64, empty), shard_with(5, 64, empty)}),
            "shards 1, 2, 3, 4, 6, 7, 8, 9, 10, 11 and 52 more of 64 are missing");
  auto other_plan = shard_with(1, 2, empty);
  other_plan.doc["schedule"]["plan_sha256"] = std::string(64, 'b');
  EXPECT_NE(refusal({shard_with(0, 2, empty), other_plan}).find("another plan"), std::string::npos);
  auto other_start = shard_with(1, 2, empty);
  other_start.doc["schedule"]["start_at_unix_ns"] = 6;
  EXPECT_NE(refusal({shard_with(0, 2, empty), other_start}).find("another --start-at"),
            std::string::npos);
}

// Shards judged by other rules, or of another run, are not one run's: the refusal names the
// first field of the workload that differs, or the run ids.
TEST(merged_checks, order_shards_refuses_another_workload_or_run) {
  const auto empty = ordered_json::array();
  auto stricter = shard_with(1, 2, empty);
  stricter.doc["workload"]["digest"] = std::string(64, 'd');
  stricter.doc["workload"]["fields"]["expect_status"] = "200";
  EXPECT_EQ(refusal({shard_with(0, 2, empty), stricter}),
            "shard-1.json (shard 1) differs from shard-0.json (shard 0) in workload: "
            "expect_status \"200\" vs \"200-399\"");
  auto edited = shard_with(1, 2, empty);
  edited.doc["workload"]["digest"] = std::string(64, 'd');
  EXPECT_NE(refusal({shard_with(0, 2, empty), edited}).find("in workload: digest \"dddd"),
            std::string::npos);
  auto other_run = shard_with(1, 2, empty);
  other_run.doc["run_id"] = "run-b";
  EXPECT_EQ(refusal({shard_with(0, 2, empty), other_run}),
            "shard-1.json is of run 'run-b', shard-0.json of run 'run-a': not one run (give every "
            "shard the same --run-id or --start-at)");
  auto older = shard_with(1, 2, empty);
  older.doc.erase("workload");
  EXPECT_NE(refusal({shard_with(0, 2, empty), older}).find("older than schema_version 2"),
            std::string::npos);
  auto garbled = shard_with(1, 2, empty);
  garbled.doc["workload"]["fields"]["model"] = 7;
  EXPECT_NE(refusal({shard_with(0, 2, empty), garbled}).find("not a punctual run report"),
            std::string::npos);
}

// A report is a file anyone may edit: a check without a name is a lookup of what is not there,
// which throws (report/json.hpp) instead of asserting, and so becomes a refusal.
TEST(merged_checks, a_check_without_its_name_is_a_json_error_not_a_crash) {
  auto nameless = check_json("start_lag", 7e5, 1e8, true, "");
  nameless.erase("name");
  const std::vector<shard_report> shards{shard_with(0, 1, ordered_json::array({nameless}))};
  punctual::analysis::validity_report report;
  EXPECT_THROW(punctual::report::carry_shard_checks(shards, report), nlohmann::json::exception);
}

}  // namespace

// Shard 0 spoke h2 on 2 connections, shard 1 fell back to HTTP/1.1 on 3: the merged run names
// what most connections spoke and adds the HTTP/2 counts; the stream limit stays a setting.
TEST(merged_protocol, connections_and_h2_counts_add_and_the_majority_names_it) {
  const auto empty = ordered_json::array();
  std::vector<shard_report> shards{shard_with(0, 2, empty), shard_with(1, 2, empty)};
  shards[0].doc["protocol"] = {
      {"name", "h2"},
      {"requested", "auto"},
      {"connections", {{"h2", 2}, {"http/1.1", 0}}},
      {"h2", {{"max_streams", 100}, {"unprocessed", 4}, {"rst_codes", {{"CANCEL", 3}}}}}};
  shards[1].doc["protocol"] = {{"name", "http/1.1"},
                               {"requested", "auto"},
                               {"connections", {{"h2", 0}, {"http/1.1", 3}}},
                               {"h2",
                                {{"max_streams", 100},
                                 {"unprocessed", 1},
                                 {"rst_codes", {{"CANCEL", 2}, {"REFUSED_STREAM", 5}}}}}};
  ordered_json doc = shards[0].doc;
  punctual::report::merge_protocol(shards, doc);
  const ordered_json& p = doc["protocol"];
  EXPECT_EQ(p["name"], "http/1.1");
  EXPECT_EQ(p["requested"], "auto");
  EXPECT_EQ(p["connections"]["h2"], 2);
  EXPECT_EQ(p["connections"]["http/1.1"], 3);
  EXPECT_EQ(p["h2"]["max_streams"], 100);
  EXPECT_EQ(p["h2"]["unprocessed"], 5);
  EXPECT_EQ(p["h2"]["rst_codes"]["CANCEL"], 5);
  EXPECT_EQ(p["h2"]["rst_codes"]["REFUSED_STREAM"], 5);

  shards[1].doc["protocol"]["connections"] = {{"h2", 4}, {"http/1.1", 0}};
  doc = shards[0].doc;
  punctual::report::merge_protocol(shards, doc);
  EXPECT_EQ(doc["protocol"]["name"], "h2");
}

// Claims cross workers, never shards: the shards' claims and steal add up; the longest pause is
// the longest of any shard's; a steal no shard's kernel reported stays absent.
TEST(merged_generator, claims_and_steal_add_up_and_the_longest_pause_is_kept) {
  const auto empty = ordered_json::array();
  std::vector<shard_report> shards{shard_with(0, 2, empty), shard_with(1, 2, empty)};
  shards[0].doc["generator"] = {{"sent_for_others", 3},
                                {"claimed_away", 3},
                                {"longest_wake_lateness_ns", 5200000},
                                {"host_steal_ns", 41000000}};
  shards[1].doc["generator"] = {{"sent_for_others", 4},
                                {"claimed_away", 4},
                                {"longest_wake_lateness_ns", 900000},
                                {"host_steal_ns", 9000000}};
  for (auto& s : shards) s.doc["model"] = {{"threads", 2}};
  ordered_json doc = shards[0].doc;
  punctual::report::merge_generator(shards, doc);
  EXPECT_EQ(doc["generator"]["sent_for_others"], 7);
  EXPECT_EQ(doc["generator"]["claimed_away"], 7);
  EXPECT_EQ(doc["generator"]["longest_wake_lateness_ns"], 5200000);
  EXPECT_EQ(doc["generator"]["host_steal_ns"], 50000000);

  for (auto& s : shards) s.doc["generator"].erase("host_steal_ns");
  doc = shards[0].doc;
  doc["generator"]["host_steal_ns"] = 1;  // whatever the template held
  punctual::report::merge_generator(shards, doc);
  EXPECT_FALSE(doc["generator"].contains("host_steal_ns"));
}

// The threads add up; where they came from and whether they were pinned is kept as far as every
// shard says it: one origin, else "mixed"; pinned only when every shard was.
TEST(merged_generator, threads_add_up_and_their_origin_is_kept_only_when_shared) {
  const auto empty = ordered_json::array();
  std::vector<shard_report> shards{shard_with(0, 2, empty), shard_with(1, 2, empty)};
  shards[0].doc["model"] = {{"threads", 2}};
  shards[1].doc["model"] = {{"threads", 4}};
  for (auto& s : shards) s.doc["generator"] = {{"threads_from", "cpus_allowed"}, {"pinned", true}};
  const auto merged = [&shards] {
    ordered_json doc = shards[0].doc;
    punctual::report::merge_generator(shards, doc);
    return doc["generator"];
  };
  EXPECT_EQ(merged()["threads"], 6);
  EXPECT_EQ(merged()["threads_from"], "cpus_allowed");
  EXPECT_EQ(merged()["pinned"], true);

  shards[1].doc["generator"] = {{"threads_from", "flag"}, {"pinned", false}};
  EXPECT_EQ(merged()["threads_from"], "mixed");
  EXPECT_EQ(merged()["pinned"], false);

  // A shard written before these fields: the merge cannot say, so it leaves them out.
  shards[1].doc["generator"] = ordered_json::object();
  EXPECT_EQ(merged()["threads"], 6);
  EXPECT_FALSE(merged().contains("threads_from"));
  EXPECT_FALSE(merged().contains("pinned"));
}
