// One simulated run: the real engine (engine::load_run, its workers, recorders and collector) on
// a virtual clock, the in-memory network and the scripted server, stepped one worker turn at a
// time on one thread. The tap sees every request's attempts and final outcome; the server's log
// and the network's byte logs say what really happened, so checks.hpp can hold each request to
// the truth exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "engine/config.hpp"
#include "engine/run.hpp"
#include "engine/tap.hpp"
#include "network.hpp"
#include "poller.hpp"
#include "server.hpp"
#include "transport.hpp"
#include "world.hpp"

namespace punctual::sim {

// A worker frozen as a host deschedules a vCPU: no turn runs while virtual time passes.
struct pause {
  std::uint32_t worker = 0;
  nanoseconds from{};  // from the schedule's start
  nanoseconds length{};
};

// The collecting thread frozen the same way: no poll of the workers' intervals and seconds.
struct collector_pause {
  nanoseconds from{};  // from the schedule's start
  nanoseconds length{};
};

struct setup {
  engine::run_config config;
  server_script server;
  link up;
  link down;
  std::vector<pause> pauses;
  std::vector<collector_pause> collector_pauses;
  std::optional<nanoseconds> interrupt_at;  // from the schedule's start
  std::uint64_t seed = 1;                   // the world's (network splits, server draws)
  std::size_t max_events = 256;             // the most events one wait returns
};

// An attempt as it went out (`t.sent` is zero for one framed but never written).
struct sent_attempt {
  std::uint64_t sim_id = 0;
  std::uint32_t worker = 0;
  std::uint64_t connection = 0;  // the network connection's serial
  record::request_times t;
};

// An attempt that failed and was retried.
struct retried_attempt {
  std::uint32_t worker = 0;
  record::request_times t;
  nanoseconds at{};
  record::retry_cause why{};
};

// A request's final outcome.
struct final_outcome {
  std::uint32_t worker = 0;
  record::request_times t;
  record::outcome outcome{};
  nanoseconds at{};
  std::uint64_t sim_id = 0;  // its last attempt sent (0: none was)
};

class simulation final : private engine::request_tap {
 public:
  explicit simulation(setup s);
  ~simulation();
  simulation(const simulation&) = delete;
  simulation& operator=(const simulation&) = delete;

  // Where each interval goes as the collector emits it (before run()).
  void set_sink(engine::interval_sink sink) { sink_ = std::move(sink); }
  // Called after each poll of the collector and after its finish, as load_run calls it.
  void set_poll_hook(engine::poll_hook hook) { poll_hook_ = std::move(hook); }
  // Runs `probe` at `offset` from the schedule's start (before run(): the start is fixed once
  // the connections are open), e.g. to look at the run then, or to change the server.
  void at_offset(nanoseconds offset, std::function<void()> probe) {
    probes_.emplace_back(offset, std::move(probe));
  }
  scripted_server& server() noexcept { return *server_; }
  // Runs to the end of the drain. False when the run could not start (failure() says why).
  bool run();

  const setup& settings() const noexcept { return setup_; }
  const run::result& result() const noexcept { return result_; }
  const std::optional<std::string>& failure() const noexcept { return failure_; }
  engine::load_run& engine() noexcept { return *run_; }
  // Worker `w`'s poller.
  const sim_poller& poller(std::size_t w) const { return *pollers_[w]; }
  // The run's collector (valid once run() has started it, e.g. in a probe).
  const engine::run_collector& collector() const noexcept { return *collector_; }
  const scripted_server& server() const noexcept { return *server_; }
  const network& net() const noexcept { return *net_; }
  world& sim() noexcept { return *world_; }

  const std::vector<sent_attempt>& sent() const noexcept { return sent_; }
  const std::vector<retried_attempt>& retried() const noexcept { return retried_; }
  const std::vector<final_outcome>& finals() const noexcept { return finals_; }
  const sent_attempt* attempt(std::uint64_t sim_id) const noexcept {
    return sim_id == 0 || sim_id > sent_.size() ? nullptr : &sent_[sim_id - 1];
  }

 private:
  void on_framing(std::uint32_t worker, const record::request_times& t,
                  std::uint32_t connection) override;
  void on_sent(std::uint32_t worker, const record::request_times& t) override;
  void on_retry(std::uint32_t worker, const record::request_times& t, nanoseconds at,
                record::retry_cause why) override;
  void on_final(std::uint32_t worker, const record::request_times& t, record::outcome o,
                nanoseconds at) override;
  void step(std::uint32_t worker);
  void poll();

  setup setup_;
  std::unique_ptr<world> world_;
  std::unique_ptr<network> net_;
  std::unique_ptr<scripted_server> server_;
  std::vector<sim_transport*> transports_;      // in the order the workers made them
  std::vector<std::uint32_t> first_transport_;  // per worker, its first in transports_
  std::vector<sim_poller*> pollers_;
  std::uint64_t pending_id_ = 0;  // the attempt on_framing saw last, for the tagging codec
  std::unique_ptr<engine::load_run> run_;
  std::unique_ptr<engine::run_collector> collector_;
  engine::interval_sink sink_;
  engine::poll_hook poll_hook_;
  run::result result_;
  std::optional<std::string> failure_;
  std::vector<std::pair<nanoseconds, std::function<void()>>> probes_;
  std::uint32_t running_ = 0;
  std::vector<nanoseconds> last_turn_;
  std::vector<std::uint64_t> turns_at_once_;
  std::vector<sent_attempt> sent_;
  std::vector<retried_attempt> retried_;
  std::vector<final_outcome> finals_;
  // The last attempt sent of each attempt of a logical request: worker, index, user, step,
  // intended time (ns) and attempt.
  using attempt_key = std::tuple<std::uint32_t, std::uint64_t, std::uint32_t, std::uint16_t,
                                 std::int64_t, std::uint32_t>;
  static attempt_key key_of(std::uint32_t worker, const record::request_times& t) noexcept {
    return {worker, t.index, t.user, t.step, t.intended.count(), t.attempt};
  }
  std::map<attempt_key, std::uint64_t> last_sent_;

  friend class tagging_codecs;
};

}  // namespace punctual::sim
