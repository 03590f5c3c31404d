// The live metrics of `run`, `search` and each shard: the registry of the run under way, fed on
// the collecting thread, and where its snapshots go each second (the scrape endpoint of
// --metrics-listen; any other metrics::sink). One object for the whole command: a search's steps
// are runs one after another, each with its own registry, behind the same endpoint.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cli/run_options.hpp"
#include "engine/collector.hpp"
#include "metrics/registry.hpp"
#include "metrics/scrape_server.hpp"
#include "net/clock.hpp"

namespace punctual::cli {

class live_metrics {
 public:
  // From --metrics-listen and --metrics-linger; nothing when neither an endpoint nor another
  // sink is asked for. Binds now, before anything is sent: a bad address or a port in use is a
  // usage_error. A bind beyond loopback is announced on stderr.
  static std::unique_ptr<live_metrics> from_options(const run_options& o);

  void add_sink(std::unique_ptr<metrics::sink> s) { sinks_.push_back(std::move(s)); }

  // A run begins: `c` outlives it.
  void begin(const run::config& c);
  void on_interval(const record::view_set& v) { registry_->add_interval(v); }
  // After each collector poll, and after its finish (`final`): serves the endpoint, and
  // publishes a snapshot each second and the final one at once.
  void on_poll(const engine::run_collector& collector, bool final, const net::clock_mapping& start);
  // Serves the final values for --metrics-linger (after the reports are written), or until
  // `stop` says so (a signal: SIGINT or SIGTERM ends the wait, and the command exits as it
  // would have).
  void linger(const std::function<bool()>& stop);
  const metrics::scrape_server* endpoint() const noexcept { return server_.get(); }

 private:
  std::unique_ptr<metrics::scrape_server> server_;
  std::vector<std::unique_ptr<metrics::sink>> sinks_;
  std::unique_ptr<metrics::registry> registry_;
  std::chrono::nanoseconds linger_{};
  std::chrono::steady_clock::time_point last_publish_{};
};

}  // namespace punctual::cli
