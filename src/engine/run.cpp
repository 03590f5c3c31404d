#include "engine/run.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <thread>

#include "net/socket.hpp"
#include "net/tls.hpp"

namespace punctual::engine {
namespace {

// Connections are opened before the start; the schedule begins this long after they are all up,
// so no worker starts late on its first request.
constexpr nanoseconds start_lead{20'000'000};
constexpr nanoseconds collect_period{20'000'000};

void sleep_for(nanoseconds d) noexcept {
  timespec ts{static_cast<time_t>(d.count() / 1'000'000'000), static_cast<long>(d.count() % 1'000'000'000)};
  nanosleep(&ts, nullptr);  // EINTR (a signal) just ends the nap early
}

// The intervals taken from some workers but not yet emitted. An emitted set is reset and kept
// for the next interval: a new set each second would come back from the allocator as memory it
// must zero, touching every page of every histogram, and a run with a mix has hundreds.
class pending_intervals {
 public:
  explicit pending_intervals(std::size_t names) : names_(names) {}

  record::view_set& at(std::int64_t index) {
    auto& p = sets_[index];
    if (p) return *p;
    if (spare_.empty()) return *(p = std::make_unique<record::view_set>(names_));
    p = std::move(spare_.back());
    spare_.pop_back();
    return *p;
  }

  void release(std::int64_t index) {
    const auto it = sets_.find(index);
    if (it == sets_.end()) return;
    it->second->reset();
    spare_.push_back(std::move(it->second));
    sets_.erase(it);
  }

 private:
  std::size_t names_;
  std::map<std::int64_t, std::unique_ptr<record::view_set>> sets_;
  std::vector<std::unique_ptr<record::view_set>> spare_;
};

// The collector's side of the intended seconds: takes what each worker has retired, and tells
// the finder which seconds every worker has finished with.
void add_steps(std::vector<record::second_views>& into, const std::vector<record::second_views>& steps) {
  if (into.size() < steps.size()) into.resize(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) into[i].add(steps[i]);
}

class intended_collector {
 public:
  intended_collector(std::vector<std::unique_ptr<worker>>& workers, nanoseconds window)
      : workers_(workers), finder_(whole_seconds(window)) {}

  void poll() {
    std::int64_t through = std::numeric_limits<std::int64_t>::max();
    for (auto& w : workers_) {
      auto& seconds = w->recorder().seconds();
      through = std::min(through, seconds.retired_through());
      seconds.take_retired([this](const record::second_views& s) { finder_.add(s); });
    }
    finder_.complete_through(through);
  }
  // After the workers have been joined: every second is complete. `window`: the window run.
  void finish(nanoseconds window) {
    finder_.limit(whole_seconds(window));
    for (auto& w : workers_) w->recorder().seconds().retire_through(std::numeric_limits<std::int64_t>::max());
    poll();
  }
  void limit(nanoseconds window) { finder_.limit(whole_seconds(window)); }
  const std::optional<record::second_views>& worst() const noexcept { return finder_.worst(); }

