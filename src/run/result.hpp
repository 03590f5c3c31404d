// What a run produced: the measured window's and the warm-up's counts and latency views, its
// clocks, its per-second load and each worker's own cost. Reports read this and the run's
// config (run/config.hpp), never the engine that produced them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/push_stats.hpp"
#include "net/clock.hpp"
#include "punctual/histogram/histogram.hpp"
#include "record/counters.hpp"
#include "record/recorder.hpp"
#include "run/config.hpp"

namespace punctual::run {

using nanoseconds = std::chrono::nanoseconds;

// A worker's first request: when the generator got to it, and when it was due (CLOCK_MONOTONIC).
struct dispatch_instant {
  nanoseconds at{};
  nanoseconds due{};
};

struct worker_stats {
  std::optional<dispatch_instant> first_dispatch;
  nanoseconds cpu{};
  nanoseconds busy_wall{};
  std::uint64_t sleeps = 0;
  std::uint64_t wakeups = 0;
  // Connections set up (those before the start too), by the protocol they spoke.
  std::uint64_t h2_connections = 0;
  std::uint64_t http1_connections = 0;
  std::uint64_t connections_opened = 0;  // connects begun, set up or not
  std::uint64_t unsolicited_closes = 0;  // HTTP/1.1: closed for bytes no request asked for
  // The largest delay of one of its timed wake-ups past the instant it asked for: how a pause
  // of its thread (the host took its vCPU) shows from inside.
  nanoseconds longest_wake_lateness{};
  // --pin: the CPU the kernel pinned the worker's thread to (none: not pinned, or refused).
  std::optional<int> pinned_cpu;
  // The measured window's requests, by intended time: the worker's share of the schedule, the
  // due requests of paused workers it sent (claims, engine/claims.hpp), its own that others
  // sent, and the outcomes it recorded. planned + sent_for_others - claimed_away == outcomes.
  std::uint64_t planned = 0;
  std::uint64_t sent_for_others = 0;
  std::uint64_t claimed_away = 0;
  std::uint64_t outcomes = 0;
};

// What the first TLS handshake negotiated (the run's connections all offer the same).
struct tls_summary {
  std::string version;
  std::string cipher;
  std::string alpn;
};

// Connection set-ups by the protocol they spoke, over every worker.
struct protocol_counts {
  std::uint64_t h2 = 0;
  std::uint64_t http1 = 0;
  std::uint64_t opened = 0;
  std::uint64_t unsolicited_closes = 0;
  bool mostly_h2() const noexcept { return h2 > http1; }
};

struct result {
  record::phase measured;
  record::phase warmup;
  net::clock_mapping start;     // the schedule's start instant on both clocks
  nanoseconds measure_start{};  // CLOCK_MONOTONIC start of the measured window
  nanoseconds window{};         // the measured window actually run (shorter if interrupted)
  nanoseconds elapsed{};        // from start to the end of the drain
  bool interrupted = false;
  std::uint32_t connections_opened = 0;
  std::vector<record::name_counts> by_name;  // per request name (config::mix), measured window
  record::per_second_load load;              // the measured window's planned requests and attempts
  hdr::histogram send_gaps{record::latency_params()};  // every worker's gaps between its sends
  std::vector<worker_stats> workers;
  // The host's steal time over the run (every CPU's, from /proc/stat): how long the hypervisor
  // ran something else on the guest's vCPUs. None where the kernel does not report it, and in
  // the simulation.
  std::optional<nanoseconds> host_steal;
  protocol_counts protocols() const noexcept {
    protocol_counts p;
    for (const auto& w : workers) {
      p.h2 += w.h2_connections;
      p.http1 += w.http1_connections;
      p.opened += w.connections_opened;
      p.unsolicited_closes += w.unsolicited_closes;
    }
    return p;
  }
  // --start-at: how late the run began its schedule, as the send lag of its earliest dispatch
  // (none when nothing was dispatched).
  std::optional<nanoseconds> start_lag;
  std::optional<tls_summary> tls;  // TLS runs that completed a handshake
  // Each interval of the measured window, in order, cut as the .hlog is (the timeline).
  std::vector<record::interval_row> series;
  // The worst whole second of the measured window by intended time (record/intended_seconds.hpp),
  // and the samples that found their second's set still with the collector (0 in practice).
  std::optional<record::second_views> worst_second;
  std::uint64_t worst_second_lost = 0;
  // The hybrid model: each step's requests of the measured window, by step name (config::mix).
  std::vector<record::second_views> steps;
  // --remote-write: what the pusher did, its final push included (set after the run's end).
  std::optional<metrics::push_stats> remote_write;
};

// How many requests a connection carried at once: over HTTP/2, --max-streams (in the closed
// model, its users), except on a hybrid user's own connection; over HTTP/1.1, one.
inline std::uint32_t requests_per_connection(const config& c, const result& r) noexcept {
  if (c.kind() == model_kind::hybrid) return 1;
  return r.protocols().mostly_h2() ? c.max_streams : 1;
}

}  // namespace punctual::run
