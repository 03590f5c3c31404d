// The simulation's tests: GoogleTest's main, with the histograms' pages kept for reuse.
#include <gtest/gtest.h>

#include "punctual/histogram/histogram.hpp"

int main(int argc, char** argv) {
  // Virtual seconds pass hundreds of times faster than real ones, so handing each second's pages
  // back to the kernel and faulting them in again (docs/design.md, "Memory") took a third of the
  // simulation's CPU. sim_memory_test, which checks that policy, sets it back for its run.
  punctual::hdr::set_page_policy(punctual::hdr::page_policy::keep_and_zero);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
