// hdr::page_policy: keep_and_zero keeps a histogram's pages instead of handing them back, and
// every slot still reads zero where give_back would have given zeroes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "platform/sanitizers.hpp"
#include "punctual/histogram/histogram.hpp"

namespace punctual::hdr {
namespace {

std::size_t page_bytes() {
  return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t layout_slots() {
  return static_cast<std::size_t>(counts_length_for(histogram_params{}));
}

// Sets the policy for one test and the default back after it.
struct policy_for_test {
  explicit policy_for_test(page_policy p, std::size_t pooled = 1024) { set_page_policy(p, pooled); }
  ~policy_for_test() { set_page_policy(page_policy::give_back); }
};

// Writes slots on three pages and reads one more (the kernel's zero page under it).
void scribble(zeroed_counts& z) {
  const std::size_t n = z.size();
  z[0] = 1;
  z[n / 2] = 7;
  z[n - 1] = 9;
  ASSERT_EQ(z[n / 4], 0);
}

std::size_t nonzero_slots(const zeroed_counts& z) {
  std::size_t found = 0;
  for (std::size_t i = 0; i < z.size(); ++i) found += z[i] != 0;
  return found;
}

TEST(page_policy, a_freed_block_is_taken_again_with_every_slot_zero) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  const policy_for_test policy(page_policy::keep_and_zero);
  EXPECT_EQ(current_page_policy(), page_policy::keep_and_zero);
  const std::int64_t* first = nullptr;
  {
    zeroed_counts z(layout_slots());
    scribble(z);
    first = &z[0];
  }
  zeroed_counts again(layout_slots());
  EXPECT_EQ(&again[0], first) << "the freed block was not taken from the pool";
  EXPECT_EQ(nonzero_slots(again), 0u);
  // Its written pages came along (that is the point: no fault to write them again).
  EXPECT_GE(again.resident_bytes(), 3 * page_bytes());
}

TEST(page_policy, release_zeroes_the_written_pages_and_keeps_them) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  const policy_for_test policy(page_policy::keep_and_zero);
  histogram h;
  for (std::int64_t v = 1; v < 3'600'000'000'000; v *= 2) h.record(v);
  const std::size_t written = h.resident_bytes();
  h.reset_releasing();
  EXPECT_EQ(h.total_count(), 0);
  EXPECT_EQ(h.resident_bytes(), written);
  h.record(1'000);
  EXPECT_EQ(h.total_count(), 1);
  EXPECT_EQ(h.value_at_percentile(100), h.highest_equivalent_value(1'000));
  EXPECT_EQ(h.min(), h.lowest_equivalent_value(1'000));
}

TEST(page_policy, a_full_pool_and_give_back_unmap_as_before) {
#if defined(PUNCTUAL_SANITIZED)
  GTEST_SKIP() << "the sanitizer builds take their counts from calloc, so that ASan sees them";
#endif
  {
    const policy_for_test policy(page_policy::keep_and_zero, 1);
    zeroed_counts a(layout_slots()), b(layout_slots());
    scribble(a);
    scribble(b);
  }  // one block pooled, one unmapped; then give_back unmaps the pooled one
  EXPECT_EQ(current_page_policy(), page_policy::give_back);
  zeroed_counts fresh(layout_slots());
  EXPECT_EQ(fresh.resident_bytes(), 0u);
  scribble(fresh);
  EXPECT_TRUE(fresh.release());
  EXPECT_EQ(fresh.resident_bytes(), 0u);
  EXPECT_EQ(nonzero_slots(fresh), 0u);
}

}  // namespace
}  // namespace punctual::hdr
