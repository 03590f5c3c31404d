#include "engine/sessions.hpp"

#include <algorithm>

#include "schedule/prng.hpp"
#include "schedule/think.hpp"
#include "schedule/weighted.hpp"

namespace punctual::engine {
namespace {

// Room for this many concurrent users before the session table grows (unbounded --max_users).
constexpr std::size_t session_reserve = 4096;

std::vector<double> scenario_weights(const run::hybrid_model& h) {
  std::vector<double> w;
  for (const auto& s : h.scenarios) w.push_back(s.weight);
  return w;
}

}  // namespace

session_driver::session_driver(const run::hybrid_model& hybrid, std::uint64_t seed,
                               std::uint32_t max_users)
    : hybrid_(hybrid), seed_(seed), max_users_(max_users), choice_(scenario_weights(hybrid)) {
  const std::size_t room = max_users ? max_users : session_reserve;
  sessions_.reserve(room);
  values_.reserve(room);
  jars_.reserve(room);
  ended_.reserve(room);
  free_.reserve(room);
  due_.reserve(room);
}

void session_driver::attach(record::recorder& r, nanoseconds cutoff) noexcept {
  recorder_ = &r;
  cutoff_ = cutoff;
}

std::uint16_t session_driver::draw_scenario(std::uint64_t user) const noexcept {
  return static_cast<std::uint16_t>(
      choice_.pick(schedule::keyed_unit(seed_, schedule::draw_purpose::scenario, user)));
}

// The request of session `id`'s next step, intended at `intended`.
record::request_times session_driver::step_times(std::uint32_t id,
                                                 nanoseconds intended) const noexcept {
  const session& s = sessions_[id];
  record::request_times t;
  t.intended = intended;
  t.arrival = s.arrival;
  t.index = s.user;
  t.user = id + 1;
  t.step = s.next_step;
  t.name = hybrid_.scenarios[s.scenario].steps[s.next_step].name;
  return t;
}

// A step belongs to its session's arrival: every step of the drawn scenario is planned now.
void session_driver::plan_steps(std::uint16_t scenario, nanoseconds arrival) noexcept {
  const auto& sc = hybrid_.scenarios[scenario];
  recorder_->on_session_planned(arrival, sc.session_name);
  for (std::size_t k = 0; k < sc.steps.size(); ++k) {
    recorder_->on_planned(arrival, sc.steps[k].name, k == 0);
  }
}

void session_driver::pass(std::uint64_t user, nanoseconds at) noexcept {
  const std::uint16_t scenario = draw_scenario(user);
  plan_steps(scenario, at);
  for (std::size_t k = 0; k < hybrid_.scenarios[scenario].steps.size(); ++k) {
    recorder_->on_claimed_out(at);
  }
}

session_driver::arrival_fate session_driver::arrive(std::uint64_t user, nanoseconds at,
                                                    record::request_times& first) {
  const std::uint16_t scenario = draw_scenario(user);
  plan_steps(scenario, at);
  return admit(user, at, scenario, first);
}

session_driver::arrival_fate session_driver::arrive_claimed(std::uint64_t user, nanoseconds at,
                                                            record::request_times& first) {
  const std::uint16_t scenario = draw_scenario(user);
  for (std::size_t k = 0; k < hybrid_.scenarios[scenario].steps.size(); ++k) {
    recorder_->on_claimed_in(at);
  }
  return admit(user, at, scenario, first);
}

session_driver::arrival_fate session_driver::admit(std::uint64_t user, nanoseconds at,
                                                   std::uint16_t scenario,
                                                   record::request_times& first) {
  const bool full = max_users_ != 0 && active_ >= max_users_;
  if (full && hybrid_.drop_on_overload) {
    close_steps(user, scenario, at, 0, record::outcome::dropped, record::outcome::dropped, at);
    return arrival_fate::dropped;
  }
  if (full) {
    // It waits for a user slot as the first step of a session not started yet.
    first = record::request_times{};
    first.intended = first.arrival = at;
    first.index = user;
    first.name = hybrid_.scenarios[scenario].steps[0].name;
    return arrival_fate::wait;
  }
  first = step_times(start_session(user, at, scenario), at);
  return arrival_fate::admit;
}

std::uint32_t session_driver::start_session(std::uint64_t user, nanoseconds arrival,
                                            std::uint16_t scenario) {
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(sessions_.size());
    sessions_.emplace_back();
    values_.emplace_back();
    jars_.emplace_back();
  }
  sessions_[id] = {user, arrival, scenario, 0, record::outcome::ok, true, 0, arrival};
  fill_values(id);
  ++active_;
  return id;
}

void session_driver::wait_for_slot(const record::request_times& first) {
  waiting_.push_back(first);
}

// Ends a session at `at` with outcome `session`: its steps from `first` on, never to be sent,
// end `o` (dropped over max_users, else skipped).
void session_driver::close_steps(std::uint64_t user, std::uint16_t scenario, nanoseconds arrival,
                                 std::uint16_t first, record::outcome o, record::outcome session,
                                 nanoseconds at) noexcept {
  const auto& sc = hybrid_.scenarios[scenario];
  record::request_times t;
  t.intended = t.arrival = t.dispatched = arrival;
  t.index = user;
  for (std::size_t k = first; k < sc.steps.size(); ++k) {
    t.name = sc.steps[k].name;
    t.step = static_cast<std::uint16_t>(k);
    if (o == record::outcome::dropped) {
      recorder_->on_dropped(t);
    } else {
      recorder_->on_skipped(t);
    }
  }
  recorder_->on_session_end(arrival, sc.session_name, session, at);
}

