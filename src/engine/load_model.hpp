// The load model, behind one seam (docs/design.md, "The engine's seams"). A model decides what is
// due and when, what a request's final outcome leads to (nothing, a user's next request after
// its think time, a session's next step), and whether a response may wait unread until the next
// wake-up. The worker keeps everything else: connections, slots, I/O, deadlines, retries and
// recording. Three models implement it: open_load (the schedule), closed_load (users that send
// when answered) and hybrid_load (sessions of users arriving by a schedule).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/claims.hpp"
#include "engine/config.hpp"
#include "engine/request_source.hpp"
#include "record/outcome.hpp"
#include "record/recorder.hpp"

namespace punctual::engine {

using nanoseconds = std::chrono::nanoseconds;

// What a model may ask of the worker that runs it.
class model_host {
 public:
  virtual record::recorder& recorder() noexcept = 0;
  // The generator got to a first attempt now: its send lag is taken (to the worker's own reading
  // of the clock, later than `now` when it has written since), and the retry budget gets its
  // deposit.
  virtual void dispatched(record::request_times& t, nanoseconds now) = 0;
  // A dispatched request takes a slot now, or waits in the worker's queue (queue wait).
  virtual void enqueue(const record::request_times& t, nanoseconds now) = 0;
  // When slot `slot` can take a request: `now` or earlier when it is free and its connection can
  // carry one more (set up with room, connecting, or closed and free to reopen), the end of the
  // reconnect backoff when it is closed after a failed connect, nanoseconds::max() when only an
  // event (a response, a set-up) can free it.
  virtual nanoseconds slot_ready_at(std::uint32_t slot, nanoseconds now) const noexcept = 0;
  // When this worker would send a request due at `due` (its coarse tick, or `due` itself): a
  // claimer counts the steal threshold from there (claims.hpp).
  virtual nanoseconds send_instant(nanoseconds due) const noexcept = 0;

 protected:
  ~model_host() = default;
};

// How a model's requests meet connections; fixed for a run.
struct model_traits {
  // A request goes to its user's own slot (request_times::user - 1), never another's.
  bool users_own_slots = false;
  // Every connection opens before the start and reopens at once when lost. Otherwise a
  // connection opens for its own user's request only, and closes when the model releases it.
  bool connections_ahead = true;
  // Due times have gaps of every length, so the pacer wakes early for every wait (pacer.hpp).
  bool uneven_gaps = false;
  // Requests are rendered into their slot's room, and responses kept whole: shared slots keep
  // room for them from the start.
  bool renders = false;
};

class load_model {
 public:
  virtual ~load_model() = default;

  virtual model_traits traits() const noexcept = 0;
  // Before the first turn: the recorder exists, and the run's instants are known.
  virtual void start(model_host& host, nanoseconds start, nanoseconds window_end) = 0;
  // Hands the host every request due by `now`.
  virtual void dispatch(nanoseconds now) = 0;
  // The earliest instant a request may come due (nanoseconds::max(): none until an outcome).
  virtual nanoseconds next_due(nanoseconds now) const noexcept = 0;
  // Nothing will come due any more except what outcomes still to come lead to.
  virtual bool idle(nanoseconds now) const noexcept = 0;
  // Every final outcome, after it is recorded (the recorder's listener, through the worker).
  virtual void on_final(const record::request_times& t, record::outcome o,
                        nanoseconds at) noexcept = 0;
  // Whether a response may wait unread for the next due wake-up (its receive stamp dates it):
  // not when a user waits on it to send its next request.
  virtual bool reads_may_wait() const noexcept = 0;
  // The window was cut short at `at`: nothing more starts.
  virtual void interrupt(nanoseconds at) = 0;
  // The run is over: whatever still waits inside the model ends (skipped).
  virtual void finish() = 0;

  // What goes on the wire for `t`: bytes that stay valid until its attempt ends, the model's own
  // or rendered into `room` (its slot's, kept from one request to the next).
  virtual wire_request request(const record::request_times& t, std::string& room) = 0;
  // Whether `t`'s response must be kept whole for take_response.
  virtual bool keeps_response(const record::request_times& t) const noexcept = 0;
  // `t`'s kept response was final: false when what the model takes from it was not there.
  virtual bool take_response(const record::request_times& t, std::string_view response,
                             bool checks_pass) = 0;

  // A user whose connection must be closed before its slot serves another user (false: none),
  // and the worker's word that it is.
  virtual bool next_released(std::uint32_t& slot) noexcept = 0;
  virtual void released(std::uint32_t slot) noexcept = 0;
};

// A model whose requests are the request source's, that keeps nothing of a response and gives
// no connection back: the open and closed models.
class source_requests : public load_model {
 public:
  explicit source_requests(const request_source& requests) : requests_(requests) {}
  wire_request request(const record::request_times& t, std::string&) override {
    return requests_.request(t.name);
  }
  bool keeps_response(const record::request_times&) const noexcept override { return false; }
  bool take_response(const record::request_times&, std::string_view, bool) override { return true; }
  bool next_released(std::uint32_t&) noexcept override { return false; }
  void released(std::uint32_t) noexcept override {}

 protected:
  const request_source& requests_;
};

// The model `config` names, for worker `worker` with `slots` request slots; `claims`: the
// shard's claim board, or null.
std::unique_ptr<load_model> make_load_model(const run_config& config, std::uint32_t worker,
                                            std::uint32_t slots, const request_source& requests,
                                            claim_board* claims = nullptr);

}  // namespace punctual::engine
