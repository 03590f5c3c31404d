// The remote-write sink with a fake transport: what reaches the endpoint, in which order, and
// what the counts say at the end. No timing is asserted (that is the integration test's).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metrics/proto/remote.pb.h"
#include "metrics/remote_write.hpp"
#include "metrics/write_request.hpp"

namespace {

using namespace punctual::metrics;
using namespace std::chrono_literals;

// Answers every request with `status` and keeps each one's timestamps, decoded.
class recording_transport final : public push_transport {
 public:
  recording_transport(int status, std::vector<std::vector<std::int64_t>>& seen)
      : status_(status), seen_(seen) {}
  post_result post(const std::string& body, std::chrono::steady_clock::time_point,
                   const std::atomic<bool>&) override {
    std::string raw;
    punctual::prompb::WriteRequest r;
    if (!snappy_uncompress(body, raw) || !r.ParseFromString(raw)) return {0, "bad body"};
    std::vector<std::int64_t> stamps;
    for (const auto& p : r.timeseries(0).samples()) stamps.push_back(p.timestamp());
    seen_.push_back(stamps);
    return {status_, status_ ? "" : "refused"};
  }

 private:
  int status_;
  std::vector<std::vector<std::int64_t>>& seen_;
};

snapshot at_ms(std::int64_t ms) {
  snapshot s;
  s.taken = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
  s.samples = {{"punctual_requests_total", {{"outcome", "ok"}}, 1}};
  return s;
}

remote_write_options options(nanoseconds final_wait) {
  remote_write_options o;
  o.url = "http://127.0.0.1:1/api/v1/write";
  o.labels = {{"run_id", "r"}, {"shard", "0"}};
  o.final_wait = final_wait;
  return o;
}

// Publishes each timestamp (the last with finish()) into a sink whose endpoint accepts all;
// returns every timestamp the endpoint received, in order, and the final counts.
std::pair<std::vector<std::int64_t>, push_stats> pushed(const std::vector<std::int64_t>& ms) {
  std::vector<std::vector<std::int64_t>> seen;
  remote_write w(options(10s), std::make_unique<recording_transport>(204, seen));
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (i + 1 < ms.size()) {
      w.publish(at_ms(ms[i]));
    } else {
      w.finish(at_ms(ms[i]));
    }
  }
  const push_stats s = w.close();
  std::vector<std::int64_t> all;
  for (const auto& request : seen) all.insert(all.end(), request.begin(), request.end());
  return {all, s};
}

TEST(remote_write, pushes_every_snapshot_in_time_order_and_the_final_one_last) {
  const auto [all, s] = pushed({1'000, 2'000, 3'000});
  EXPECT_EQ(all, (std::vector<std::int64_t>{1'000, 2'000, 3'000}));
  EXPECT_TRUE(s.final_pushed);
  EXPECT_EQ(s.snapshots, 3U);
  EXPECT_EQ(s.dropped, 0U);
  EXPECT_EQ(s.url, "http://127.0.0.1:1/api/v1/write");
}

TEST(remote_write, a_clock_that_steps_back_still_gives_increasing_timestamps) {
  EXPECT_EQ(pushed({5'000, 4'000, 5'000}).first, (std::vector<std::int64_t>{5'000, 5'001, 5'002}));
}

TEST(remote_write, a_dead_endpoint_is_counted_and_never_fatal) {
  std::vector<std::vector<std::int64_t>> seen;
  remote_write w(options(0s), std::make_unique<recording_transport>(0, seen));
  w.publish(at_ms(1'000));
  w.finish(at_ms(2'000));
  const push_stats s = w.close();
  EXPECT_FALSE(s.final_pushed);
  EXPECT_EQ(s.requests, 0U);
  EXPECT_EQ(s.dropped, 2U) << "what was never accepted is dropped and counted";
  EXPECT_EQ(s.snapshots, 2U);
}

}  // namespace
