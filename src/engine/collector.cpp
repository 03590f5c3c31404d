#include "engine/collector.hpp"

#include <algorithm>
#include <limits>

namespace punctual::engine {
namespace {

std::int64_t whole_seconds(nanoseconds window) {
  return window / std::chrono::seconds(1);
}

void add_steps(std::vector<record::second_views>& into,
               const std::vector<record::second_views>& steps) {
  if (into.size() < steps.size()) into.resize(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) into[i].add(steps[i]);
}

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

// An emitted set is reset and kept for the next interval: a new set each second would cost a
// mapping per histogram, and a run with a mix has hundreds. The reset gives the pages back, so
// a kept set holds only what the interval that uses it next records.
record::view_set& run_collector::pending_intervals::at(std::int64_t index) {
  auto& p = sets_[index];
  if (p) return *p;
  if (spare_.empty()) return *(p = std::make_unique<record::view_set>(names_));
  p = std::move(spare_.back());
  spare_.pop_back();
  return *p;
}

void run_collector::pending_intervals::release(std::int64_t index) {
  const auto it = sets_.find(index);
  if (it == sets_.end()) return;
  it->second->reset_releasing();
  spare_.push_back(std::move(it->second));
  sets_.erase(it);
}

std::size_t run_collector::pending_intervals::resident_bytes() const noexcept {
  std::size_t bytes = 0;
  for (const auto& [index, set] : sets_) bytes += set->resident_bytes();
  for (const auto& set : spare_) bytes += set->resident_bytes();
  return bytes;
}

run_collector::run_collector(const run_config& config,
                             std::vector<std::unique_ptr<worker>>& workers, run::result& result,
                             const interval_sink& sink)
    : config_(config),
      workers_(workers),
      result_(result),
      sink_(sink),
      pending_(config.name_count()),
      taken_(workers.size(), -1),
      worst_(whole_seconds(config.duration)),
      worker_live_(workers.size(), record::live_counts(config.name_count())),
      live_(config.name_count()) {}

void run_collector::poll(const run_control& control) {
  poll_intervals();
  // An interrupted window's last second is not whole: it must not compete.
  if (control.interrupted.load()) {
    worst_.limit(
        whole_seconds(nanoseconds{control.interrupted_at_ns.load()} - result_.measure_start));
  }
  poll_seconds();
}

// Takes each worker's waiting interval, and emits an interval (adds it to the run's totals,
// summarises it for the timeline, hands it to the sink) once every worker has handed it over.
// Every measured sample is in exactly one interval: the run's totals are their sum.
void run_collector::poll_intervals() {
  bool took = false;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    auto& ex = workers_[i]->recorder().intervals();
    const std::int64_t index = ex.waiting();
    if (index < 0) continue;
    ex.take(pending_.at(index), &worker_live_[i]);
    taken_[i] = std::max(taken_[i], index);
    took = true;
  }
  if (took) sum_live();
  const std::int64_t ready = *std::min_element(taken_.begin(), taken_.end());
  for (; next_emit_ <= ready; ++next_emit_) {
    emit(next_emit_);
    pending_.release(next_emit_);
  }
}

// The intended seconds each worker has retired, and which every worker has finished with.
void run_collector::poll_seconds() {
  std::int64_t through = std::numeric_limits<std::int64_t>::max();
  for (auto& w : workers_) {
    auto& seconds = w->recorder().seconds();
    through = std::min(through, seconds.retired_through());
    seconds.take_retired([this](const record::second_views& s) { worst_.add(s); });
  }
  worst_.complete_through(through);
}

void run_collector::sum_live() {
  live_ = record::live_counts(config_.name_count());
  for (const auto& w : worker_live_) live_.add(w);
}

void run_collector::emit(std::int64_t index) {
  const record::view_set& views = pending_.at(index);
  queue_depth_ = views.counts().queue_depth_max;
  result_.measured.views.add(views);
  result_.series.push_back(record::summarize_interval(index, views));
  sink_(index, views);
}

void run_collector::finish(const run_control& control, nanoseconds now) {
  // The sets the workers were still recording into. A worker that rolled into the interval
  // after the window's last and recorded nothing there leaves an empty set: it is no interval
  // of the run (the timeline would show a collapse).
  poll_intervals();
  const std::int64_t window_intervals =
      (config_.duration + config_.interval - nanoseconds{1}) / config_.interval;
  std::int64_t last = next_emit_ - 1;
  for (auto& w : workers_) {
    pending_.at(w->recorder().current_interval()).add(w->recorder().intervals().last());
    last = std::max(last, w->recorder().current_interval());
  }
  // Past the window, the empty intervals after the last that recorded anything are none of the
  // run's; an empty one before it is a silence of the run, and is emitted as on time it would
  // have been (a worker or collector the host held back used to leave such gaps in the series).
  while (last >= next_emit_ && last >= window_intervals && pending_.at(last).empty()) --last;
  for (; next_emit_ <= last; ++next_emit_) emit(next_emit_);

  result_.interrupted = control.interrupted.load();
  const nanoseconds window_end = result_.interrupted
                                     ? std::min(nanoseconds{control.interrupted_at_ns.load()},
                                                result_.measure_start + config_.duration)
                                     : result_.measure_start + config_.duration;
  result_.window = std::max(window_end - result_.measure_start, nanoseconds{0});
  result_.elapsed = now - result_.start.mono;
  // Every second is complete now.
  worst_.limit(whole_seconds(result_.window));
  for (auto& w : workers_)
    w->recorder().seconds().retire_through(std::numeric_limits<std::int64_t>::max());
  poll_seconds();
  result_.worst_second = worst_.take_worst();
  add_up();
  live_.measured = result_.measured.counts;
  live_.warmup = result_.warmup.counts;
  live_.by_name = result_.by_name;
  live_.in_flight = 0;
  if (config_.start_at) result_.start_lag = start_lag(result_.workers);
}

memory_account run_collector::memory() const {
  memory_account rows;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const record::recorder_memory m = workers_[i]->recorder().memory();
    const std::string w = "worker " + std::to_string(i) + ": ";
    rows.push_back({w + "interval views", m.interval_views});
    rows.push_back({w + "intended-second ring", m.second_ring});
    rows.push_back({w + "warm-up views", m.warmup_views});
    rows.push_back({w + "send gaps and step views", m.other_views});
    rows.push_back({w + "per-second load series", m.per_second_load});
  }
  rows.push_back({"collector: pending interval sets", pending_.resident_bytes()});
  rows.push_back({"collector: worst second (pending and worst)", worst_.resident_bytes()});
  rows.push_back({"run totals: latency views",
                  result_.measured.views.resident_bytes() + result_.warmup.views.resident_bytes()});
  rows.push_back(
      {"run series: interval rows", result_.series.capacity() * sizeof(record::interval_row)});
  return rows;
}

// The workers' counts, warm-up views, per-second load and own costs (the measured views came
// through the intervals).
void run_collector::add_up() {
  for (const auto& w : workers_) {
    const record::recorder& r = w->recorder();
    result_.measured.counts.add(r.measured_counts());
    for (std::size_t n = 0; n < result_.by_name.size(); ++n) result_.by_name[n].add(r.by_name()[n]);
    result_.warmup.counts.add(r.warmup().counts);
    result_.warmup.views.add(r.warmup().views);
    result_.load.add(r.load());
    result_.send_gaps.add(r.send_gaps());
    run::worker_stats& stats = result_.workers.emplace_back(w->stats());
    const record::counters& c = r.measured_counts();
    stats.planned = c.planned;
    stats.sent_for_others = c.claimed_in;
    stats.claimed_away = c.claimed_out;
    stats.outcomes = c.outcome_total();
    result_.worst_second_lost += w->recorder().seconds().lost();
    add_steps(result_.steps, r.steps());
    if (!result_.tls && w->first_tls()) {
      const net::tls_state& t = *w->first_tls();
      result_.tls = run::tls_summary{t.version, t.cipher, t.alpn};
    }
  }
}

}  // namespace punctual::engine
