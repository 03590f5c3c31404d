// A worker's retries in backoff (retry.hpp says when they fall due). Its own wait in a min-heap
// on their due instants; with a claim board (claims.hpp) each also waits on its shelf
// (retry_shelf.hpp), where another worker claims it once it is due past the steal threshold, and
// this worker claims the others' in turn. Whoever sends a retry owns its response, its deadline,
// its later retries and its recording; its backoff was drawn from the request's index, so it is
// the same whoever sends it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/claims.hpp"
#include "engine/pacer.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

class retry_home {
 public:
  // `claims`: the shard's claim board when it has room for retries, else null.
  retry_home(std::size_t reserve, const pacer& pacer, claim_board* claims, std::uint32_t worker)
      : pacer_(pacer), board_(claims), worker_(worker) {
    if (reserve) heap_.reserve(reserve);
  }

  bool empty() const noexcept { return heap_.empty(); }
  // When one of its own falls due, or one of another's seen waiting becomes claimable.
  nanoseconds next_due() const noexcept {
    return std::min(heap_.empty() ? nanoseconds::max() : heap_.front().t.due, recheck_at_);
  }

  void add(const record::request_times& t) {
    const retry_shelf::ticket k =
        board_ ? board_->retries(worker_).shelve(t) : retry_shelf::ticket{};
    heap_.push_back({t, k});
    std::push_heap(heap_.begin(), heap_.end(), due_later);
    publish();
  }

  // Hands `admit` each of its own retries due by now that no other worker claimed, then each
  // of the others' it claims.
  template <typename Admit>
  void take_due(nanoseconds now, record::recorder& r, Admit&& admit) {
    while (!heap_.empty() && heap_.front().t.due <= now) {
      entry e = pop();
      if (taken_back(e, r)) admit(e.t);
    }
    if (!board_) return;
    publish();
    claim(now, r, admit);
  }

  // The run is over: `end` gets each of its own still waiting that no other worker claimed.
  template <typename End>
  void clear(record::recorder& r, End&& end) {
    while (!heap_.empty()) {
      entry e = pop();
      if (taken_back(e, r)) end(e.t);
    }
    publish();
  }

 private:
  struct entry {
    record::request_times t;
    retry_shelf::ticket ticket;
  };
  // std::push_heap/pop_heap keep the greatest on top; this puts the earliest due there.
  static bool due_later(const entry& a, const entry& b) noexcept { return a.t.due > b.t.due; }

  entry pop() noexcept {
    std::pop_heap(heap_.begin(), heap_.end(), due_later);
    entry e = heap_.back();
    heap_.pop_back();
    return e;
  }
  // False when another worker claimed it first: its outcome is that worker's.
  bool taken_back(const entry& e, record::recorder& r) noexcept {
    if (!board_ || board_->retries(worker_).take_back(e.ticket)) return true;
    r.on_claimed_out(e.t.intended);
    return false;
  }
  nanoseconds claimable_from(nanoseconds due) const noexcept {
    return pacer_.send_instant(due) + board_->threshold();
  }
  void publish() noexcept {
    if (!board_) return;
    const nanoseconds at = heap_.empty() ? nanoseconds::max() : claimable_from(heap_.front().t.due);
    if (at == published_) return;
    published_ = at;
    board_->publish_retries(worker_, at);
  }

  template <typename Admit>
  void claim(nanoseconds now, record::recorder& r, Admit& admit) {
    recheck_at_ = nanoseconds::max();
    for (std::uint32_t k = 0; k < board_->workers(); ++k) {
      if (k == worker_) continue;
      if (const nanoseconds hint = board_->retries_claimable_at(k); hint > now) {
        if (board_->overdue(k, now)) recheck_at_ = std::min(recheck_at_, hint);
        continue;
      }
      const nanoseconds next = board_->retries(k).claim_due(
          now, [this](nanoseconds due) { return claimable_from(due); },
          [&](record::request_times t) {
            r.on_claimed_in(t.intended);
            admit(t);
          });
      recheck_at_ = std::min(recheck_at_, next);
    }
  }

  const pacer& pacer_;
  claim_board* board_;
  std::uint32_t worker_;
  std::vector<entry> heap_;
  nanoseconds published_ = nanoseconds::max();
  nanoseconds recheck_at_ = nanoseconds::max();
};

}  // namespace punctual::engine
