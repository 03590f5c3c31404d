#include <gtest/gtest.h>

#include "analysis/attribution.hpp"

namespace punctual::analysis {
namespace {

using record::component;

record::second_views with(std::int64_t response, std::int64_t lag, std::int64_t queue,
                          std::int64_t connect, std::int64_t service) {
  record::second_views s;
  for (int i = 0; i < 100; ++i) {
    s.response_time.record(response);
    s[component::send_lag].record(lag);
    s[component::queue_wait].record(queue);
    s[component::connect_time].record(connect);
    s[component::service_time].record(service);
  }
  return s;
}

TEST(attribution, the_largest_p99_names_the_cause) {
  EXPECT_EQ(attribute(with(300'000'000, 0, 0, 0, 300'000'000)).cause, "server");
  EXPECT_EQ(attribute(with(500'000'000, 0, 480'000'000, 0, 20'000'000)).cause,
            "queueing behind busy connections");
  EXPECT_EQ(attribute(with(90'000'000, 0, 0, 80'000'000, 10'000'000)).cause, "connecting");
  EXPECT_EQ(attribute(with(90'000'000, 80'000'000, 0, 0, 10'000'000)).cause, "the generator");
}

TEST(attribution, send_lag_within_the_validity_allowance_is_not_named) {
  // 60 us of send lag beside 50 us of service: noise, not the generator's failure.
  const attribution a = attribute(with(120'000, 60'000, 0, 0, 50'000));
  EXPECT_EQ(a.component, component::service_time);
  EXPECT_EQ(a.send_lag_allowance_ns, 1e6);
  // Above 10% of a long response time's p99, it is named.
  EXPECT_EQ(attribute(with(2'000'000'000, 250'000'000, 0, 0, 200'000'000)).component,
            component::send_lag);
  // Below 10% of it (200 ms here), the next largest component is named, however small.
  EXPECT_EQ(attribute(with(2'000'000'000, 150'000'000, 0, 0, 100'000'000)).component,
            component::service_time);
  EXPECT_EQ(attribute(with(2'000'000'000, 190'000'000, 0, 1'000'000, 0)).component,
            component::connect_time);
}

TEST(attribution, queue_wait_beside_a_late_generator_is_the_generators) {
  // A starved worker: late to send and late to read the responses that free its connections.
  EXPECT_EQ(attribute(with(450'000'000, 214'000'000, 228'000'000, 0, 1'200'000)).cause,
            "the generator");
  // On time, the same queue wait is queueing.
  EXPECT_EQ(attribute(with(450'000'000, 200'000, 228'000'000, 0, 1'200'000)).cause,
            "queueing behind busy connections");
  // A server slower than the late generator is still named.
  EXPECT_EQ(attribute(with(900'000'000, 214'000'000, 228'000'000, 0, 600'000'000)).cause, "server");
}

TEST(attribution, ties_go_to_the_server) {
  EXPECT_EQ(attribute(with(10'000'000, 0, 5'000'000, 0, 5'000'000)).component,
            component::service_time);
}

// Queue wait behind connections the server held (a stall as long as the queueing, and enough
// connections for the load) is the server's doing; behind too few connections, the generator's.
TEST(attribution, queueing_behind_connections_the_server_held_names_the_server) {
  const auto s = with(990'000'000, 40'000, 986'000'000, 0, 200'000);
  EXPECT_EQ(attribute(s).cause, "queueing behind busy connections");
  connection_holders held{10, 1e9, false};
  attribution a = attribute(s, &held);
  EXPECT_TRUE(a.held_by_server);
  EXPECT_EQ(a.cause, "server");
  EXPECT_EQ(a.component, component::queue_wait);
  held.too_few_for_load = true;  // -c could not carry the load: raising it is the remedy
  a = attribute(s, &held);
  EXPECT_FALSE(a.held_by_server);
  EXPECT_EQ(a.cause, "queueing behind busy connections");
  held = {10, 0.4e9, false};  // no response took as long as half the queueing
  EXPECT_FALSE(attribute(s, &held).held_by_server);
}

}  // namespace
}  // namespace punctual::analysis
