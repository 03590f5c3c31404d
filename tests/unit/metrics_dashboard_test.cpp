// deploy/grafana/punctual.json: valid JSON whose every query names only series the registry
// exports (taken from the registry itself, not from a list kept here), and the registry
// emits exactly the families it declares.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "metrics/registry.hpp"
#include "report/json.hpp"

namespace punctual::metrics {
namespace {

std::set<std::string> exported_series() {
  std::set<std::string> names;
  for (const auto& f : registry::families()) {
    if (f.type != metric_type::histogram) {
      names.insert(f.name);
      continue;
    }
    for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(f.name + suffix);
  }
  return names;
}

void collect_queries(const nlohmann::json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string()) out.push_back(value.get<std::string>());
      collect_queries(value, out);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) collect_queries(v, out);
  }
}

TEST(metrics_dashboard, names_only_exported_series) {
  std::ifstream in(std::string(PUNCTUAL_TEST_DATA) + "/../../deploy/grafana/punctual.json");
  ASSERT_TRUE(in) << "no dashboard";
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str());  // throws on invalid JSON
  std::vector<std::string> queries;
  collect_queries(doc, queries);
  ASSERT_GE(queries.size(), 10u);
  const std::set<std::string> exported = exported_series();
  std::set<std::string> used;
  const std::regex series(R"(punctual_[a-z_]+)");
  for (const auto& q : queries) {
    for (auto it = std::sregex_iterator(q.begin(), q.end(), series); it != std::sregex_iterator();
         ++it) {
      EXPECT_TRUE(exported.contains(it->str())) << it->str() << " in " << q;
      used.insert(it->str());
    }
    // A percentile comes from a histogram's buckets.
    if (q.find("histogram_quantile") != std::string::npos) {
      EXPECT_NE(q.find("_bucket"), std::string::npos) << q;
    }
  }
  // What the dashboard is for: rate, outcomes, latency, the generator's lag, sessions.
  for (const char* needed :
       {"punctual_requests_total", "punctual_response_time_seconds_bucket",
        "punctual_send_lag_seconds_bucket", "punctual_queue_wait_seconds_bucket",
        "punctual_sessions_total", "punctual_target_rate_per_second", "punctual_info"})
    EXPECT_TRUE(used.contains(needed)) << needed;
}

TEST(metrics_dashboard, a_snapshot_holds_the_declared_families_in_order) {
  run::config c;
  registry r(c);
  const snapshot s = r.build(record::live_counts{}, {}, {});
  const auto declared = registry::families();
  ASSERT_EQ(s.families.size(), declared.size());
  for (std::size_t i = 0; i < declared.size(); ++i) {
    EXPECT_EQ(s.families[i].name, declared[i].name);
    EXPECT_EQ(s.families[i].type, declared[i].type);
  }
  const std::set<std::string> exported = exported_series();
  for (const auto& x : s.samples) EXPECT_TRUE(exported.contains(x.name)) << x.name;
}

}  // namespace
}  // namespace punctual::metrics
