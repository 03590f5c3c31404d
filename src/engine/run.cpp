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
constexpr nanoseconds connect_ahead{2'000'000'000};
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
// The collector's side of the per-interval hand-off: takes each worker's waiting set, and emits
// an interval (adds it to the run's totals, summarises it for the timeline, hands it to the
// sink) once every worker has handed it over. Every measured sample is in exactly one
// interval: the run's totals are their sum.
class interval_collector {
 public:
  interval_collector(std::vector<std::unique_ptr<worker>>& workers, std::size_t names, run_result& result,
                     const interval_sink& sink)
      : workers_(workers), pending_(names), taken_(workers.size(), -1), result_(result), sink_(sink) {}

  void poll() {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      auto& ex = workers_[i]->recorder().intervals();
      const std::int64_t index = ex.waiting();
      if (index < 0) continue;
      ex.take(pending_.at(index));
      taken_[i] = std::max(taken_[i], index);
    }
    const std::int64_t ready = *std::min_element(taken_.begin(), taken_.end());
    for (; next_emit_ <= ready; ++next_emit_) {
      emit(next_emit_);
      pending_.release(next_emit_);
    }
  }

  // After the workers have been joined: the sets they were still recording into. A worker that
  // rolled into the interval after the window's last and recorded nothing there leaves an empty
  // set: it is no interval of the run (the timeline would show a collapse).
  void finish(std::int64_t window_intervals) {
    poll();
    std::int64_t last = next_emit_ - 1;
    for (auto& w : workers_) {
      pending_.at(w->recorder().current_interval()).add(w->recorder().intervals().last());
      last = std::max(last, w->recorder().current_interval());
    }
    for (; next_emit_ <= last; ++next_emit_) {
      if (next_emit_ >= window_intervals && pending_.at(next_emit_).empty()) continue;
      emit(next_emit_);
    }
  }

 private:
  void emit(std::int64_t index) {
    const record::view_set& views = pending_.at(index);
    result_.measured.views.add(views);
    result_.series.push_back(record::summarize_interval(index, views));
    sink_(index, views);
  }

  std::vector<std::unique_ptr<worker>>& workers_;
  pending_intervals pending_;
  std::vector<std::int64_t> taken_;
  std::int64_t next_emit_ = 0;
  run_result& result_;
  const interval_sink& sink_;
};

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

// The send lag of the run's earliest dispatch: how late it began its schedule.
std::optional<nanoseconds> start_lag(const std::vector<run::worker_stats>& workers) {
  std::optional<run::dispatch_instant> first;
  for (const auto& w : workers) {
    if (w.first_dispatch && (!first || w.first_dispatch->at < first->at)) first = w.first_dispatch;
  }
  if (!first) return std::nullopt;
  return std::max(first->at - first->due, nanoseconds{0});
}

}  // namespace

load_run::load_run(const run_config& config)
    : config_(config),
      transports_(config.tls.enabled ? net::tls_transport_factory(config.tls)
                                     : net::tcp_transport_factory()),
      requests_(config.mix.empty()
                    ? std::unique_ptr<request_source>(
                          std::make_unique<fixed_request>(config.request, config.head_request))
                    : std::make_unique<weighted_mix>(
                          config.mix, config.seed, config.plan() ? config.plan()->replay : nullptr)) {
  const worker_parts parts{*transports_, *requests_};
  const std::uint32_t threads = config.threads;
  for (std::uint32_t w = 0; w < threads; ++w) {
    // The -c connections are split evenly; the first workers take the remainder.
    const std::uint32_t share = config.connections / threads + (w < config.connections % threads ? 1 : 0);
    workers_.push_back(std::make_unique<worker>(
        config, config.plan() ? &*config.plan() : nullptr, w, share, parts));
  }
}

// --start-at: connections open this long before the schedule starts, so that they are ready
// then and yet not idle long enough for a server to close them.
void load_run::wait_for_start(nanoseconds until_unix) const noexcept {
  while (!control_.interrupted.load()) {
    const nanoseconds left = until_unix - net::unix_now();
    if (left <= nanoseconds{0}) return;
    sleep_for(std::min(left, nanoseconds{50'000'000}));
  }
}

