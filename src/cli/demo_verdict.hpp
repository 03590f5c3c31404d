// What `punctual demo` concludes from its table: how far each measured column is from the truth
// at p90 and p99, and whether the open run met the truth tests' tolerance. Pure (numbers in,
// sentences out), so the conclusions are computed, not asserted, and can be tested without a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace punctual::cli {

// The truth tests' contract (tests/integration/truth_lib.py, within_tolerance): a truth of at
// least 1 ms must be measured within [0.99 * truth - 1 ms, 1.05 * truth + 5 ms]; a
// sub-millisecond truth must be measured sub-millisecond.
bool within_truth_tolerance(std::int64_t truth_ns, std::int64_t measured_ns) noexcept;

// One column of the demo's table, reduced to the two percentiles the verdict compares.
struct demo_column {
  std::string name;
  std::int64_t p90_ns = 0;
  std::int64_t p99_ns = 0;
};

struct demo_columns {
  demo_column closed;         // closed model, as wrk measures
  demo_column reconstructed;  // the same with expected-interval reconstruction
  demo_column open;           // punctual's open model
  demo_column truth;          // from the server's stall log
};

struct demo_verdict {
  std::vector<std::string> lines;  // one per measured column, then the conclusions
  bool passed = false;             // the open column is within tolerance at p90 and p99
  std::string failure;             // when not passed: one line saying which percentile missed
};

demo_verdict judge_demo(const demo_columns& columns);

// Nanoseconds as milliseconds with two decimals, as the demo's table and verdict print them.
std::string ms(std::int64_t ns);

}  // namespace punctual::cli
