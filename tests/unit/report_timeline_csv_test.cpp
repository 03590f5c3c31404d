#include <gtest/gtest.h>

#include <sstream>

#include "report/timeline_csv.hpp"

namespace punctual::report {
namespace {

nlohmann::ordered_json row(int second) {
  nlohmann::ordered_json latency{
      {"count", 3}, {"p50_ns", 1'500'000}, {"p99_ns", 2'000'000}, {"max_ns", 2'500'000}};
  return {{"second", second},
          {"offset_s", second * 1.0},
          {"unix_s", 1764550800.25 + second},
          {"planned", 10},
          {"sent", 9},
          {"attempts", 11},
          {"completed", 8},
          {"ok", 7},
          {"errors", 1},
          {"timeouts", 1},
          {"dropped", 0},
          {"queue_depth_max", 2},
          {"response_time", latency},
          {"service_time", latency},
          {"send_lag_p99_ns", 1234},
          {"queue_wait_p99_ns", 0}};
}

TEST(timeline_csv, a_header_and_a_row_per_second_with_crlf) {
  nlohmann::ordered_json report{
      {"series", {{"interval_ns", 1'000'000'000}, {"per_second", {row(0), row(1)}}}}};
  std::ostringstream out;
  write_timeline_csv(out, report);
  const std::string text = out.str();
  EXPECT_EQ(
      text.find(
          "offset_s,time_utc,planned,sent,completed,ok,errors,timeouts,dropped,response_p50_ms"),
      0u);
  EXPECT_NE(text.find("\r\n0,2025-12-01T01:00:00.250Z,10,9,8,7,1,1,0,1.500,2.000,2.500,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\r\n1,2025-12-01T01:00:01.250Z,"), std::string::npos) << text;
  EXPECT_NE(text.find(",0.001,0.000,11\r\n"), std::string::npos) << text;
  std::size_t lines = 0;
  for (std::size_t i = text.find("\r\n"); i != std::string::npos; i = text.find("\r\n", i + 2))
    ++lines;
  EXPECT_EQ(lines, 3u);
}

TEST(timeline_csv, a_report_without_a_series_gets_the_header_only) {
  std::ostringstream out;
  write_timeline_csv(out, nlohmann::ordered_json{{"schema_version", 1}});
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

}  // namespace
}  // namespace punctual::report
