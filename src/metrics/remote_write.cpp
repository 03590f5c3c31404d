#include "metrics/remote_write.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "metrics/write_request.hpp"

namespace punctual::metrics {
namespace {

nanoseconds since_epoch(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<nanoseconds>(t.time_since_epoch());
}

}  // namespace

remote_write::remote_write(remote_write_options options, std::unique_ptr<push_transport> transport)
    : options_(std::move(options)),
      transport_(std::move(transport)),
      queue_(options_.policy),
      pusher_([this] { push_loop(); }) {}

remote_write::~remote_write() {
  close();
}

void remote_write::publish(const snapshot& s) {
  add(s, false);
}

void remote_write::finish(const snapshot& s) {
  add(s, true);
}

// The copy is made before the lock, so the pusher is never held up by it. A wall clock that
// stepped back would make a timestamp Prometheus refuses: such a snapshot is stamped 1 ms after
// the previous one instead.
void remote_write::add(const snapshot& s, bool last) {
  snapshot copy = s;
  const std::int64_t ms = timestamp_ms(copy.taken);
  if (ms <= last_ms_) {
    copy.taken = std::chrono::system_clock::time_point(std::chrono::milliseconds(last_ms_ + 1));
  }
  last_ms_ = std::max(ms, last_ms_ + 1);
  {
    const std::lock_guard lock(mutex_);
    if (closing_) return;
    queue_.add(std::move(copy), last);
  }
  wake_.notify_all();
}

// Outside the lock. An exception (memory) fails the push rather than the process.
post_result remote_write::send(const std::vector<snapshot>& batch) {
  try {
    const std::string body = snappy_compress(encode_write_request(batch, options_.labels));
    return transport_->post(
        body, steady::now() + std::chrono::duration_cast<steady::duration>(options_.push_timeout),
        cancel_);
  } catch (const std::exception& e) {
    return {0, std::string("could not send: ") + e.what()};
  }
}

bool remote_write::drained(steady::time_point now) const {
  return queue_.idle() || now >= close_by_ || since_epoch(close_by_) < queue_.due();
}

// The batch in flight is read outside the lock: only this thread changes it (push_queue.hpp).
void remote_write::push_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    const auto now = steady::now();
    if (closing_ && drained(now)) break;
    const auto& batch = queue_.next(since_epoch(now));
    if (batch.empty()) {
      if (queue_.idle()) {
        wake_.wait(lock);
      } else {
        auto until = steady::time_point(std::chrono::duration_cast<steady::duration>(queue_.due()));
        if (closing_) until = std::min(until, close_by_);
        wake_.wait_until(lock, until);
      }
      continue;
    }
    lock.unlock();
    const post_result r = send(batch);
    lock.lock();
    const std::string error =
        r.status == 0 ? r.error : "HTTP " + std::to_string(r.status) + " from the endpoint";
    queue_.settle(verdict_of(r.status), since_epoch(steady::now()), error);
  }
  queue_.abandon();
  ended_ = true;
  wake_.notify_all();
}

push_stats remote_write::close() {
  std::unique_lock lock(mutex_);
  if (!closing_) {
    closing_ = true;
    close_by_ = steady::now() + std::chrono::duration_cast<steady::duration>(options_.final_wait);
    wake_.notify_all();
    // A request under way when the wait is over is cancelled (within the transport's slice).
    if (!wake_.wait_until(lock, close_by_, [this] { return ended_; })) cancel_ = true;
  }
  lock.unlock();
  if (pusher_.joinable()) pusher_.join();
  lock.lock();
  push_stats stats = queue_.stats();
  stats.url = options_.url;
  return stats;
}

}  // namespace punctual::metrics
