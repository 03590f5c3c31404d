// The hybrid model (docs/design.md, "Workload models"; docs/scenario.md): users arrive by the
// schedule, and each runs a scenario's steps as a closed loop, each step intended at the last
// one's completion plus its think time. The session driver (sessions.hpp) owns the users; this
// puts it behind the load-model seam, with its users' connections: shared by all (pool), or one
// per user (per_user), opened by the user's first step and closed when its session ends.
#pragma once

#include "engine/arrivals.hpp"
#include "engine/claim_walk.hpp"
#include "engine/load_model.hpp"
#include "engine/sessions.hpp"

namespace punctual::engine {

class hybrid_load final : public load_model, private claim_walk::model {
 public:
  // `slots`: the worker's request slots, which are its user slots with a connection per user.
  // `board`: the shard's claim board when users share the connections, else null: a user's
  // arrival (its first step) is then claimed like an open model's request, and the user runs
  // on the claimer (claim_walk.hpp). Later steps stay on their user's worker.
  hybrid_load(const run_config& config, std::uint32_t worker, std::uint32_t slots,
              const request_source& requests, claim_board* board = nullptr);

  model_traits traits() const noexcept override { return {per_user_, !per_user_, true, true}; }
  void start(model_host& host, nanoseconds start, nanoseconds window_end) override;
  void dispatch(nanoseconds now) override;
  nanoseconds next_due(nanoseconds now) const noexcept override {
    return claims_.next_due(
        now, std::min(arrivals_.next_due(), std::max(sessions_.earliest_due(), now)));
  }
  bool idle(nanoseconds) const noexcept override {
    return arrivals_.over() && sessions_.idle() && claims_.others_done();
  }
  void on_final(const record::request_times& t, record::outcome o,
                nanoseconds at) noexcept override {
    sessions_.on_final(t, o, at);
  }
  bool reads_may_wait() const noexcept override { return sessions_.reads_may_wait(); }
  void interrupt(nanoseconds at) override {
    arrivals_.cut(at);
    claims_.interrupt(at);
    sessions_.stop_at(at);
  }
  void finish() override {
    claims_.finish(arrivals_, *this);
    sessions_.skip_waiting();
  }

  wire_request request(const record::request_times& t, std::string& room) override {
    wire_request r = requests_.request(t.name);
    sessions_.personalize(t, r, room);
    return r;
  }
  bool keeps_response(const record::request_times& t) const noexcept override {
    return sessions_.wants_response(t);
  }
  bool take_response(const record::request_times& t, std::string_view response,
                     bool checks_pass) override {
    return sessions_.take_response(t, response, checks_pass);
  }
  bool next_released(std::uint32_t& slot) noexcept override { return sessions_.next_ended(slot); }
  void released(std::uint32_t slot) noexcept override { sessions_.release(slot); }

 private:
  void dispatch_arrivals(nanoseconds now);
  void place(session_driver::arrival_fate fate, record::request_times& first, nanoseconds now);
  void passed(const arrivals& own) override { sessions_.pass(own.next().index, own.at()); }
  void claimed(const arrivals& other, nanoseconds now) override;

  arrivals arrivals_;
  const request_source& requests_;
  bool per_user_;
  nanoseconds graceful_stop_;
  session_driver sessions_;
  claim_walk claims_;
  model_host* host_ = nullptr;
};

}  // namespace punctual::engine
