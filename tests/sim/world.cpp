#include "world.hpp"

#include <algorithm>

namespace punctual::sim {

world::world(std::uint64_t seed, nanoseconds origin) : now_(origin), random_(seed) {}

std::uint64_t world::at(nanoseconds at, std::function<void()> f) {
  const std::uint64_t number = next_number_++;
  events_.push({std::max(at, now_), number, std::move(f)});
  return number;
}

bool world::is_cancelled(std::uint64_t number) noexcept {
  const auto it = std::find(cancelled_.begin(), cancelled_.end(), number);
  if (it == cancelled_.end()) return false;
  *it = cancelled_.back();
  cancelled_.pop_back();
  return true;
}

bool world::step() {
  while (!events_.empty()) {
    event e = std::move(const_cast<event&>(events_.top()));
    events_.pop();
    if (!cancelled_.empty() && is_cancelled(e.number)) continue;
    // Not before now: time the set-up spent outside any event may have passed an event's instant.
    now_ = std::max(now_, e.at);
    spent_ = nanoseconds{0};
    running_ = true;
    e.run();
    running_ = false;
    spent_ = nanoseconds{0};
    return true;
  }
  return false;
}

bool world::run_until(const std::function<bool()>& done, nanoseconds limit) {
  while (!done()) {
    if (events_.empty() || events_.top().at > limit) {
      now_ = std::max(now_, limit);
      return false;
    }
    step();
  }
  return true;
}

}  // namespace punctual::sim
