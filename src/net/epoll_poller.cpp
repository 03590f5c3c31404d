// The real poller (net/poller.hpp): epoll for the sockets, a second epoll instance holding only
// the wake-up eventfd for the timer sleeps in which responses wait unread (their receive stamps
// date them), and a spin on the clock.
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>
#include <system_error>

#include "net/event_loop.hpp"
#include "net/poller.hpp"

namespace punctual::net {
namespace {

constexpr std::uint64_t wake_token = ~std::uint64_t{0};
constexpr std::uint64_t guard_token = ~std::uint64_t{1};

inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class epoll_poller final : public poller {
 public:
  explicit epoll_poller(const clock& c)
      : clock_(c),
        wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
        guard_fd_(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)) {
    if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    if (guard_fd_ < 0) throw std::system_error(errno, std::generic_category(), "timerfd_create");
    for (auto* loop : {&sockets_, &ticks_}) {
      loop->add(wake_fd_, EPOLLIN, wake_token);
      loop->add(guard_fd_, EPOLLIN, guard_token);
    }
  }
  ~epoll_poller() override {
    ::close(wake_fd_);
    ::close(guard_fd_);
  }

  bool add(int fd, std::uint32_t events, std::uint64_t token) noexcept override {
    return sockets_.add(fd, events, token);
  }
  bool modify(int fd, std::uint32_t events, std::uint64_t token) noexcept override {
    return sockets_.modify(fd, events, token);
  }
  void remove(int fd) noexcept override { sockets_.remove(fd); }

  waited wait(const wait_plan& plan) noexcept override {
    waited w;
    if (plan.timer_sleep.count() > 0) {
      // The wake-up eventfd is level-triggered: a wake() seen here is seen again below.
      ticks_.wait(events_, plan.timer_sleep);
      w.timer_woke = clock_.now();
    }
    if (plan.spin) {
      // A guard that fires or a wake() ends the spin too: the timer and the eventfd cannot be
      // seen without a system call, the guard's instant and the flag can.
      const auto until = [this, due = plan.due] {
        return woken_.load(std::memory_order_relaxed)
                   ? nanoseconds::min()
                   : std::min(due, nanoseconds{guard_at_.load(std::memory_order_relaxed)});
      };
      while (clock_.now() < until()) spin_pause();
    }
    const auto ready = sockets_.wait(events_, plan.socket_wait);
    w.woke = clock_.now();
    w.timed_out = ready.empty();
    w.events = without_wake(ready);
    return w;
  }

  std::span<epoll_event> wait_for(nanoseconds timeout) noexcept override {
    return without_wake(sockets_.wait(events_, timeout));
  }

  void wake() noexcept override {
    woken_.store(true, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
  }

  void guard(nanoseconds at) noexcept override {
    guard_at_.store(at.count(), std::memory_order_relaxed);
    itimerspec spec{};  // all zero: disarmed
    if (at != nanoseconds::max()) {
      // 0 would disarm: an instant already past fires at once as the earliest one can.
      const std::int64_t ns = std::max<std::int64_t>(at.count(), 1);
      spec.it_value = {static_cast<time_t>(ns / 1'000'000'000),
                       static_cast<long>(ns % 1'000'000'000)};
    }
    [[maybe_unused]] const int r = timerfd_settime(guard_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  std::uint64_t sleeps() const noexcept override { return sockets_.sleeps() + ticks_.sleeps(); }

 private:
  // Drains the eventfd and the guard timer if they are among `ready`, and returns the sockets'
  // events alone.
  std::span<epoll_event> without_wake(std::span<epoll_event> ready) noexcept {
    std::size_t kept = 0;
    for (const auto& ev : ready) {
      if (ev.data.u64 == wake_token || ev.data.u64 == guard_token) {
        if (ev.data.u64 == wake_token) woken_.store(false, std::memory_order_relaxed);
        std::uint64_t drained = 0;
        const int fd = ev.data.u64 == wake_token ? wake_fd_ : guard_fd_;
        [[maybe_unused]] const auto n = ::read(fd, &drained, sizeof drained);
        continue;
      }
      ready[kept++] = ev;
    }
    return ready.first(kept);
  }

  const clock& clock_;
  event_loop sockets_;
  event_loop ticks_;
  int wake_fd_;
  int guard_fd_;
  std::atomic<std::int64_t> guard_at_{nanoseconds::max().count()};
  std::atomic<bool> woken_{false};  // set by wake(), cleared as its eventfd is drained
  std::array<epoll_event, 256> events_{};
};

}  // namespace

std::unique_ptr<poller> make_epoll_poller(const clock& c) {
  return std::make_unique<epoll_poller>(c);
}

}  // namespace punctual::net