void load_run::interrupt() noexcept {
  if (control_.interrupted.load()) return;
  control_.interrupted_at_ns.store(net::mono_now().count());
  control_.interrupted.store(true, std::memory_order_release);
  for (auto& w : workers_) w->wake();
}

// Opens every connection before the start, and fixes the start: a run with nothing connected,
// or a certificate that does not verify, ends here.
void load_run::open(run_result& result) {
  if (config_.start_at) wait_for_start(*config_.start_at - config_.warmup - connect_ahead);
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
  if (config_.start_at) {
    // The schedule's start is a wall-clock instant every shard shares: a shard that got here
    // late keeps it, and its overdue requests carry their lateness as send lag.
    const nanoseconds start_unix = *config_.start_at - config_.warmup;
    result.start.mono += start_unix - result.start.unix;
    result.start.unix = start_unix;
  } else {
    result.start.unix += start_lead;
    result.start.mono += start_lead;
  }
  result.measure_start = result.start.mono + config_.warmup;
  start_ = result.start;
}

std::vector<std::thread> load_run::launch(std::atomic<std::uint32_t>& running) {
  std::vector<std::thread> threads;
  // Signals go to the coordinating thread only; it wakes the workers through their eventfds.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  for (auto& w : workers_) w->prepare(start_.mono);
  for (auto& w : workers_) {
    threads.emplace_back([&running, &control = control_, wp = w.get()] {
      wp->run(control);
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return threads;
}

run_result load_run::execute(const interval_sink& sink) {
  run_result result;
  const std::size_t names = config_.name_count();
  result.measured.views = record::view_set(names);
  result.by_name.resize(names);
  open(result);
  std::atomic<std::uint32_t> running{static_cast<std::uint32_t>(workers_.size())};
  std::vector<std::thread> threads = launch(running);
  interval_collector intervals(workers_, names, result, sink);
  intended_collector intended(workers_, config_.duration);
  while (running.load(std::memory_order_acquire) > 0) {
    sleep_for(collect_period);
    intervals.poll();
    // An interrupted window's last second is not whole: it must not compete.
    if (control_.interrupted.load()) {
      intended.limit(nanoseconds{control_.interrupted_at_ns.load()} - result.measure_start);
    }
    intended.poll();
  }
  for (auto& t : threads) t.join();
  intervals.finish((config_.duration + config_.interval - nanoseconds{1}) / config_.interval);

  result.interrupted = control_.interrupted.load();
  const nanoseconds window_end =
      result.interrupted ? std::min(nanoseconds{control_.interrupted_at_ns.load()},
                                    result.measure_start + config_.duration)
                         : result.measure_start + config_.duration;
  result.window = std::max(window_end - result.measure_start, nanoseconds{0});
  result.elapsed = net::mono_now() - start_.mono;
  intended.finish(result.window);
  result.worst_second = intended.worst();
  add_up(result);
  if (config_.start_at) result.start_lag = start_lag(result.workers);
  return result;
}

// The workers' counts, warm-up views, per-second load and own costs, added together once their
// threads are joined (the measured views came through the intervals).
void load_run::add_up(run_result& result) const {
  for (const auto& w : workers_) {
    const record::recorder& r = w->recorder();
    result.measured.counts.add(r.measured_counts());
    for (std::size_t n = 0; n < result.by_name.size(); ++n) result.by_name[n].add(r.by_name()[n]);
    result.warmup.counts.add(r.warmup().counts);
    result.warmup.views.add(r.warmup().views);
    result.load.add(r.load());
    result.send_gaps.add(r.send_gaps());
    result.workers.push_back(w->stats());
    result.worst_second_lost += w->recorder().seconds().lost();
    add_steps(result.steps, r.steps());
    if (!result.tls && w->first_tls()) {
      const net::tls_state& t = *w->first_tls();
      result.tls = run::tls_summary{t.version, t.cipher, t.alpn};
    }
  }
}

}  // namespace punctual::engine
