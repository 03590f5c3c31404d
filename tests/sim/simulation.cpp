#include "simulation.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "http/codec_decorator.hpp"
#include "http/codec_factory.hpp"
#include "http/request_id_codec.hpp"

namespace punctual::sim {

// The engine's codecs, each request tagged on its way in with an x-sim-id header naming the
// attempt the tap saw just before (worker::send_request tells the tap, then frames). The
// production one (--request-id-header) names the planned request, which several attempts share.
class tagging_codec final : public http::codec_decorator {
 public:
  tagging_codec(std::unique_ptr<http::codec> inner, const std::uint64_t& pending,
                std::uint32_t slots)
      : codec_decorator(std::move(inner)), pending_(pending), tagged_(slots) {}

  bool begin(std::uint32_t slot, const http::outgoing_request& request) override {
    // Of fixed width, so that the tag never makes one request a byte longer than another.
    char id[24];
    const auto end = fmt::format_to_n(id, sizeof id, "{:012}", pending_).out;
    http::outgoing_request tagged = request;
    tagged.bytes =
        http::add_header(request.bytes, "x-sim-id",
                         std::string_view(id, static_cast<std::size_t>(end - id)), tagged_[slot]);
    return inner().begin(slot, tagged);
  }

 private:
  const std::uint64_t& pending_;
  std::vector<std::string> tagged_;
};

class tagging_codecs final : public http::codec_factory {
 public:
  tagging_codecs(std::unique_ptr<http::codec_factory> inner, const std::uint64_t& pending)
      : inner_(std::move(inner)), pending_(pending) {}
  http::codec_set make(std::uint32_t streams, http::h2_memory& memory) const override {
    http::codec_set set = inner_->make(streams, memory);
    if (set.http1) set.http1 = std::make_unique<tagging_codec>(std::move(set.http1), pending_, 1);
    if (set.h2) set.h2 = std::make_unique<tagging_codec>(std::move(set.h2), pending_, streams);
    return set;
  }

 private:
  std::unique_ptr<http::codec_factory> inner_;
  const std::uint64_t& pending_;
};

namespace {

// Makes the simulation's transports and remembers them in order.
class recording_factory final : public net::transport_factory {
 public:
  recording_factory(network& net, std::vector<sim_transport*>& made) : net_(net), made_(made) {}
  std::unique_ptr<net::transport> make() override {
    auto t = std::make_unique<sim_transport>(net_);
    made_.push_back(t.get());
    return t;
  }

