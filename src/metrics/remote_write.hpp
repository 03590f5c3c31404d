// Remote write as a metrics::sink: publish() and finish() copy the snapshot into a bounded queue
// and return (they run on the collector thread); a thread of its own, the pusher, encodes and
// sends (push_queue.hpp has the order, retry and drop rules, http_push.hpp the connection). At
// the run's end close() waits for the final snapshot's push, at most `final_wait`, then gives up
// what is left, counted. No worker ever waits for the endpoint.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics/http_push.hpp"
#include "metrics/push_queue.hpp"
#include "metrics/push_stats.hpp"
#include "metrics/series.hpp"

namespace punctual::metrics {

struct remote_write_options {
  std::string url;            // for the report
  std::vector<label> labels;  // added to every series: run_id, shard
  push_policy policy;
  nanoseconds push_timeout = std::chrono::seconds(2);  // one request, connect to status line
  nanoseconds final_wait = std::chrono::seconds(2);    // close(): the most the run's end waits
};

class remote_write final : public sink {
 public:
  remote_write(remote_write_options options, std::unique_ptr<push_transport> transport);
  ~remote_write() override;
  remote_write(const remote_write&) = delete;
  remote_write& operator=(const remote_write&) = delete;

  void publish(const snapshot& s) override;
  void finish(const snapshot& s) override;

  // Waits until the queue is empty, or `final_wait` has passed, or the next try would come
  // after it; drops what is left and ends the pusher. The counts are final after it. Idempotent.
  push_stats close();

 private:
  using steady = std::chrono::steady_clock;

  void add(const snapshot& s, bool last);
  void push_loop();
  post_result send(const std::vector<snapshot>& batch);
  bool drained(steady::time_point now) const;  // under mutex_, once closing_

  remote_write_options options_;
  std::unique_ptr<push_transport> transport_;
  std::int64_t last_ms_ = 0;  // the newest timestamp handed on (collector thread only)

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  push_queue queue_;
  bool closing_ = false;
  bool ended_ = false;
  steady::time_point close_by_{};
  std::atomic<bool> cancel_{false};
  std::thread pusher_;
};

}  // namespace punctual::metrics
