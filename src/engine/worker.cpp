#include "engine/worker.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "http/codec.hpp"
#include "http/h2_codec.hpp"
#include "net/clock.hpp"

namespace punctual::engine {
namespace {

constexpr nanoseconds interrupt_drain{1'000'000'000};
// Room for this many retries in backoff at once before the heap has to grow.
constexpr std::size_t retry_reserve = 4096;
constexpr std::size_t rendered_reserve = 4 * 1024;   // a hybrid step's request, per slot
constexpr std::size_t response_reserve = 16 * 1024;  // a kept response (cookies, captures), per slot

// std::push_heap/pop_heap keep the greatest on top; this puts the earliest due retry there.
bool due_later(const record::request_times& a, const record::request_times& b) noexcept {
  return a.due > b.due;
}

constexpr nanoseconds clock_remap{1'000'000};
constexpr nanoseconds scan_reuse{250'000};
constexpr nanoseconds free_scan_pause{20'000};

inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

worker::worker(const run_config& config, const schedule::plan* plan, std::uint32_t id,
               std::uint32_t connections, const worker_parts& parts)
    : config_(config),
      deadlines_{config.timeout, config.retry().attempt_timeout},
      requests_(parts.requests),
      // With constant arrivals every wait has the same length, so waking early for long waits
      // only treats every send alike. Poisson and trace gaps have every length, and a lateness
      // that differs with the wait would distort the gaps the server sees (the
      // poisson_send_gaps warning): there every wait wakes early, and the short ones are spun.
      // A hybrid run's later steps are due at completions plus think times: gaps of every length.
      pacer_(config.precision, config.kind() == model_kind::hybrid ||
                                   (plan && plan->arrival != schedule::arrival_kind::constant)),
      connections_(connections),
      queue_(config.max_queue ? config.max_queue : 4096),
      budget_(config.retry().budget) {
  if (plan) stream_.emplace(*plan, id);
  if (config.hybrid()) {
    // This worker's share of --max_users, split as the connections are. With a connection per
    // user, the worker's connections are its users' slots (the CLI sized them).
    per_user_ = config.hybrid()->per_user;
    const std::uint32_t cap = config.hybrid()->max_users;
    const std::uint32_t share = cap / config.threads + (id < cap % config.threads ? 1 : 0);
    sessions_.emplace(*config.hybrid(), config.seed,
                      per_user_ ? connections : (cap ? std::max<std::uint32_t>(share, 1) : 0));
    if (per_user_) sessions_->hold_ended_slots();
  }
  if (config.retry().enabled()) retries_.reserve(retry_reserve);
  idle_.reserve(connections);
  early_handshakes_.reserve(connections);
  std::uint32_t slots = 0;
  // The closed model sends on each response, so its responses never wait unread.
  bool defer = config.kind() != model_kind::closed;
  if (sessions_) sessions_->set_read_horizon(pacer::harvest_horizon);
  multiplexed_ = config.http != run::http_version::http1;
  // A hybrid user's own connection carries one request at a time. An HTTP/2 connection of the
  // closed model carries --max-streams users (one unless it is given), each a slot.
  const std::uint32_t per_connection = multiplexed_ && config.kind() != model_kind::hybrid
                                           ? std::max<std::uint32_t>(config.max_streams, 1)
                                           : 1;
  for (auto& c : connections_) {
    c.transport = parts.transports.make();
    if (config.http != run::http_version::http1) {
      c.h2 = http::make_h2_codec({config.tls.enabled, &h2_memory_}, per_connection);
    }
    if (config.http != run::http_version::http2) c.http1 = http::make_http1_codec();
    c.codec = c.h2 ? c.h2.get() : c.http1.get();
    c.first_slot = slots;
    c.slot_count = per_connection;
    slots += c.slot_count;
    defer = defer && c.codec->allows_deferred_reads();
  }
  reads_may_wait_ = defer;
  slots_.resize(slots);
  codec_events_.list.reserve(2 * per_connection + 4);
  for (std::uint32_t i = 0; i < connections_.size(); ++i) {
    connection& c = connections_[i];
    c.free_slots.reserve(c.slot_count);
    for (std::uint32_t k = c.slot_count; k-- > 0;) {
      slots_[c.first_slot + k].connection = i;
      c.free_slots.push_back(c.first_slot + k);
    }
  }
  if (per_user_) in_flight_.reserve(slots_.size());
  to_flush_.reserve(connections_.size());
  if (sessions_ && !per_user_) {
    // Room for a typical rendered request and kept response, so that a slot's first use does
    // not allocate during the run (a larger one grows its slot once). A slot per user grows on
    // its first use instead: thousands of idle reservations would be resident memory.
    for (auto& sl : slots_) {
      sl.rendered.reserve(rendered_reserve);
      sl.response.reserve(response_reserve);
    }
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  loop_.add(wake_fd_, EPOLLIN, wake_token);
  tick_loop_.add(wake_fd_, EPOLLIN, wake_token);
}

worker::~worker() {
  for (auto& c : connections_) c.transport->close();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void worker::wake() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = write(wake_fd_, &one, sizeof one);
}

bool worker::next_entry() noexcept {
  has_next_ = stream_ && stream_->next(next_);
  return has_next_;
}

void worker::prepare(nanoseconds start) {
  start_ = start;
  pacer_.set_origin(start);
  window_end_ = start + config_.warmup + config_.duration;
  // Attempts can still be sent until the last deadline of the drain (after the graceful stop,
  // in the hybrid model).
  const nanoseconds graceful = config_.hybrid() ? config_.hybrid()->graceful_stop : nanoseconds{0};
  recorder_.emplace(start + config_.warmup, window_end_, config_.interval,
                    window_end_ + graceful + config_.timeout, config_.name_count(),
                    config_.timeout);
  if (config_.sends_fixed_poisson()) recorder_->keep_send_gaps();
  if (sessions_) {
    recorder_->keep_steps();
    sessions_->attach(*recorder_, window_end_ + graceful);
  }
  for (const auto& [took, resumed] : early_handshakes_) {
    recorder_->on_tls_handshake(start + config_.warmup, took, resumed);
  }
  early_handshakes_.clear();
  for (auto& s : slots_) s.next_send = start;
}

void worker::run(const run_control& control) {
  net::set_thread_timer_slack_1ns();
  to_mono_.refresh();
  const nanoseconds cpu_before = net::thread_cpu_time();
  const nanoseconds start = start_;
  next_entry();
  for (nanoseconds now = net::mono_now();; now = net::mono_now()) {
    observe_interruption(control, now);
    dispatch_due(now);
    dispatch_sessions(now);
    dispatch_retries(now);
    serve_queue(now);
    check_deadlines(now);
    recorder_->roll_intervals(now);
    // Users that ended (on a response, a deadline or the cutoff) give back their connections.
    if (per_user_) close_ended_users(now);
    if (finished(now)) break;
    const auto ready = wait_for_work(now);
    ++stats_.wakeups;
    // Each event reads the clock itself, after its read: a batch can take long enough that one
    // clock read for all of it would date completions (and so service times) too early.
    for (const auto& ev : ready) on_event(ev);
  }
  finish_unfinished();
  stats_.cpu = net::thread_cpu_time() - cpu_before;
  stats_.busy_wall = net::mono_now() - start;
  stats_.sleeps = loop_.sleeps() + tick_loop_.sleeps();
}

void worker::observe_interruption(const run_control& control, nanoseconds now) noexcept {
  if (interrupted_ || !control.interrupted.load(std::memory_order_acquire)) return;
  interrupted_ = true;
  interrupted_at_ = nanoseconds{control.interrupted_at_ns.load(std::memory_order_acquire)};
  window_end_ = std::min(window_end_, std::max(interrupted_at_, start_));
  recorder_->end_window(interrupted_at_);
  if (sessions_) sessions_->stop_at(interrupted_at_);
  drain_until_ = std::max(now, interrupted_at_) + interrupt_drain;
}

void worker::dispatch_due(nanoseconds now) {
  if (config_.kind() == model_kind::closed) return dispatch_closed_model(now);
  if (sessions_) return dispatch_arrivals(now);
  while (has_next_) {
    const nanoseconds intended = start_ + next_.offset;
    if (intended > now || intended >= window_end_) break;
    record::request_times t;
    t.intended = intended;
    t.index = next_.index;
    t.name = requests_.name_of(t.index);
    // The next entry is read before this one is sent: when it is due too, its send lag's slot
    // is fetched now, and this send's system call hides the fetch.
    next_entry();
    if (has_next_ && start_ + next_.offset <= now)
      recorder_->prefetch_send_lag(start_ + next_.offset, now);
    recorder_->on_planned(intended, t.name);
    budget_.on_first_attempt();
    admit(t, now);
  }
}

// The hybrid model: each arrival is a user; its first step is sent now, or waits for a user
// slot (dispatched now, so the wait is queue wait), or is dropped with its session.
void worker::dispatch_arrivals(nanoseconds now) {
  while (has_next_) {
    const nanoseconds arrival = start_ + next_.offset;
    if (arrival > now || arrival >= window_end_) break;
    record::request_times first;
    switch (sessions_->arrive(next_.index, arrival, first)) {
      case session_driver::arrival_fate::admit:
        admit(first, now);
        break;
      case session_driver::arrival_fate::wait:
        first.dispatched = now;
        recorder_->on_dispatched(first);
        sessions_->wait_for_slot(first);
        break;
      case session_driver::arrival_fate::dropped:
        break;
    }
    next_entry();
  }
}

// Sessions' next steps that are due, and arrivals that got a user slot.
void worker::dispatch_sessions(nanoseconds now) {
  if (!sessions_) return;
  record::request_times t;
  while (sessions_->next_due(now, t)) {
    if (t.dispatched.count() != 0) {
      enqueue(t, now);
    } else {
      admit(t, now);
    }
  }
}

void worker::dispatch_retries(nanoseconds now) {
  while (!retries_.empty() && retries_.front().due <= now) {
    std::pop_heap(retries_.begin(), retries_.end(), due_later);
    record::request_times t = retries_.back();
    retries_.pop_back();
    admit(t, now);
  }
}

// A due attempt goes to an idle connection if the queue is empty, else waits in the queue.
void worker::admit(record::request_times& t, nanoseconds now) {
  t.dispatched = now;
  if (!stats_.first_dispatch) stats_.first_dispatch = run::dispatch_instant{now, t.intended};
  recorder_->on_dispatched(t);
  enqueue(t, now);
}

void worker::enqueue(const record::request_times& t, nanoseconds now) {
  // Got to only after its deadline (the generator fell that far behind): never sent.
  if (now >= deadlines_.chain(t)) return recorder_->on_timeout(t, config_.timeout);
  if (queue_.empty() && assign(t, now)) return;
  if (config_.max_queue && queue_.size() >= config_.max_queue) {
    recorder_->on_dropped(t);
  } else {
    queue_.push(t);
    recorder_->on_queue_depth(queue_.size(), now);
  }
}

// Schedules the next attempt of a logical request whose attempt failed for `why`. False when
// the failure is final: the policy does not retry it, the retries are spent, the backoff would
// end past the chain's deadline, or the budget is empty.
bool worker::retry(const record::request_times& t, record::retry_cause why, nanoseconds now,
                   bool answered) {
  const retry_policy& policy = config_.retry();
  if (!policy.enabled() || !policy.retries_on(why) || t.attempt >= policy.retries ||
      interrupted_ || config_.kind() == model_kind::closed) {
    return false;
  }
  const nanoseconds due = now + backoff_delay(policy, t.index, t.attempt + 1);
  if (due >= deadlines_.chain(t)) {
    recorder_->on_retry_past_deadline(t);
    return false;
  }
  if (!budget_.try_take()) {
    recorder_->on_retry_refused_by_budget(t);
    return false;
  }
  recorder_->on_attempt_failed(t, now, why, answered);
  record::request_times next;
  next.intended = t.intended;
  next.due = due;
  next.index = t.index;
  next.name = t.name;
  next.arrival = t.arrival;
  next.session = t.session;
  next.step = t.step;
  next.attempt = t.attempt + 1;
  retries_.push_back(next);
  std::push_heap(retries_.begin(), retries_.end(), due_later);
  return true;
}

void worker::serve_queue(nanoseconds now) {
  while (!queue_.empty()) {
    // A retry can sit behind requests with later deadlines: do not send it once it is too late.
    if (deadlines_.chain(queue_.front()) <= now) {
      recorder_->on_timeout(queue_.front(), config_.timeout);
    } else if (!assign(queue_.front(), now)) {
      return;
    }
    queue_.pop();
  }
}

// Binds a due request to a free slot: on an idle connection, else on one that is (re)connecting,
// else on a closed one it reopens. False when every slot is taken.
bool worker::assign(const record::request_times& t, nanoseconds now) {
  slot* chosen = free_slot(t, now);
  if (!chosen) return false;
  connection& c = connection_of(*chosen);
  chosen->times = t;
  chosen->times.assigned = now;
  mark_busy(*chosen);
  recorder_->on_assigned(chosen->times);
  if (c.state == conn_state::closed) start_connect(c, now);
  // An HTTP/2 connection that is busy carries other streams and takes this one at once.
  if (c.state == conn_state::idle || c.state == conn_state::busy) {
    send_request(*chosen, now);
  } else {
    chosen->times.had_to_connect = true;
  }
  return true;
}

slot* worker::free_slot(const record::request_times& t, nanoseconds now) noexcept {
  if (per_user_) {  // the user's own connection; a user has one step in flight at a time
    if (t.session == 0 || t.session > connections_.size()) return nullptr;
    return next_free(connections_[t.session - 1]);
  }
  if (multiplexed_) return least_loaded(now);
  if (!idle_.empty()) {
    connection& c = connections_[idle_.back()];
    idle_.pop_back();
    return next_free(c);
  }
  // While every connection is busy, serve_queue asks again on every turn of the loop (about
  // every microsecond); a connection closed meanwhile waits for the search at most this long.
  if (now - no_free_at_ < free_scan_pause) return nullptr;
  for (auto& c : connections_) {
    const bool free_connecting = c.state == conn_state::connecting && c.in_flight == 0;
    const bool reopenable = c.state == conn_state::closed && c.retry_at <= now;
    if (free_connecting || reopenable) return next_free(c);
  }
  no_free_at_ = now;
  return nullptr;
}

// HTTP/2: the connection with the fewest requests in flight and room for one more (the lowest
// index on a tie, so -t1 and -t2 place requests alike); else one that is connecting with room,
// or a closed one to reopen.
slot* worker::least_loaded(nanoseconds now) noexcept {
  connection* best = nullptr;
  for (auto& c : connections_) {
    if (c.state != conn_state::idle && c.state != conn_state::busy) continue;
    if ((best && c.in_flight >= best->in_flight) || c.in_flight >= c.codec->capacity()) continue;
    best = &c;
  }
  if (best) return next_free(*best);
  if (now - no_free_at_ < free_scan_pause) return nullptr;
  for (auto& c : connections_) {
    const bool room_connecting = c.state == conn_state::connecting && c.in_flight < c.slot_count;
    const bool reopenable = c.state == conn_state::closed && c.retry_at <= now;
    if (room_connecting || reopenable) return next_free(c);
  }
  no_free_at_ = now;
  return nullptr;
}

// connection: per_user: an ended user's connection closes, and only then is its slot free for
// the next user, who will open its own (and handshake in full: a new user is a new browser).
void worker::close_ended_users(nanoseconds now) {
  std::uint32_t id = 0;
  while (sessions_->next_ended(id)) {
    connection& c = connections_[id];
    if (c.state != conn_state::closed) close_connection(c, now);
    c.transport->forget_session();
    sessions_->release(id);
  }
}

void worker::check_deadlines(nanoseconds now) {
  while (!queue_.empty() && deadlines_.chain(queue_.front()) <= now) {
    recorder_->on_timeout(queue_.front(), config_.timeout);
    queue_.pop();
  }
  // Nothing can be due before next_wake's recent scan said (see there).
  if (config_.kind() == model_kind::open && now < scan_.wake && now - scan_.at < scan_reuse) return;
  if (per_user_) {
    // From the back: a slot that frees swaps the last one, already seen, into its place.
    for (std::size_t i = in_flight_.size(); i-- > 0;) {
      slot& sl = slots_[in_flight_[i]];
      if (deadlines_.attempt(sl.times) <= now) {
        check_deadline(sl, now);
      } else if (connection_of(sl).state == conn_state::connecting) {
        check_connect_timeout(connection_of(sl), now);
      }
    }
    return;
  }
  for (auto& sl : slots_) {
    if (sl.busy && deadlines_.attempt(sl.times) <= now) check_deadline(sl, now);
  }
  for (auto& c : connections_) {
    if (c.state == conn_state::connecting) check_connect_timeout(c, now);
  }
}

void worker::mark_busy(slot& s) noexcept {
  s.busy = true;
  connection& c = connection_of(s);
  c.in_flight++;
  c.free_slots.pop_back();  // s came from next_free(c)
  if (!per_user_) return;
  s.in_flight_at = static_cast<std::uint32_t>(in_flight_.size());
  in_flight_.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
}

void worker::mark_free(slot& s, nanoseconds now) noexcept {
  if (!s.busy) return;
  if (config_.closed()) s.next_send = now + config_.closed()->think;  // the closed model: its user's next request
  connection& c = connection_of(s);
  c.in_flight--;
  c.free_slots.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
  no_free_at_ = std::chrono::hours(-1);  // a slot is free: the next search must look
  if (per_user_) {
    const std::uint32_t last = in_flight_.back();
    in_flight_[s.in_flight_at] = last;
    slots_[last].in_flight_at = s.in_flight_at;
    in_flight_.pop_back();
  }
  s.busy = false;
}

// A request past its attempt's deadline may still have its response unread in the socket
// (beyond the events one wait returns, or deferred to the next wake-up): read it first, so the
// receive stamps decide, not the order in which the worker looked.
void worker::check_deadline(slot& s, nanoseconds now) {
  connection& c = connection_of(s);
  // Read to the end: a close queued behind the bytes raises no further edge.
  if (c.state == conn_state::busy) on_readable(c, true);
  // Reading may have answered it, and the freed slot may already carry a new request.
  if (!s.busy || deadlines_.attempt(s.times) > now) return;
  time_out(s.times, settle(deadlines_, s.times, now), now);
  // HTTP/2 resets the stream and keeps the connection; HTTP/1.1 must close it. A request that
  // waited on a connect leaves it to the others bound to it.
  const bool sent = c.state == conn_state::busy && s.times.sent.count() != 0;
  if (sent && c.codec->counts_per_stream()) count_stream_bytes(s, c.codec->bytes_of(local_index(s)));
  const bool carries_on = sent ? c.codec->cancel(local_index(s)) : c.in_flight > 1;
  mark_free(s, now);
  if (!carries_on) {
    if (c.in_flight) return fail_connection(c, record::socket_reason::closed, now);
    return close_connection(c, now);
  }
  if (sent) flush(c, now);
  if (c.state == conn_state::busy && c.in_flight == 0) became_idle(c, now);
}

void worker::check_connect_timeout(connection& c, nanoseconds now) {
  if (c.connect_started + config_.connect_timeout > now) return;
  if (c.in_flight) fail_connection(c, record::socket_reason::connect, now);
  close_connection(c, now, true);
}

// An attempt that ran out of time. Past an --attempt-timeout (not the chain's) it may be
// retried; otherwise the request ends as a timeout, recorded at exactly its deadline.
void worker::time_out(const record::request_times& t, const attempt_ending& e, nanoseconds now) {
  if (e.chain_over || !retry(t, record::retry_cause::timeout, now, false)) {
    recorder_->on_timeout(t, e.value);
  }
}

nanoseconds worker::next_wake(nanoseconds now) noexcept {
  nanoseconds wake = recorder_->next_interval_boundary();
  if (has_next_ && start_ + next_.offset < window_end_) wake = std::min(wake, start_ + next_.offset);
  if (!queue_.empty()) wake = std::min(wake, deadlines_.chain(queue_.front()));
  if (!retries_.empty()) wake = std::min(wake, retries_.front().due);
  if (sessions_) wake = std::min(wake, std::max(sessions_->earliest_due(), now));
  if (interrupted_) wake = std::min(wake, drain_until_);
  // At high rates the loop turns every few microseconds and the scan of every connection below
  // was a tenth of the CPU. In the open model what it finds are timeouts and reconnects, not
  // sends, so a scan younger than scan_reuse serves when the thread wakes within that anyway.
  const bool reuse = config_.kind() == model_kind::open && wake - now < scan_reuse &&
                     now - scan_.at < scan_reuse;
  if (!reuse) scan_connections(now);
  return std::max(std::min(wake, scan_.wake), now);
}

void worker::scan_connections(nanoseconds now) noexcept {
  nanoseconds wake = nanoseconds::max();
  bool awaits_socket = false;
  if (per_user_) {  // a user's connection connects or blocks a write only with its step in flight
    for (const std::uint32_t i : in_flight_) {
      const slot& sl = slots_[i];
      const connection& c = connections_[sl.connection];
      wake = std::min(wake, deadlines_.attempt(sl.times));
      if (c.state == conn_state::connecting) wake = std::min(wake, c.connect_started + config_.connect_timeout);
      awaits_socket = awaits_socket || c.state == conn_state::connecting || c.write_blocked;
    }
    scan_ = {wake, now, awaits_socket};
    return;
  }
  for (const auto& sl : slots_) {
    if (sl.busy) wake = std::min(wake, deadlines_.attempt(sl.times));
  }
  for (const auto& c : connections_) {
    if (c.state == conn_state::connecting || c.write_blocked) {
      // A request waits on this connection's socket, not on a response: do not defer its events.
      if (c.in_flight) awaits_socket = true;
      if (c.state == conn_state::connecting) {
        wake = std::min(wake, c.connect_started + config_.connect_timeout);
      }
    }
    if (c.state == conn_state::closed && !queue_.empty()) wake = std::min(wake, c.retry_at);
    if (config_.kind() == model_kind::closed && now < window_end_) wake = std::min(wake, users_due(c));
  }
  scan_ = {wake, now, awaits_socket};
}

// Waits as the pacer plans. Responses may wait unread for the next due wake-up (their receive
// stamps date them), except in the closed model and while requests queue (a response frees a
// connection one of them needs) or a request waits on its connection's connect or blocked write,
// and in the hybrid model only while no response could hold back a user (reads_may_wait).
std::span<epoll_event> worker::wait_for_work(nanoseconds now) noexcept {
  flush_deferred(now);
  const nanoseconds wake_at = next_wake(now);
  const bool can_defer = reads_may_wait_ && queue_.empty() && !scan_.awaits_socket &&
                         (!sessions_ || sessions_->reads_may_wait());
  const wait_plan w = pacer_.plan(now, wake_at, can_defer);
  if (w.timer_sleep.count() > 0) {
    tick_loop_.wait(events_, w.timer_sleep);
    pacer_.learn(now + w.timer_sleep, w.timer_sleep, net::mono_now());
  }
  if (w.spin) {
    while (net::mono_now() < w.due) spin_pause();
  }
  const auto ready = loop_.wait(events_, w.socket_wait);
  const nanoseconds woke = net::mono_now();
  if (w.socket_wait.count() > 0 && ready.empty()) pacer_.learn(now + w.socket_wait, w.socket_wait, woke);
  to_mono_.refresh_every(clock_remap, woke);
  return ready;
}

bool worker::finished(nanoseconds now) const noexcept {
  if (interrupted_ && now >= drain_until_) return true;
  const bool schedule_done = config_.kind() == model_kind::closed
                                 ? now >= window_end_
                                 : !has_next_ || start_ + next_.offset >= window_end_;
  if (!schedule_done || !queue_.empty() || !retries_.empty()) return false;
  if (sessions_ && !sessions_->idle()) return false;
  return std::none_of(slots_.begin(), slots_.end(), [](const slot& s) { return s.busy; });
}

void worker::finish_unfinished() {
  for (; !queue_.empty(); queue_.pop()) recorder_->on_unfinished(queue_.front(), interrupted_at_);
  for (const auto& t : retries_) recorder_->on_unfinished(t, interrupted_at_);
  retries_.clear();
  for (auto& s : slots_) {
    if (!s.busy) continue;
    recorder_->on_unfinished(s.times, interrupted_at_);
    mark_free(s, interrupted_at_);
  }
  if (sessions_) sessions_->skip_waiting();
}

}  // namespace punctual::engine