 private:
  network& net_;
  std::vector<sim_transport*>& made_;
};

// A worker that turns this often at one virtual instant is in a loop that time would never end.
constexpr std::uint64_t livelock_turns = 100'000;

}  // namespace

simulation::simulation(setup s)
    : setup_(std::move(s)),
      world_(std::make_unique<world>(setup_.seed)),
      net_(std::make_unique<network>(*world_, setup_.up, setup_.down)),
      server_(std::make_unique<scripted_server>(*world_, *net_, setup_.server)),
      sink_([](std::int64_t, const record::view_set&) {}) {}

simulation::~simulation() = default;

bool simulation::run() {
  const engine::run_config& c = setup_.config;
  engine::run_parts parts = engine::system_parts(c);
  parts.transports = std::make_unique<recording_factory>(*net_, transports_);
  parts.codecs = std::make_unique<tagging_codecs>(std::move(parts.codecs), pending_id_);
  parts.clock = &world_->clock();
  parts.make_poller = [this] {
    auto p = std::make_unique<sim_poller>(*world_, setup_.max_events);
    pollers_.push_back(p.get());
    return p;
  };
  parts.tap = this;
  std::uint32_t made = 0;
  for (std::uint32_t w = 0; w < c.threads; ++w) {
    first_transport_.push_back(made);
    made += c.connections / c.threads + (w < c.connections % c.threads ? 1 : 0);
  }
  run_ = std::make_unique<engine::load_run>(c, std::move(parts));
  try {
    run_->open(result_);
  } catch (const engine::run_failure& e) {
    failure_ = e.what();
    return false;
  }
  server_->set_origin(result_.start.mono);
  run_->prepare(result_);
  collector_ = std::make_unique<engine::run_collector>(c, run_->workers(), result_, sink_);
  const nanoseconds start = result_.start.mono;
  for (const auto& p : setup_.pauses) {
    if (p.worker < pollers_.size())
      pollers_[p.worker]->pause(start + p.from, start + p.from + p.length);
  }
  if (setup_.interrupt_at) world_->at(start + *setup_.interrupt_at, [this] { run_->interrupt(); });
  for (auto& [offset, probe] : probes_) world_->at(start + offset, std::move(probe));
  auto& workers = run_->workers();
  running_ = static_cast<std::uint32_t>(workers.size());
  last_turn_.assign(workers.size(), nanoseconds{-1});
  turns_at_once_.assign(workers.size(), 0);
  for (std::uint32_t w = 0; w < workers.size(); ++w) {
    workers[w]->begin(run_->control());
    world_->at(pollers_[w]->runnable_at(world_->now()), [this, w] { step(w); });
  }
  world_->at(world_->now() + engine::run_collector::period, [this] { poll(); });
  world_->run_until([this] { return running_ == 0; }, nanoseconds::max());
  collector_->finish(run_->control(), world_->now());
  if (poll_hook_) poll_hook_(*collector_, true);
  return true;
}

void simulation::step(std::uint32_t w) {
  engine::worker& wk = *run_->workers()[w];
  if (last_turn_[w] == world_->now()) {
    if (++turns_at_once_[w] > livelock_turns) {
      const net::wait_plan& p = wk.plan();
      throw std::logic_error("worker " + std::to_string(w) + " turned " +
                             std::to_string(livelock_turns) + " times at one virtual instant (" +
                             std::to_string((world_->now() - result_.start.mono).count()) +
                             " ns from the start; its last plan: due " +
                             std::to_string((p.due - world_->now()).count()) +
                             " ns from now, timer sleep " + std::to_string(p.timer_sleep.count()) +
                             " ns, spin " + std::to_string(p.spin) + ", socket wait " +
                             std::to_string(p.socket_wait.count()) + " ns)");
    }
  } else {
    last_turn_[w] = world_->now();
    turns_at_once_[w] = 0;
  }
  if (!wk.turn()) {
    wk.end();
    --running_;
    return;
  }
  pollers_[w]->arm(wk.plan(), [this, w] {
    run_->workers()[w]->wait_and_handle();
    step(w);
  });
}

void simulation::poll() {
  if (running_ == 0) return;
  for (const auto& p : setup_.collector_pauses) {
    const nanoseconds from = result_.start.mono + p.from, to = from + p.length;
    if (world_->now() >= from && world_->now() < to) {
      world_->at(to, [this] { poll(); });
      return;
    }
  }
  collector_->poll(run_->control());
  if (poll_hook_) poll_hook_(*collector_, false);
  world_->at(world_->now() + engine::run_collector::period, [this] { poll(); });
}

void simulation::on_framing(std::uint32_t worker, const record::request_times& t,
                            std::uint32_t connection) {
  const sim_transport* via = transports_.at(first_transport_.at(worker) + connection);
  sent_attempt a;
  a.sim_id = sent_.size() + 1;
  a.worker = worker;
  a.connection = via->current() ? via->current()->serial : 0;
  a.t = t;
  sent_.push_back(a);
  pending_id_ = a.sim_id;
  last_sent_[key_of(worker, t)] = a.sim_id;
}

// Its bytes were written: the attempt framed last under its key gets its send instant.
void simulation::on_sent(std::uint32_t worker, const record::request_times& t) {
  sent_.at(last_sent_.at(key_of(worker, t)) - 1).t = t;
}

void simulation::on_retry(std::uint32_t worker, const record::request_times& t, nanoseconds at,
                          record::retry_cause why) {
  retried_.push_back({worker, t, at, why});
}

void simulation::on_final(std::uint32_t worker, const record::request_times& t, record::outcome o,
                          nanoseconds at) {
  final_outcome f;
  f.worker = worker;
  f.t = t;
  f.outcome = o;
  f.at = at;
  if (t.sent.count() != 0) {
    const auto it = last_sent_.find(key_of(worker, t));
    if (it != last_sent_.end()) f.sim_id = it->second;
  }
  finals_.push_back(f);
}

}  // namespace punctual::sim
