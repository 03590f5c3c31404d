// A test's view of every request, one record at a time: reports hold histograms, and the
// simulation's exact checks (tests/sim) need each request's own instants. Null in a real run.
#pragma once

#include <chrono>
#include <cstdint>

#include "record/outcome.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

class request_tap {
 public:
  // Attempt `t` goes out now, on the worker's connection `connection` (before its bytes are
  // framed: `t.sent` is set).
  virtual void on_sent(std::uint32_t worker, const record::request_times& t,
                       std::uint32_t connection) = 0;
  // Attempt `t` failed for `why` at `at` and will be retried.
  virtual void on_retry(std::uint32_t worker, const record::request_times& t,
                        std::chrono::nanoseconds at, record::retry_cause why) = 0;
  // The request's final outcome, recorded at `at` (what its response time runs to).
  virtual void on_final(std::uint32_t worker, const record::request_times& t, record::outcome o,
                        std::chrono::nanoseconds at) = 0;

 protected:
  ~request_tap() = default;
};

}  // namespace punctual::engine
