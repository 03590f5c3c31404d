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
  // Attempt `t` takes its place on the worker's connection `connection`: its bytes are framed
  // right after this call (`t.sent` is not set yet).
  virtual void on_framing(std::uint32_t worker, const record::request_times& t,
                          std::uint32_t connection) = 0;
  // Attempt `t`'s bytes are written now: `t.sent` is set. Over HTTP/1.1 just after on_framing;
  // over HTTP/2 with the write that carries the turn's frames for its connection.
  virtual void on_sent(std::uint32_t worker, const record::request_times& t) = 0;
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
