#include "engine/worker.hpp"

#include <algorithm>

#include "http/codec.hpp"

namespace punctual::engine {
namespace {

constexpr nanoseconds interrupt_drain{1'000'000'000};
// Room for this many retries in backoff at once before the heap has to grow.
constexpr std::size_t retry_reserve = 4096;
constexpr std::size_t room_reserve = 4 * 1024;       // a rendered request, per slot
constexpr std::size_t response_reserve = 16 * 1024;  // a kept response, per slot

constexpr nanoseconds clock_remap{1'000'000};
constexpr nanoseconds scan_reuse{250'000};
constexpr nanoseconds free_scan_pause{20'000};

bool set_up(const connection& c) noexcept {
  return c.state == conn_state::idle || c.state == conn_state::busy;
}

}  // namespace

worker::worker(const run_config& config, std::uint32_t id, std::uint32_t connections,
               worker_parts parts)
    : config_(config),
      id_(id),
      deadlines_{config.timeout, config.retry().attempt_timeout},
      clock_(parts.clock),
      transports_(parts.transports),
      poller_(std::move(parts.poller)),
      model_(std::move(parts.model)),
      tap_(parts.tap),
      traits_(model_->traits()),
      pacer_(config.precision, traits_.uneven_gaps),
      multiplexed_(config.http != run::http_version::http1),
      connections_(connections),
      queue_(config.max_queue),
      retries_(config.retry().enabled() ? retry_reserve : 0, pacer_,
               parts.claims && parts.claims->takes_retries() ? parts.claims : nullptr, id),
      budget_(config.retry().budget) {
  idle_.reserve(connections);
  early_handshakes_.reserve(connections);
  const std::uint32_t per_connection = config.slots_per_connection();
  std::uint32_t slots = 0;
  for (auto& c : connections_) {
    c.transport = transports_.make();
    http::codec_set codecs = parts.codecs.make(per_connection, h2_memory_);
    c.http1 = std::move(codecs.http1);
    c.h2 = std::move(codecs.h2);
    c.codec = c.h2 ? c.h2.get() : c.http1.get();
    c.first_slot = slots;
    c.slot_count = per_connection;
    slots += c.slot_count;
    codecs_allow_deferred_reads_ = codecs_allow_deferred_reads_ && c.codec->allows_deferred_reads();
  }
  slots_.resize(slots);
  in_flight_.reserve(slots);
  codec_events_.list.reserve(2 * per_connection + 4);
  for (std::uint32_t i = 0; i < connections_.size(); ++i) {
    connection& c = connections_[i];
    c.free_slots.reserve(c.slot_count);
    if (multiplexed_) c.unwritten.reserve(2 * c.slot_count);
    for (std::uint32_t k = c.slot_count; k-- > 0;) {
      slots_[c.first_slot + k].connection = i;
      c.free_slots.push_back(c.first_slot + k);
    }
  }
  to_flush_.reserve(connections_.size());
  if (traits_.renders && traits_.connections_ahead) {
    // Room for a typical rendered request and kept response, so that a slot's first use does
    // not allocate during the run (a larger one grows its slot once). A slot per user grows on
    // its first use instead: thousands of idle reservations would be resident memory.
    for (auto& sl : slots_) {
      sl.room.reserve(room_reserve);
      sl.response.reserve(response_reserve);
    }
  }
}

worker::~worker() {
  for (auto& c : connections_) c.transport->close();
}

void worker::prepare(nanoseconds start) {
  start_ = start;
  pacer_.set_origin(start);
  window_end_ = start + config_.warmup + config_.duration;
  // Attempts can still be sent until the last deadline of the drain (after the graceful stop,
  // in the hybrid model).
  recorder_.emplace(start + config_.warmup, window_end_, config_.interval,
                    window_end_ + config_.graceful_stop() + config_.timeout, config_.name_count(),
                    config_.timeout);
  recorder_->set_listener(this);
  for (const auto& [took, resumed] : early_handshakes_) {
    recorder_->on_tls_handshake(start + config_.warmup, took, resumed);
  }
  early_handshakes_.clear();
  model_->start(*this, start, window_end_);
}

void worker::run(const run_control& control) {
  begin(control);
  while (turn()) wait_and_handle();
  end();
}

void worker::begin(const run_control& control) {
  control_ = &control;
  net::set_thread_timer_slack_1ns();
  to_mono_.refresh(clock_);
  cpu_before_ = clock_.thread_cpu();
}

bool worker::turn() {
  const nanoseconds now = read_clock();
  observe_interruption(now);
  model_->dispatch(now);
  dispatch_retries(now);
  serve_queue(now);
  check_deadlines(now);
  recorder_->set_in_flight(in_flight_.size());
  recorder_->roll_intervals(now);
  // Users that ended (on a response, a deadline or the cutoff) give back their connections.
  release_users(now);
  if (finished(now)) return false;
  plan_wait(now);
  return true;
}

void worker::wait_and_handle() {
  const net::waited w = poller_->wait(plan_);
  // How a pause shows from inside: a wake-up that landed long after the instant asked for, the
  // timer's or the one the worker had to be awake by, however the wait ended (a paused worker's
  // wait often ends on the events that arrived meanwhile, not on its timer).
  nanoseconds& longest = stats_.longest_wake_lateness;
  longest = std::max(longest, w.woke - plan_.due);
  if (plan_.timer_sleep.count() > 0) {
    pacer_.learn(turn_at_ + plan_.timer_sleep, plan_.timer_sleep, w.timer_woke);
    longest = std::max(longest, w.timer_woke - (turn_at_ + plan_.timer_sleep));
  }
  if (plan_.socket_wait.count() > 0 && w.timed_out) {
    pacer_.learn(turn_at_ + plan_.socket_wait, plan_.socket_wait, w.woke);
    longest = std::max(longest, w.woke - (turn_at_ + plan_.socket_wait));
  }
  to_mono_.refresh_every(clock_, clock_remap, w.woke);
  ++stats_.wakeups;
  // Each event reads the clock itself, after its read: a batch can take long enough that one
  // clock read for all of it would date completions (and so service times) too early.
  for (const auto& ev : w.events) on_event(ev);
}

void worker::end() {
  finish_unfinished();
  stats_.cpu = clock_.thread_cpu() - cpu_before_;
  stats_.busy_wall = clock_.now() - start_;
  stats_.sleeps = poller_->sleeps();
}

void worker::observe_interruption(nanoseconds now) noexcept {
  if (interrupted_ || !control_->interrupted.load(std::memory_order_acquire)) return;
  interrupted_ = true;
  interrupted_at_ = nanoseconds{control_->interrupted_at_ns.load(std::memory_order_acquire)};
  window_end_ = std::min(window_end_, std::max(interrupted_at_, start_));
  recorder_->end_window(interrupted_at_);
  model_->interrupt(interrupted_at_);
  drain_until_ = std::max(now, interrupted_at_) + interrupt_drain;
}

void worker::on_final(const record::request_times& t, record::outcome o, nanoseconds at) noexcept {
  model_->on_final(t, o, at);
  if (tap_) tap_->on_final(id_, t, o, at);
}

// Every instant the worker stamps on a request (dispatched, assigned, sent) is its moment():
// the clock is read again only after a system call, which takes time. So a request got to,
// given its slot and written with no system call in between has one instant for all three, and
// a request a turn gets to after another's write was got to after that write: the wait is its
// send lag, and its response time is exactly send lag + queue wait + connect time + service time.
nanoseconds worker::read_clock() noexcept {
  io_since_read_ = false;
  return now_ = clock_.now();
}

// A first attempt the model made due: the retry budget gets its deposit. It is got to at the
// worker's moment, not at the model's `now` (the turn's start), which the turn's writes so far
// have left behind.
void worker::dispatched(record::request_times& t, nanoseconds) {
  budget_.on_first_attempt();
  t.dispatched = moment();
  if (!stats_.first_dispatch)
    stats_.first_dispatch = run::dispatch_instant{t.dispatched, t.intended};
  recorder_->on_dispatched(t);
}

// A retry whose backoff ended: dispatched now, then a slot or the queue.
void worker::admit(record::request_times& t, nanoseconds now) {
  t.dispatched = moment();
  recorder_->on_dispatched(t);
  enqueue(t, now);
}

// Its own retries due by now, and others' it claims (retry_home.hpp).
void worker::dispatch_retries(nanoseconds now) {
  retries_.take_due(now, *recorder_, [this, now](record::request_times& t) { admit(t, now); });
}

// A due attempt goes to a free slot if the queue is empty, else waits in the queue.
void worker::enqueue(const record::request_times& t, nanoseconds now) {
  // Got to only after its deadline (the generator fell that far behind): never sent.
  if (now >= deadlines_.chain(t)) return recorder_->on_timeout(t, config_.timeout);
  // A user's request waits for its own slot alone, never behind another user's.
  if ((queue_.empty() || traits_.users_own_slots) && assign(t, now)) return;
  if (const auto why = all_broken(now)) return fail_unsent(t, *why, now);
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
  if (!policy.enabled() || !policy.retries_on(why) || t.attempt >= policy.retries || interrupted_) {
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
  recorder_->on_attempt_failed(t, now, answered);
  if (tap_) tap_->on_retry(id_, t, now, why);
  record::request_times next;
  next.intended = t.intended;
  next.due = due;
  next.index = t.index;
  next.name = t.name;
  next.arrival = t.arrival;
  next.user = t.user;
  next.step = t.step;
  next.attempt = t.attempt + 1;
  next.why = why;
  retries_.add(next);
  return true;
}

void worker::serve_queue(nanoseconds now) {
  // Users' requests each wait for their own slot: every one is tried, in turn.
  std::size_t tries = traits_.users_own_slots ? queue_.size() : ~std::size_t{0};
  while (!queue_.empty() && tries-- > 0) {
    // A retry can sit behind requests with later deadlines: do not send it once it is too late.
    if (deadlines_.chain(queue_.front()) <= now) {
      recorder_->on_timeout(queue_.front(), config_.timeout);
    } else if (!assign(queue_.front(), now)) {
      if (const auto why = all_broken(now)) {
        fail_unsent(queue_.front(), *why, now);
      } else {
        if (!traits_.users_own_slots) return;
        queue_.push(queue_.front());
      }
    }
    queue_.pop();
  }
}

// Binds a due request to a free slot: on an idle connection, else on one that is (re)connecting,
// else on a closed one it reopens. False when every slot is taken.
bool worker::assign(const record::request_times& t, nanoseconds now) {
  slot* chosen = free_slot(t, now);
  if (!chosen) return false;
  ++assigned_;
  connection& c = connection_of(*chosen);
  chosen->times = t;
  chosen->times.assigned = moment();
  mark_busy(*chosen);
  // An HTTP/2 connection that is busy carries other streams and takes this one at once; its
  // queue wait is taken when it is written (mark_sent).
  if (set_up(c)) {
    send_request(*chosen, now);
    return true;
  }
  // It waits for its connection to open: its queue wait ends here, its connect time begins.
  chosen->times.had_to_connect = true;
  recorder_->on_assigned(chosen->times);
  if (c.state == conn_state::closed) start_connect(c, now);
  return true;
}

slot* worker::free_slot(const record::request_times& t, nanoseconds now) noexcept {
  if (traits_.users_own_slots) return user_slot(t, now);
  if (multiplexed_) return least_loaded(now);
  if (!idle_.empty()) {
    connection& c = connections_[idle_.back()];
    idle_.pop_back();
    return next_free(c);
  }
  return reopenable(now, false);
}

// The user's own slot, when it can take the request now (slot_ready_at).
slot* worker::user_slot(const record::request_times& t, nanoseconds now) noexcept {
  if (t.user == 0 || t.user > slots_.size()) return nullptr;
  return slot_ready_at(t.user - 1, now) <= now ? &slots_[t.user - 1] : nullptr;
}

nanoseconds worker::slot_ready_at(std::uint32_t k, nanoseconds now) const noexcept {
  const slot& s = slots_[k];
  if (s.busy) return nanoseconds::max();
  const connection& c = connection_of(s);
  switch (c.state) {
    case conn_state::idle:
    case conn_state::busy:
      return c.in_flight < c.codec->capacity() && !c.peer_closing ? now : nanoseconds::max();
    case conn_state::connecting:
      return now;
    case conn_state::closed:
      // A user's own connection opens for its request whenever that comes.
      return traits_.connections_ahead ? c.retry_at : now;
  }
  return nanoseconds::max();
}

// HTTP/2: the connection with the fewest requests in flight and room for one more (the lowest
// index on a tie, so -t1 and -t2 place requests alike); else one that is connecting with room,
// or a closed one to reopen.
slot* worker::least_loaded(nanoseconds now) noexcept {
  connection* best = nullptr;
  for (auto& c : connections_) {
    if (!set_up(c) || c.peer_closing) continue;
    if ((best && c.in_flight >= best->in_flight) || c.in_flight >= c.codec->capacity()) continue;
    best = &c;
  }
  if (best) return next_free(*best);
  return reopenable(now, true);
}

// A connection that is connecting with a free slot, or closed and free to reopen. While every
// connection is busy, serve_queue asks again on every turn of the loop (about every
// microsecond); a connection closed meanwhile waits for the search at most free_scan_pause.
slot* worker::reopenable(nanoseconds now, bool multiplexed) noexcept {
  if (now - no_free_at_ < free_scan_pause) return nullptr;
  for (auto& c : connections_) {
    const bool room = multiplexed ? c.in_flight < c.slot_count : c.in_flight == 0;
    const bool connecting = c.state == conn_state::connecting && room;
    const bool closed = c.state == conn_state::closed && c.retry_at <= now;
    if (connecting || closed) return next_free(c);
  }
  no_free_at_ = now;
  return nullptr;
}

// A user whose connection is its own ended: the connection closes, and only then is its slot
// free for the next user, who will open its own (and handshake in full: a new user is a new
// browser).
void worker::release_users(nanoseconds now) {
  std::uint32_t k = 0;
  while (model_->next_released(k)) {
    connection& c = connection_of(slots_[k]);
    if (c.state != conn_state::closed) close_connection(c, now);
    c.transport->forget_session();
    model_->released(k);
  }
}

void worker::check_deadlines(nanoseconds now) {
  while (!queue_.empty() && deadlines_.chain(queue_.front()) <= now) {
    recorder_->on_timeout(queue_.front(), config_.timeout);
    queue_.pop();
  }
  // Nothing can be due before next_wake's recent scan said (see there). Past it, what the scan
  // found is dealt with below, so the next wake-up scans again.
  if (now < scan_.wake && now - scan_.at < scan_reuse) return;
  scan_.at = nanoseconds::min() / 2;
  // From the back: a slot that frees swaps the last one, already seen, into its place.
  for (std::size_t i = in_flight_.size(); i-- > 0;) {
    if (i >= in_flight_.size()) continue;  // a check freed more than one slot
    slot& s = slots_[in_flight_[i]];
    if (deadlines_.attempt(s.times) <= now) {
      check_deadline(s, now);
    } else if (!traits_.connections_ahead && connection_of(s).state == conn_state::connecting) {
      check_connect_timeout(connection_of(s), now);
    }
  }
  if (!traits_.connections_ahead) return;
  for (auto& c : connections_) {
    if (c.state == conn_state::connecting) check_connect_timeout(c, now);
  }
}

void worker::mark_busy(slot& s) noexcept {
  s.busy = true;
  connection& c = connection_of(s);
  c.in_flight++;
  // The slot is on its connection's free stack: on top, unless a user's own slot was taken.
  const auto k = static_cast<std::uint32_t>(&s - slots_.data());
  auto& free = c.free_slots;
  if (free.back() != k) std::swap(*std::find(free.begin(), free.end(), k), free.back());
  free.pop_back();
  s.in_flight_at = static_cast<std::uint32_t>(in_flight_.size());
  in_flight_.push_back(k);
}

void worker::mark_free(slot& s) noexcept {
  if (!s.busy) return;
  // Framed but never written (its connection failed, or it was cancelled, first): its wait for
  // a slot counts all the same.
  if (s.unwritten) {
    s.unwritten = false;
    recorder_->on_assigned(s.times);
  }
  connection& c = connection_of(s);
  c.in_flight--;
  c.free_slots.push_back(static_cast<std::uint32_t>(&s - slots_.data()));
  no_free_at_ = std::chrono::hours(-1);  // a slot is free: the next search must look
  const std::uint32_t last = in_flight_.back();
  in_flight_[s.in_flight_at] = last;
  slots_[last].in_flight_at = s.in_flight_at;
  in_flight_.pop_back();
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
  const bool sent = c.state == conn_state::busy && (s.times.sent.count() != 0 || s.unwritten);
  if (sent && c.codec->counts_per_stream())
    count_stream_bytes(s, c.codec->bytes_of(local_index(s)));
  const bool carries_on = sent ? c.codec->cancel(local_index(s)) : c.in_flight > 1;
  mark_free(s);
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
  if (c.state != conn_state::closed) close_connection(c, now, close_cause::failed);
}

// An attempt that ran out of time. Past an --attempt-timeout (not the chain's) it may be
// retried; otherwise the request ends as a timeout, recorded at exactly its deadline.
void worker::time_out(const record::request_times& t, const attempt_ending& e, nanoseconds now) {
  if (e.chain_over || !retry(t, record::retry_cause::timeout, now, false)) {
    recorder_->on_timeout(t, e.value);
  }
}

nanoseconds worker::next_wake(nanoseconds now) noexcept {
  nanoseconds wake = std::min(recorder_->next_interval_boundary(), model_->next_due(now));
  if (!queue_.empty()) wake = std::min(wake, deadlines_.chain(queue_.front()));
  wake = std::min(wake, retries_.next_due());
  if (interrupted_) wake = std::min(wake, drain_until_);
  // At high rates the loop turns every few microseconds and the scan of every connection below
  // was a tenth of the CPU. What it finds are timeouts and reconnects, not sends, so a scan
  // younger than scan_reuse serves when the thread wakes within that anyway.
  const bool reuse = wake - now < scan_reuse && now - scan_.at < scan_reuse;
  if (!reuse) scan_connections(now);
  return std::max(std::min(wake, scan_.wake), now);
}

void worker::scan_connections(nanoseconds now) noexcept {
  nanoseconds wake = nanoseconds::max();
  bool awaits_socket = false;
  for (const std::uint32_t i : in_flight_) {
    const slot& s = slots_[i];
    wake = std::min(wake, deadlines_.attempt(s.times));
    // A user's connection connects or blocks a write only with its request in flight.
    if (!traits_.connections_ahead) note_connection(connection_of(s), wake, awaits_socket);
  }
  if (traits_.connections_ahead) {
    // A closed connection can take a queued request once its backoff is over and the search
    // for a free slot looks again (reopenable); a user's request waits for its own.
    const bool reopens = !queue_.empty() && !traits_.users_own_slots;
    const nanoseconds search = no_free_at_ + free_scan_pause;
    for (const auto& c : connections_) {
      note_connection(c, wake, awaits_socket);
      if (reopens && c.state == conn_state::closed)
        wake = std::min(wake, std::max(c.retry_at, search));
    }
  }
  scan_ = {wake, now, awaits_socket};
}

// A connecting connection's timeout, and whether a request waits on this connection's socket
// (a connect or a blocked write), not on a response: then its events must not wait.
void worker::note_connection(const connection& c, nanoseconds& wake,
                             bool& awaits_socket) const noexcept {
  if (c.state != conn_state::connecting && !c.write_blocked) return;
  if (c.in_flight) awaits_socket = true;
  if (c.state == conn_state::connecting)
    wake = std::min(wake, c.connect_started + config_.connect_timeout);
}

// Plans the wait as the pacer says. Responses may wait unread for the next due wake-up (their
// receive stamps date them) as far as the codecs and the model allow, and not while requests
// queue (a response frees a connection one of them needs) or a request waits on its
// connection's connect or blocked write.
void worker::plan_wait(nanoseconds now) noexcept {
  flush_deferred(now);
  const nanoseconds wake_at = next_wake(now);
  const bool can_defer = codecs_allow_deferred_reads_ && queue_.empty() && !scan_.awaits_socket &&
                         model_->reads_may_wait();
  turn_at_ = now;
  plan_ = pacer_.plan(now, wake_at, can_defer);
}

bool worker::finished(nanoseconds now) const noexcept {
  if (interrupted_ && now >= drain_until_) return true;
  return model_->idle(now) && queue_.empty() && retries_.empty() && in_flight_.empty();
}

void worker::finish_unfinished() {
  for (; !queue_.empty(); queue_.pop()) recorder_->on_unfinished(queue_.front(), interrupted_at_);
  retries_.clear(*recorder_, [this](const record::request_times& t) {
    recorder_->on_unfinished(t, interrupted_at_);
  });
  while (!in_flight_.empty()) {
    slot& s = slots_[in_flight_.back()];
    recorder_->on_unfinished(s.times, interrupted_at_);
    mark_free(s);
  }
  model_->finish();
}

}  // namespace punctual::engine
