#include "cli/live_metrics.hpp"

#include <time.h>

#include <cstdio>

#include "cli/command.hpp"
#include "cli/units.hpp"

namespace punctual::cli {
namespace {

constexpr std::chrono::seconds publish_every{1};
constexpr std::chrono::milliseconds linger_poll{20};

}  // namespace

std::unique_ptr<live_metrics> live_metrics::from_options(const run_options& o) {
  const std::chrono::nanoseconds linger = parse_duration("--metrics-linger", o.metrics_linger);
  if (o.metrics_listen.empty()) return nullptr;
  const auto where = metrics::parse_listen_address(o.metrics_listen);
  if (!where) {
    throw usage_error("--metrics-listen: expected HOST:PORT or :PORT (a port 0..65535), got '" +
                      o.metrics_listen + "'");
  }
  auto m = std::make_unique<live_metrics>();
  m->linger_ = linger;
  try {
    m->server_ = std::make_unique<metrics::scrape_server>(*where);
  } catch (const std::runtime_error& e) {
    throw usage_error(e.what());
  }
  if (!m->server_->loopback()) {
    std::fprintf(stderr,
                 "punctual: note: --metrics-listen serves the metrics beyond this host, on %s\n",
                 m->server_->address().c_str());
  }
  return m;
}

void live_metrics::begin(const run::config& c) {
  registry_ = std::make_unique<metrics::registry>(c);
  last_publish_ = {};
}

void live_metrics::on_poll(const engine::run_collector& collector, bool final,
                           const net::clock_mapping& start) {
  const auto now = std::chrono::steady_clock::now();
  if (final || now - last_publish_ >= publish_every) {
    last_publish_ = now;
    const metrics::gauges g{.since_start = net::mono_now() - start.mono,
                            .queue_depth = collector.queue_depth()};
    const metrics::snapshot s =
        registry_->build(collector.live(), g, std::chrono::system_clock::now());
    if (server_) final ? server_->finish(s) : server_->publish(s);
    for (auto& sink : sinks_) final ? sink->finish(s) : sink->publish(s);
  }
  if (server_) server_->poll();
}

void live_metrics::linger(const std::function<bool()>& stop) {
  if (!server_) return;
  const auto until = std::chrono::steady_clock::now() + linger_;
  while (std::chrono::steady_clock::now() < until && !stop()) {
    server_->poll();
    const timespec nap{0, std::chrono::nanoseconds(linger_poll).count()};
    nanosleep(&nap, nullptr);
  }
  server_->poll();
}

}  // namespace punctual::cli
