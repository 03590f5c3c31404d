// A worker's retries in backoff where other workers can claim them (docs/design.md, "Claims"):
// a retry that falls due while its worker is paused is sent by another, like a due request of
// the schedule. Each retry waits in a cell with one claim word; whoever moves the word from
// "waiting" to "taken" (its owner at the due instant, or a claimer past the steal threshold)
// sends it, and the other's compare-and-swap fails, so a retry goes out once. The word carries
// the cell's generation, so a cell freed and filled again is never mistaken for the one a
// claimer saw. The owner writes a cell only while it is free; a claimer reads it only while it
// holds it taken, and frees it after: no byte is ever read while it is written.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "record/recorder.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

class retry_shelf {
 public:
  // What the owner keeps of a shelved retry to take it back: its cell and generation.
  struct ticket {
    std::uint32_t cell = none;
    std::uint32_t generation = 0;
  };
  static constexpr std::uint32_t none = ~std::uint32_t{0};

  // Before the run: room for `cells` retries waiting at once (more wait in the owner's private
  // heap, unclaimable).
  void reserve(std::uint32_t cells) {
    cells_ = std::make_unique<cell[]>(cells);
    free_.reserve(cells);
    returning_.reserve(cells);
    for (std::uint32_t k = cells; k-- > 0;) free_.push_back(k);
  }

  // By the owner: puts `t` in a free cell, claimable from now on; a ticket with no cell when
  // every cell is taken.
  ticket shelve(const record::request_times& t) noexcept {
    if (free_.empty()) reclaim();
    if (free_.empty()) return {};
    const std::uint32_t k = free_.back();
    free_.pop_back();
    cell& c = cells_[k];
    const std::uint32_t g = generation_of(c.word.load(std::memory_order_relaxed)) + 1;
    c.times = t;
    c.due.store(t.due.count(), std::memory_order_relaxed);
    c.word.store(word_of(g, waiting), std::memory_order_release);
    if (k >= used_.load(std::memory_order_relaxed)) used_.store(k + 1, std::memory_order_release);
    return {k, g};
  }

  // By the owner: takes its retry back to send it; false when another worker claimed it.
  bool take_back(ticket k) noexcept {
    if (k.cell == none) return true;
    cell& c = cells_[k.cell];
    std::uint64_t expected = word_of(k.generation, waiting);
    if (c.word.compare_exchange_strong(expected, word_of(k.generation, vacant),
                                       std::memory_order_acq_rel, std::memory_order_acquire)) {
      free_.push_back(k.cell);
      return true;
    }
    // The claimer frees the cell once it has copied the retry out; until then it waits here.
    returning_.push_back(k.cell);
    return false;
  }

  // By another worker: claims every waiting retry with `ready(due) <= now`, and hands each to
  // `claimed`. Returns the earliest `ready` of those still waiting (nanoseconds::max(): none).
  template <typename Ready, typename Claimed>
  nanoseconds claim_due(nanoseconds now, Ready&& ready, Claimed&& claimed) {
    nanoseconds next = nanoseconds::max();
    const std::uint32_t used = used_.load(std::memory_order_acquire);
    for (std::uint32_t k = 0; k < used; ++k) {
      cell& c = cells_[k];
      std::uint64_t w = c.word.load(std::memory_order_acquire);
      if (state_of(w) != waiting) continue;
      const nanoseconds at = ready(nanoseconds{c.due.load(std::memory_order_relaxed)});
      if (at > now) {
        next = std::min(next, at);
        continue;
      }
      if (!c.word.compare_exchange_strong(w, word_of(generation_of(w), taken),
                                          std::memory_order_acq_rel, std::memory_order_acquire))
        continue;
      record::request_times t = c.times;
      c.word.store(word_of(generation_of(w), vacant), std::memory_order_release);
      claimed(t);
    }
    return next;
  }

 private:
  enum state : std::uint64_t { vacant = 0, waiting = 1, taken = 2 };
  static std::uint64_t word_of(std::uint32_t generation, state s) noexcept {
    return (std::uint64_t{generation} << 2) | s;
  }
  static std::uint32_t generation_of(std::uint64_t w) noexcept {
    return static_cast<std::uint32_t>(w >> 2);
  }
  static std::uint64_t state_of(std::uint64_t w) noexcept { return w & 3; }

  // Cells claimers have freed since the owner found them claimed go back on the free list.
  void reclaim() noexcept {
    auto it = std::partition(returning_.begin(), returning_.end(), [this](std::uint32_t k) {
      return state_of(cells_[k].word.load(std::memory_order_acquire)) != vacant;
    });
    free_.insert(free_.end(), it, returning_.end());
    returning_.erase(it, returning_.end());
  }

  struct cell {
    std::atomic<std::uint64_t> word{0};
    std::atomic<std::int64_t> due{0};
    record::request_times times;
  };
  std::unique_ptr<cell[]> cells_;
  std::atomic<std::uint32_t> used_{0};  // cells ever filled: claimers look at these only
  // The owner's own: free cells, and cells found claimed that their claimer may not have freed.
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> returning_;
};

}  // namespace punctual::engine
