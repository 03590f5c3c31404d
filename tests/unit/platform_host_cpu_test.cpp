// The host's CPUs as the kernel tells them: /proc/stat's steal, the CPUs the process may use, and
// the names its threads show there.
#include <gtest/gtest.h>
#include <pthread.h>

#include <thread>

#include "platform/host_cpu.hpp"

namespace punctual::platform {
namespace {

using std::chrono::milliseconds;

TEST(host_cpu, steal_is_the_eighth_value_of_the_aggregate_cpu_line) {
  // user nice system idle iowait irq softirq steal guest guest_nice, at 100 ticks a second
  const char* stat =
      "cpu  4705 150 1120 16250 520 0 30 41 0 0\n"
      "cpu0 2000 70 500 8000 260 0 15 7 0 0\n";
  EXPECT_EQ(parse_steal(stat, 100), milliseconds(410));
  EXPECT_EQ(parse_steal(stat, 1000), milliseconds(41));
}

TEST(host_cpu, steal_is_absent_where_the_kernel_does_not_report_it) {
  EXPECT_EQ(parse_steal("cpu  4705 150 1120 16250 520 0 30\n", 100), std::nullopt);  // < 2.6.11
  EXPECT_EQ(parse_steal("cpu0 2000 70 500 8000 260 0 15 7 0 0\n", 100), std::nullopt);
  EXPECT_EQ(parse_steal("", 100), std::nullopt);
  EXPECT_EQ(parse_steal("cpu  1 2 3 4 5 6 7 x\n", 100), std::nullopt);
  EXPECT_EQ(parse_steal("cpu  1 2 3 4 5 6 7 8\n", 0), std::nullopt);
}

TEST(host_cpu, the_allowed_cpus_are_listed_in_order) {
  const auto cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  for (std::size_t k = 1; k < cpus.size(); ++k) EXPECT_LT(cpus[k - 1], cpus[k]);
}

// A name longer than the kernel keeps is cut, not refused (pthread_setname_np would refuse it).
TEST(host_cpu, a_thread_name_is_cut_to_the_kernels_fifteen_bytes) {
  std::thread([] {
    name_thread("punctual-w1234567");
    char name[32] = {};
    ASSERT_EQ(pthread_getname_np(pthread_self(), name, sizeof name), 0);
    EXPECT_STREQ(name, "punctual-w12345");
  }).join();
}

// A fine-mode worker asks for short slices so that it takes its CPU as soon as its timer fires.
// Kernels before 6.12 keep no slice of their own and report 0; 6.12 and later report the
// slice given.
TEST(host_cpu, a_thread_can_ask_for_short_slices) {
  std::thread([] {
    const auto granted = request_slice(std::chrono::microseconds(100));
    ASSERT_TRUE(granted.has_value());
    if (granted->count() != 0) {
      EXPECT_EQ(*granted, std::chrono::microseconds(100));
    }
  }).join();
}

}  // namespace
}  // namespace punctual::platform
