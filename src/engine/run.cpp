#include "engine/run.hpp"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>

#include "net/socket.hpp"
#include "net/tls.hpp"
#include "platform/host_cpu.hpp"

namespace punctual::engine {
namespace {

// Connections are opened before the start; the schedule begins this long after they are all up,
// so no worker starts late on its first request.
constexpr nanoseconds start_lead{20'000'000};
constexpr nanoseconds connect_ahead{2'000'000'000};
constexpr nanoseconds memory_probe_at{10'000'000'000};
// A fine-mode worker's slice: the kernel's shortest. A worker that wakes takes its CPU from a
// thread with a longer slice at once, instead of at that slice's end (docs/design.md, "Who
// waits for whom").
constexpr nanoseconds worker_slice{100'000};

void sleep_for(nanoseconds d) noexcept {
  timespec ts{static_cast<time_t>(d.count() / 1'000'000'000),
              static_cast<long>(d.count() % 1'000'000'000)};
  nanosleep(&ts, nullptr);  // EINTR (a signal) just ends the nap early
}

}  // namespace

load_run::load_run(const run_config& config, run_parts parts)
    : config_(config), parts_(std::move(parts)) {
  const std::uint32_t threads = config.threads;
  const std::uint32_t per_connection = config.slots_per_connection();
  // Claims take the open model's requests and retries, and the hybrid model's arrivals when its
  // users share the connections (claim_walk.hpp); a hybrid step's retry stays with its user.
  const bool open = config.kind() == model_kind::open;
  const bool pooled_users = config.kind() == model_kind::hybrid && !config.hybrid()->per_user;
  if (config.claims && threads > 1 && (open || pooled_users))
    claims_ = std::make_unique<claim_board>(
        threads, open && config.retry().enabled() ? claim_board::retry_cells : 0);
  std::vector<net::poller*> pollers;
  for (std::uint32_t w = 0; w < threads; ++w) {
    // The -c connections are split evenly; the first workers take the remainder.
    const std::uint32_t share =
        config.connections / threads + (w < config.connections % threads ? 1 : 0);
    worker_parts wp{
        *parts_.transports,
        *parts_.codecs,
        *parts_.clock,
        parts_.make_poller(),
        make_load_model(config, w, share * per_connection, *parts_.requests, claims_.get()),
        parts_.tap,
        claims_.get()};
    pollers.push_back(wp.poller.get());
    workers_.push_back(std::make_unique<worker>(config, w, share, std::move(wp)));
  }
  // Each worker's guard timer is on the next worker's poller.
  if (claims_) claims_->set_pollers(pollers);
}

// --start-at: connections open this long before the schedule starts, so that they are ready
// then and yet not idle long enough for a server to close them.
void load_run::wait_for_start(nanoseconds until_unix) const noexcept {
  while (!control_.interrupted.load()) {
    const nanoseconds left = until_unix - parts_.clock->unix_now();
    if (left <= nanoseconds{0}) return;
    sleep_for(std::min(left, nanoseconds{50'000'000}));
  }
}

void load_run::interrupt() noexcept {
  if (control_.interrupted.load()) return;
  control_.interrupted_at_ns.store(parts_.clock->now().count());
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
                      first_error.text +
                      " (trust it with --cacert FILE, or skip verification with --insecure)");
  }
  if (result.connections_opened == 0) {
    throw run_failure("could not connect to " + config_.target.text + ": " + first_error.text);
  }
  result.start = parts_.clock->map();
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

void load_run::prepare(run_result& result) {
  const std::size_t names = config_.name_count();
  result.measured.views = record::view_set(names);
  result.by_name.resize(names);
  for (auto& w : workers_) w->prepare(start_.mono);
}

std::vector<std::thread> load_run::launch(std::atomic<std::uint32_t>& running) {
  std::vector<std::thread> threads;
  // Signals go to the coordinating thread only; it wakes the workers through their pollers.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  // --pin: worker k on the k-th CPU the process may use (the CLI checked there are enough).
  const std::vector<int> cpus = config_.pin ? platform::allowed_cpus() : std::vector<int>{};
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    const int cpu = k < cpus.size() ? cpus[k] : -1;
    // top -H, perf and /proc tell the workers apart by the name.
    std::string name = "punctual-w" + std::to_string(k);
    threads.emplace_back([&running, &control = control_, wp = workers_[k].get(), cpu,
                          name = std::move(name),
                          fine = config_.precision == precision_mode::fine] {
      if (cpu >= 0 && platform::pin_thread_to(cpu)) wp->pinned_to(cpu);
      if (fine) platform::request_slice(worker_slice);
      // Named after the pin and the slice, so that whoever sees the name sees both done (tests
      // read them).
      platform::name_thread(name);
      wp->run(control);
      running.fetch_sub(1, std::memory_order_release);
    });
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return threads;
}

run_result load_run::execute(const interval_sink& sink) {
  run_result result;
  open(result);
  prepare(result);
  std::atomic<std::uint32_t> running{static_cast<std::uint32_t>(workers_.size())};
  const std::optional<nanoseconds> steal_before = platform::host_steal();
  std::vector<std::thread> threads = launch(running);
  run_collector collector(config_, workers_, result, sink);
  bool probed = !memory_probe_;
  while (running.load(std::memory_order_acquire) > 0) {
    sleep_for(run_collector::period);
    collector.poll(control_);
    if (poll_hook_) poll_hook_(collector, false);
    if (!probed && parts_.clock->now() - result.measure_start >= memory_probe_at) {
      memory_probe_("10s", collector.memory());
      probed = true;
    }
  }
  for (auto& t : threads) t.join();
  const std::optional<nanoseconds> steal_after = platform::host_steal();
  if (steal_before && steal_after) result.host_steal = *steal_after - *steal_before;
  collector.finish(control_, parts_.clock->now());
  if (poll_hook_) poll_hook_(collector, true);
  if (memory_probe_) memory_probe_("end", collector.memory());
  return result;
}

}  // namespace punctual::engine
