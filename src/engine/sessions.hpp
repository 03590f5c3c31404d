// The hybrid model's users on one worker (docs/scenario.md). Users arrive by the open schedule;
// each draws a scenario and becomes a session that runs its steps in order. A step's outcome
// moves its session on: the next step is intended at that step's completion plus its think
// time, or, after a failure under on_error abort, the rest of the session is skipped. The driver
// only decides what is due; the worker sends it like any other request (hybrid_load.hpp puts
// the driver behind the load-model seam).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request_source.hpp"
#include "http/cookie_jar.hpp"
#include "record/recorder.hpp"
#include "run/config.hpp"
#include "schedule/weighted.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

class session_driver final : public record::outcome_listener {
 public:
  // max_users: this worker's share of the cap (0: unbounded). cutoff: steps due at or after it
  // are skipped (the window's end plus the graceful stop).
  session_driver(const run::hybrid_model& hybrid, std::uint64_t seed, std::uint32_t max_users);

  // Where the driver records its sessions and steps; its own outcomes reach it through
  // on_final, which whoever listens to the recorder calls.
  void attach(record::recorder& r, nanoseconds cutoff) noexcept;

  enum class arrival_fate : std::uint8_t { admit, wait, dropped };
  // User `user` arrives, intended at `at`: draws its scenario and plans its steps. `first` is
  // its first step: to send now (admit), to keep waiting for a user slot (wait: the worker
  // dispatches it now, and next_due gives it back once a slot is free), or dropped with its
  // whole session (on_overload drop).
  arrival_fate arrive(std::uint64_t user, nanoseconds at, record::request_times& first);
  // The same for another worker's user claimed here (claim_walk.hpp): its owner planned its
  // steps, and this worker counts them as claimed in.
  arrival_fate arrive_claimed(std::uint64_t user, nanoseconds at, record::request_times& first);
  // User `user`, intended at `at`, is this worker's but another took it: its steps are planned
  // here and counted as claimed away; their outcomes are the claimer's.
  void pass(std::uint64_t user, nanoseconds at) noexcept;
  void wait_for_slot(const record::request_times& first);

  // A step due by `now`: a session's next step, or a waiting arrival that got a slot (its
  // `dispatched` is already set). False when nothing is due.
  bool next_due(nanoseconds now, record::request_times& out);
  nanoseconds earliest_due() const noexcept;  // nanoseconds::max() when nothing waits
  // The run ends or was interrupted: every step not started, and every waiting arrival, is
  // skipped with the rest of its session (a session already under way is cut: see cut()).
  void skip_waiting() noexcept;
  // Interrupted at `at`: nothing starts any more.
  void stop_at(nanoseconds at) noexcept {
    cutoff_ = std::min(cutoff_, at);
    skip_waiting();
  }
  bool idle() const noexcept { return active_ == 0 && waiting_.empty(); }

  // Whether a response may wait unread for up to `horizon`: when every think time that follows
  // a response is at least that long, the user's next step is due no earlier than the deferred
  // read, so the deferral holds nothing back; and when no arrival waits for the user slot that
  // a session's last response would free.
  bool reads_may_wait() const noexcept { return thinks_outlast_ && waiting_.empty(); }
  void set_read_horizon(nanoseconds horizon) noexcept;

  // connection: per_user. An ended session's slot (and so its connection, which has the same
  // number) is held until the worker has closed that connection and calls release(), so that
  // the next user of the slot opens a connection of its own.
  void hold_ended_slots() noexcept { hold_ended_ = true; }
  bool next_ended(std::uint32_t& slot) noexcept;
  void release(std::uint32_t slot) noexcept;

  void on_final(const record::request_times& t, record::outcome o,
                nanoseconds at) noexcept override;

  // Per-user data (session_data.cpp). A step that names variables is rendered with its user's
  // values, and one whose user holds cookies gets their Cookie header, into `scratch` (its slot's
  // room), which `request` then points into.
  void personalize(const record::request_times& t, wire_request& request, std::string& scratch);
  // Whether the step's whole response must be kept for take_response (cookies, captures).
  bool wants_response(const record::request_times& t) const noexcept;
  // Takes the response's cookies into its user's jar and, with `capture`, the step's captures;
  // false when a capture found nothing usable (the step is then an http_error, reason capture).
  bool take_response(const record::request_times& t, std::string_view response, bool capture);

 private:
  struct session {
    std::uint64_t user = 0;
    nanoseconds arrival{};
    std::uint16_t scenario = 0;
    std::uint16_t next_step = 0;                     // the step to send next
    record::outcome ended_by = record::outcome::ok;  // the first failure (continue), or ok
    bool in_use = false;
    std::uint16_t failed_step = 0;  // where ended_by happened
    nanoseconds last_end{};         // its latest step's final outcome
  };
  struct due_step {
    nanoseconds due{};
    std::uint32_t session = 0;
  };

  std::uint16_t draw_scenario(std::uint64_t user) const noexcept;
  // An arrival whose steps are counted: it starts, waits for a user slot, or is dropped.
  arrival_fate admit(std::uint64_t user, nanoseconds at, std::uint16_t scenario,
                     record::request_times& first);
  record::request_times step_times(std::uint32_t id, nanoseconds intended) const noexcept;
  std::uint32_t start_session(std::uint64_t user, nanoseconds arrival, std::uint16_t scenario);
  static bool due_later(const due_step& a, const due_step& b) noexcept { return a.due > b.due; }
  void plan_steps(std::uint16_t scenario, nanoseconds arrival) noexcept;
  void close_steps(std::uint64_t user, std::uint16_t scenario, nanoseconds arrival,
                   std::uint16_t first, record::outcome o, record::outcome session,
                   nanoseconds at) noexcept;
  void end(std::uint32_t id, std::uint16_t first_unsent, record::outcome o,
           nanoseconds at) noexcept;
  void schedule_next(std::uint32_t id, nanoseconds completed) noexcept;
  void cut(std::uint32_t id) noexcept;
  const run::hybrid_step& step_of(const record::request_times& t) const noexcept;
  void fill_values(std::uint32_t id);

  const run::hybrid_model& hybrid_;
  std::uint64_t seed_;
  std::uint32_t max_users_;
  schedule::weighted_choice choice_;  // of a scenario, by weight
  record::recorder* recorder_ = nullptr;
  nanoseconds cutoff_ = nanoseconds::max();
  std::vector<session> sessions_;
  std::vector<std::uint32_t> free_;
  std::uint32_t active_ = 0;
  std::vector<due_step> due_;                  // a min-heap on `due`
  std::deque<record::request_times> waiting_;  // arrivals waiting for a user slot, in order
  // Per session slot: its user's variables (hybrid_model::variables). Kept apart from
  // `sessions_` so a reused slot keeps its strings' room.
  bool hold_ended_ = false;
  bool thinks_outlast_ = false;       // set_read_horizon
  std::vector<std::uint32_t> ended_;  // held slots, ended but not yet released
  std::vector<std::vector<std::string>> values_;
  std::vector<http::cookie_jar> jars_;  // per session slot, when the file keeps cookies
  std::string body_;                    // scratch for a response body being captured from
  std::string cookie_value_;            // scratch for a Cookie header's value
};

}  // namespace punctual::engine