bool session_driver::next_due(nanoseconds now, record::request_times& out) {
  if (!waiting_.empty() && (max_users_ == 0 || active_ < max_users_)) {
    out = waiting_.front();
    waiting_.pop_front();
    // The scenario drawn at arrival: the draw is a pure function of the user.
    out.user = start_session(out.index, out.arrival, draw_scenario(out.index)) + 1;
    return true;
  }
  if (due_.empty() || due_.front().due > now) return false;
  std::pop_heap(due_.begin(), due_.end(), due_later);
  const due_step d = due_.back();
  due_.pop_back();
  out = step_times(d.session, d.due);
  return true;
}

nanoseconds session_driver::earliest_due() const noexcept {
  if (!waiting_.empty() && (max_users_ == 0 || active_ < max_users_)) return nanoseconds::min();
  return due_.empty() ? nanoseconds::max() : due_.front().due;
}

void session_driver::on_final(const record::request_times& t, record::outcome o,
                              nanoseconds at) noexcept {
  if (t.user == 0 || o == record::outcome::skipped) return;
  const std::uint32_t id = t.user - 1;
  session& s = sessions_[id];
  if (!s.in_use) return;
  const bool failed = o != record::outcome::ok;
  if (failed && s.ended_by == record::outcome::ok) {
    s.ended_by = o;
    s.failed_step = t.step;
  }
  s.last_end = at;
  const auto& steps = hybrid_.scenarios[s.scenario].steps;
  const auto next = static_cast<std::uint16_t>(t.step + 1);
  const bool go_on = o != record::outcome::unfinished && o != record::outcome::dropped &&
                     (!failed || hybrid_.continue_on_error);
  if (!go_on || next >= steps.size()) return end(id, next, s.ended_by, at);
  s.next_step = next;
  schedule_next(id, at + schedule::draw_think(steps[t.step].think, seed_, s.user, t.step));
}

// The next step is intended at `due`; one that would start at or after the cutoff never starts.
void session_driver::schedule_next(std::uint32_t id, nanoseconds due) noexcept {
  if (due >= cutoff_) return cut(id);
  due_.push_back({due, id});
  std::push_heap(due_.begin(), due_.end(), due_later);
}

// The run stops session `id` before its next step (the graceful stop passed, or the run was
// interrupted). The user never got to finish, so the session is unfinished, unless a step had
// already failed under on_error: continue, which stays its outcome. Its time ends at its last
// step's end, the last instant anyone saw it: the unsent step's intended time can lie past the
// run's end.
void session_driver::cut(std::uint32_t id) noexcept {
  const session& s = sessions_[id];
  const record::outcome o =
      s.ended_by == record::outcome::ok ? record::outcome::unfinished : s.ended_by;
  end(id, s.next_step, o, s.last_end);
}

// Ends session `id` at `at`: steps from `first_unsent` on were never started (skipped).
void session_driver::end(std::uint32_t id, std::uint16_t first_unsent, record::outcome o,
                         nanoseconds at) noexcept {
  session& s = sessions_[id];
  // failed_at counts failures: a session the run stopped (unfinished) failed nowhere.
  if (o != record::outcome::ok && o != record::outcome::unfinished) {
    recorder_->on_session_failed_at(s.arrival,
                                    hybrid_.scenarios[s.scenario].steps[s.failed_step].name);
  }
  close_steps(s.user, s.scenario, s.arrival, first_unsent, record::outcome::skipped, o, at);
  s.in_use = false;
  if (hold_ended_) {
    ended_.push_back(id);
  } else {
    release(id);
  }
}

void session_driver::set_read_horizon(nanoseconds horizon) noexcept {
  thinks_outlast_ = true;
  for (const auto& sc : hybrid_.scenarios) {
    for (std::size_t i = 0; i + 1 < sc.steps.size(); ++i) {
      // The shortest think each shape can draw: an exponential one can draw zero.
      const auto& t = sc.steps[i].think;
      const nanoseconds least =
          t.shape == schedule::think_time::kind::exponential ? nanoseconds{0} : t.a;
      thinks_outlast_ = thinks_outlast_ && least >= horizon;
    }
  }
}

bool session_driver::next_ended(std::uint32_t& slot) noexcept {
  if (ended_.empty()) return false;
  slot = ended_.back();
  ended_.pop_back();
  return true;
}

void session_driver::release(std::uint32_t slot) noexcept {
  free_.push_back(slot);
  --active_;
}

void session_driver::skip_waiting() noexcept {
  for (const auto& d : due_) {
    if (sessions_[d.session].in_use) cut(d.session);
  }
  due_.clear();
  for (const auto& first : waiting_) {
    close_steps(first.index, draw_scenario(first.index), first.arrival, 0, record::outcome::skipped,
                record::outcome::skipped, first.arrival);
  }
  waiting_.clear();
}

}  // namespace punctual::engine