 private:
  static std::int64_t whole_seconds(nanoseconds window) { return window / std::chrono::seconds(1); }
  std::vector<std::unique_ptr<worker>>& workers_;
  record::worst_second_finder finder_;
};

}  // namespace

load_run::load_run(const run_config& config)
    : config_(config),
      transports_(config.tls.enabled ? net::tls_transport_factory(config.tls)
                                     : net::tcp_transport_factory()),
      requests_(config.mix.empty()
                    ? std::unique_ptr<request_source>(
                          std::make_unique<fixed_request>(config.request, config.head_request))
                    : std::make_unique<weighted_mix>(
                          config.mix, config.seed, config.plan ? config.plan->replay : nullptr)) {
  const worker_parts parts{*transports_, *requests_};
  const std::uint32_t threads = config.threads;
  for (std::uint32_t w = 0; w < threads; ++w) {
    // The -c connections are split evenly; the first workers take the remainder.
    const std::uint32_t share = config.connections / threads + (w < config.connections % threads ? 1 : 0);
    workers_.push_back(std::make_unique<worker>(
        config, config.plan ? &*config.plan : nullptr, w, share, parts));
  }
}

void load_run::interrupt() noexcept {
  if (control_.interrupted.load()) return;
  control_.interrupted_at_ns.store(net::mono_now().count());
  control_.interrupted.store(true, std::memory_order_release);
  for (auto& w : workers_) w->wake();
}

run_result load_run::execute(const interval_sink& sink) {
  run_result result;
  const std::size_t names = config_.name_count();
  result.measured.views = record::view_set(names);
  result.by_name.resize(names);
  net::failure first_error;
  // Before any worker thread exists: the descriptor table's growth is free only then.
  constexpr std::uint32_t spare_descriptors = 64;  // epoll and eventfds per worker, logs, stdio
  net::reserve_descriptors(config_.connections + spare_descriptors + 4 * config_.threads);
  for (auto& w : workers_) result.connections_opened += w->open_connections(first_error);
  // A certificate that does not verify ends the run before it starts, whatever else connected.
  if (first_error.kind == net::failure_kind::tls_verify) {
    throw run_failure("TLS verification failed for " + config_.tls.server_name + ": " +
                      first_error.text);
  }
  if (result.connections_opened == 0) {
    throw run_failure("could not connect to " + config_.target.text + ": " + first_error.text);
  }
  result.start = net::map_clocks();
  const nanoseconds start = result.start.mono + start_lead;
  result.start.unix += start_lead;
  result.start.mono = start;
  result.measure_start = start + config_.warmup;
  start_ = result.start;

  std::atomic<std::uint32_t> running{static_cast<std::uint32_t>(workers_.size())};
  std::vector<std::thread> threads;
  // Signals go to the coordinating thread only; it wakes the workers through their eventfds.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  for (auto& w : workers_) w->prepare(start);
  for (auto& w : workers_) {
    threads.emplace_back([&, wp = w.get()] {
      wp->run(control_);
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pending_intervals pending(names);
  intended_collector intended(workers_, config_.duration);
  std::vector<std::int64_t> taken(workers_.size(), -1);
  std::int64_t next_emit = 0;
  // Every measured sample is in exactly one interval: the run's totals are their sum.
  const auto emit = [&](std::int64_t index) {
    const record::view_set& views = pending.at(index);
    result.measured.views.add(views);
    result.series.push_back(record::summarize_interval(index, views));
    sink(index, views);
  };
  const auto poll = [&] {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      auto& ex = workers_[i]->recorder().intervals();
      const std::int64_t index = ex.waiting();
      if (index < 0) continue;
      ex.take(pending.at(index));
      taken[i] = std::max(taken[i], index);
    }
    const std::int64_t ready = *std::min_element(taken.begin(), taken.end());
    for (; next_emit <= ready; ++next_emit) {
      emit(next_emit);
      pending.release(next_emit);
    }
  };
  while (running.load(std::memory_order_acquire) > 0) {
    sleep_for(collect_period);
    poll();
    // An interrupted window's last second is not whole: it must not compete.
    if (control_.interrupted.load()) {
      intended.limit(nanoseconds{control_.interrupted_at_ns.load()} - result.measure_start);
    }
    intended.poll();
  }
  for (auto& t : threads) t.join();
  poll();
  std::int64_t last = next_emit - 1;
  for (auto& w : workers_) {
    pending.at(w->recorder().current_interval()).add(w->recorder().intervals().last());
    last = std::max(last, w->recorder().current_interval());
  }
  // A worker that rolled into the interval after the window's last, and recorded nothing there,
  // leaves an empty set: it is no interval of the run (the timeline would show a collapse).
  const std::int64_t window_intervals = (config_.duration + config_.interval - nanoseconds{1}) / config_.interval;
  for (; next_emit <= last; ++next_emit) {
    if (next_emit >= window_intervals && pending.at(next_emit).empty()) continue;
    emit(next_emit);
  }

  result.interrupted = control_.interrupted.load();
  const nanoseconds window_end =
      result.interrupted ? std::min(nanoseconds{control_.interrupted_at_ns.load()},
                                    result.measure_start + config_.duration)
                         : result.measure_start + config_.duration;
  result.window = std::max(window_end - result.measure_start, nanoseconds{0});
  result.elapsed = net::mono_now() - start;
  intended.finish(result.window);
  result.worst_second = intended.worst();
  for (auto& w : workers_) {
    result.measured.counts.add(w->recorder().measured_counts());
    for (std::size_t n = 0; n < names; ++n) result.by_name[n].add(w->recorder().by_name()[n]);
    result.warmup.counts.add(w->recorder().warmup().counts);
    result.warmup.views.add(w->recorder().warmup().views);
    result.load.add(w->recorder().load());
    result.send_gaps.add(w->recorder().send_gaps());
    result.workers.push_back(w->stats());
    result.worst_second_lost += w->recorder().seconds().lost();
    add_steps(result.steps, w->recorder().steps());
    if (!result.tls && w->first_tls()) {
      const net::tls_state& t = *w->first_tls();
      result.tls = run::tls_summary{t.version, t.cipher, t.alpn};
    }
  }
  return result;
}

}  // namespace punctual::engine
