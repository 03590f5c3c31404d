// The remote-write body, decoded back with the protobuf library after a snappy round trip: what
// a receiver such as Prometheus reads from it.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "metrics/proto/remote.pb.h"
#include "metrics/write_request.hpp"

namespace {

using namespace punctual::metrics;
using namespace std::chrono_literals;

snapshot at_ms(std::int64_t ms, double ok, double errors) {
  snapshot s;
  s.taken = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
  s.families = {{"punctual_requests_total", metric_type::counter, "requests by outcome"},
                {"punctual_info", metric_type::gauge, "what the run is"}};
  s.samples = {{"punctual_requests_total", {{"outcome", "ok"}, {"name", ""}}, ok},
               {"punctual_requests_total", {{"outcome", "http_error"}, {"name", ""}}, errors},
               {"punctual_info", {{"run_id", "r1"}, {"model", "open"}}, 1}};
  return s;
}

punctual::prompb::WriteRequest decoded(const std::vector<snapshot>& batch) {
  const std::string body =
      snappy_compress(encode_write_request(batch, {{"shard", "2"}, {"run_id", "r1"}}));
  std::string raw;
  EXPECT_TRUE(snappy_uncompress(body, raw));
  punctual::prompb::WriteRequest request;
  EXPECT_TRUE(request.ParseFromString(raw));
  return request;
}

std::vector<std::pair<std::string, std::string>> labels(const punctual::prompb::TimeSeries& ts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& l : ts.labels()) out.emplace_back(l.name(), l.value());
  return out;
}

TEST(write_request, every_series_has_its_labels_sorted_with_run_id_and_shard) {
  const auto r = decoded({at_ms(1'000, 5, 2)});
  ASSERT_EQ(r.timeseries_size(), 3);
  using pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(labels(r.timeseries(0)), (pairs{{"__name__", "punctual_requests_total"},
                                            {"name", ""},
                                            {"outcome", "ok"},
                                            {"run_id", "r1"},
                                            {"shard", "2"}}));
  EXPECT_EQ(labels(r.timeseries(1))[2],
            (std::pair<std::string, std::string>{"outcome", "http_error"}));
  // punctual_info names its run_id itself: it is not added a second time.
  EXPECT_EQ(
      labels(r.timeseries(2)),
      (pairs{{"__name__", "punctual_info"}, {"model", "open"}, {"run_id", "r1"}, {"shard", "2"}}));
  ASSERT_EQ(r.timeseries(1).samples_size(), 1);
  EXPECT_EQ(r.timeseries(1).samples(0).value(), 2);
  EXPECT_EQ(r.timeseries(1).samples(0).timestamp(), 1'000);
}

TEST(write_request, a_batch_puts_each_series_samples_in_time_order) {
  const auto r = decoded({at_ms(1'000, 5, 2), at_ms(2'000, 9, 3), at_ms(3'000, 14, 3)});
  ASSERT_EQ(r.timeseries_size(), 3);
  const auto& ok = r.timeseries(0);
  ASSERT_EQ(ok.samples_size(), 3);
  std::vector<std::pair<std::int64_t, double>> points;
  for (const auto& p : ok.samples()) points.emplace_back(p.timestamp(), p.value());
  EXPECT_EQ(points,
            (std::vector<std::pair<std::int64_t, double>>{{1'000, 5}, {2'000, 9}, {3'000, 14}}));
}

TEST(write_request, carries_each_family_metadata_once) {
  const auto r = decoded({at_ms(1'000, 5, 2), at_ms(2'000, 9, 3)});
  ASSERT_EQ(r.metadata_size(), 2);
  EXPECT_EQ(r.metadata(0).metric_family_name(), "punctual_requests_total");
  EXPECT_EQ(r.metadata(0).type(), punctual::prompb::MetricMetadata::COUNTER);
  EXPECT_EQ(r.metadata(0).help(), "requests by outcome");
  EXPECT_EQ(r.metadata(1).type(), punctual::prompb::MetricMetadata::GAUGE);
}

// Prometheus's field numbers, checked on the bytes: the label's name is field 1 (tag 0x0a) and
// its value field 2 (0x12); a sample's value field 1 as a double (0x09), its timestamp field 2
// as a varint (0x10); a series' labels field 1 and samples field 2 of TimeSeries.
TEST(write_request, bytes_use_prometheus_field_numbers) {
  snapshot s;
  s.taken = std::chrono::system_clock::time_point(std::chrono::milliseconds(5));
  s.samples = {{"a", {}, 0.5}};
  const std::string raw = encode_write_request({s}, {});
  // WriteRequest.timeseries (1, length-delimited) holding a label {__name__, a} and a sample.
  const std::string label = std::string(
      "\x0a\x08__name__\x12\x01"
      "a",
      13);
  const std::string sample = std::string("\x09\x00\x00\x00\x00\x00\x00\xe0\x3f\x10\x05", 11);
  const std::string series = "\x0a" + std::string(1, char(label.size())) + label + "\x12" +
                             std::string(1, char(sample.size())) + sample;
  EXPECT_EQ(raw, "\x0a" + std::string(1, char(series.size())) + series);
}

TEST(write_request, snappy_refuses_what_is_not_snappy) {
  std::string raw;
  EXPECT_FALSE(snappy_uncompress("\xff\xff\xff\xff\xff not snappy", raw));
}

}  // namespace
