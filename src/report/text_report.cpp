#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>

#include "analysis/text.hpp"
#include "punctual/histogram/percentile_text.hpp"
#include "report/run_report.hpp"
#include "report/sections.hpp"
#include "run/describe.hpp"
#include "schedule/plan.hpp"

namespace punctual::report {

namespace {

// What TLS was negotiated and, in words, whether the server's certificate was checked.
void write_tls_line(std::ostream& out, const run::config& c, const run::result& r) {
  const auto& counts = r.measured.counts;
  const std::string negotiated = r.tls
                                     ? fmt::format("{} {}, alpn {}", r.tls->version, r.tls->cipher,
                                                   r.tls->alpn.empty() ? "none" : r.tls->alpn)
                                     : std::string("no handshake completed");
  const std::string trust =
      c.tls.verify ? "certificate verified for " + c.tls.server_name
                   : "certificate NOT VERIFIED (--insecure): the server is not authenticated";
  fmt::print(out, "tls: {}; {}; {} handshakes, {} resumed\n", negotiated, trust,
             counts.tls_handshakes + r.warmup.counts.tls_handshakes,
             counts.tls_resumed + r.warmup.counts.tls_resumed);
}

// HTTP/2 (--http 2 or auto): what the connections spoke, how many streams each carried, and
// what the server refused or reset.
void write_protocol_line(std::ostream& out, const run::config& c, const run::result& r) {
  const run::protocol_counts spoken = r.protocols();
  const auto& counts = r.measured.counts;
  fmt::print(out,
             "protocol: --http {}: {} connection set-ups spoke h2, {} http/1.1; up to {} streams "
             "per connection; {} requests sent again unprocessed, {} streams reset by the server\n",
             c.http == run::http_version::http2 ? "2" : "auto", spoken.h2, spoken.http1,
             c.max_streams, counts.h2_unprocessed,
             counts.socket_errors[record::index(record::socket_reason::h2_rst)]);
}

// A distributed run: which slice of the plan this is, and how its start met --start-at.
void write_shard_lines(std::ostream& out, const run::config& c, const run::result& r) {
  if (c.shards() > 1) {
    fmt::print(out,
               "{} (requests i with i mod {} = {}); plan {}: the rate above is the "
               "whole plan's, the planned count, connections and threads this shard's\n",
               run::shard_name(c), c.shards(), c.shard_index(), c.plan_sha256.substr(0, 12));
  }
  if (!c.start_at) return;
  fmt::print(
      out, "start: measured window at {:.3f} (Unix s), start lag {}; {}\n",
      static_cast<double>(c.start_at->count()) / 1e9,
      r.start_lag ? analysis::duration_text(*r.start_lag) : std::string("none (nothing sent)"),
      clock_assumption);
}

void write_header(std::ostream& out, const run::config& c, const run::result& r) {
  const auto planned = r.measured.counts.planned;
  if (c.kind() == run::model_kind::hybrid) {
    if (c.hybrid()->per_user) {
      fmt::print(out, "model: {}, a connection per user, on {} threads\n", describe_hybrid(c, r),
                 c.threads);
    } else {
      fmt::print(out, "model: {}, {} connections on {} threads\n", describe_hybrid(c, r),
                 c.connections, c.threads);
    }
    fmt::print(out,
               "correction: every step measured from its intended time (the arrival for a first "
               "step, the previous completion plus think time after it); service time shown for "
               "contrast\n");
  } else if (c.kind() == run::model_kind::open) {
    fmt::print(out, "model: open, {} for {} ({} planned), {} connections on {} threads\n",
               schedule::describe(*c.plan()), analysis::duration_text(c.duration), planned,
               c.connections, c.threads);
    fmt::print(out,
               "correction: latency measured from intended send time (response time); "
               "service time shown for contrast\n");
  } else {
    const std::uint32_t per_connection = run::requests_per_connection(c, r);
    const std::string users =
        per_connection > 1
            ? fmt::format("{} users ({} on each of {} connections)", per_connection * c.connections,
                          per_connection, c.connections)
            : fmt::format("{} connections", c.connections);
    fmt::print(out,
               "model: closed, {} on {} threads, think {}, for {} ({} requests sent); "
               "no rate was set: the server set the pace\n",
               users, c.threads, analysis::duration_text(c.closed()->think),
               analysis::duration_text(c.duration), planned);
    if (c.expected_interval()) {
      fmt::print(out,
                 "correction: expected-interval {}: a reconstructed view adds samples that were "
                 "never observed; service time is all that was measured\n",
                 analysis::duration_text(*c.expected_interval()));
    } else {
      fmt::print(out,
                 "correction: none: only service time can be observed (latency measured from the "
                 "actual send, which waited for the server)\n");
    }
  }
  if (!c.mix.empty() && !c.hybrid()) fmt::print(out, "requests: {}\n", describe_mix(c));
  if (c.tls.enabled) write_tls_line(out, c, r);
  if (c.http != run::http_version::http1) write_protocol_line(out, c, r);
  if (c.retry().enabled()) fmt::print(out, "retries: {}\n", run::describe(c.retry()));
  if (c.warmup.count() > 0) {
    fmt::print(out, "warm-up: {} first ({} requests, reported apart)\n",
               analysis::duration_text(c.warmup), r.warmup.counts.planned);
  }
  write_shard_lines(out, c, r);
  if (r.interrupted) fmt::print(out, "INTERRUPTED: the measured window ended early\n");
}

// Why fewer were sent in the window than planned, when the requests waited for connections
// rather than for the generator: the server held them.
void write_shortfall(std::ostream& out, const run::result& r) {
  const auto& c = r.measured.counts;
  if (c.planned == 0 ||
      static_cast<double>(c.sent_in_window) >= 0.99 * static_cast<double>(c.planned))
    return;
  const auto& v = r.measured.views;
  const auto queue = v[record::view::queue_wait].value_at_percentile(99);
  const auto lag = v[record::view::send_lag].value_at_percentile(99);
  if (queue <= lag) return;
  fmt::print(out,
             "  sent < planned: due requests waited for a free connection (queue wait p99 {}), "
             "not for the generator (send lag p99 {}); they were sent after the window\n",
             analysis::duration_text(nanoseconds{queue}),
             analysis::duration_text(nanoseconds{lag}));
}

void write_outcomes(std::ostream& out, const run::result& r) {
  const auto& c = r.measured.counts;
  fmt::print(out, "\noutcomes: planned {}:", c.planned);
  for (std::size_t i = 0; i < record::outcome_count; ++i) {
    fmt::print(out, " {} {}{}", record::outcome_names[i], c.outcomes[i],
               i + 1 < record::outcome_count ? "," : "\n");
  }
  if (c.body_missing > 0) {
    fmt::print(out,
               "  of the http_errors, {} had an expected status but a body without their step's "
               "expect_body_contains text\n",
               c.body_missing);
  }
  if (c.capture_missing > 0) {
    fmt::print(
        out, "  of the http_errors, {} had an expected status but a capture found nothing usable\n",
        c.capture_missing);
  }
  fmt::print(out, "rates: planned {:.1f}/s, sent {:.1f}/s, completed {:.1f}/s\n",
             per_second(c.planned, r.window), per_second(c.sent_in_window, r.window),
             per_second(c.completed_in_window, r.window));
  write_shortfall(out, r);
}

std::string cell(const hdr::histogram& h, double p, double bound_from) {
  if (h.total_count() == 0) return "-";
  const std::string v = analysis::duration_text(nanoseconds{h.value_at_percentile(p)});
  return p >= bound_from ? ">=" + v : v;
}

std::string ci_cell(const verdicts& v, std::size_t i) {
  if (i >= v.response_ci.size() || !v.response_ci[i].available()) return "-";
  const auto& c = v.response_ci[i];
  if (c.unresolved) return "unresolved: the run's seconds disagree; run longer";
  return fmt::format("{}..{} {}", analysis::duration_text(nanoseconds{c.lo}),
                     analysis::duration_text(nanoseconds{c.hi}),
                     c.method == analysis::method_batch_means ? "(batch)" : "(binom)");
}

// When failures lead the report, its latencies are mostly theirs: say so above the table, with
// the ok requests' own figures beside.
void write_failure_latency_note(std::ostream& out, const run::result& r, const verdicts& v) {
  const auto& counts = r.measured.counts;
  if (!failures_lead(counts, v)) return;
  const auto& ok = r.measured.views[record::view::response_time_ok];
  if (ok.total_count() == 0) {
    fmt::print(out, "\nno request was ok: the latencies below are those of the failures\n");
    return;
  }
  fmt::print(out,
             "\nthe latencies below include the failures; the ok requests alone: p50 {}, p99 {}, "
             "max {}\n",
             analysis::duration_text(nanoseconds{ok.value_at_percentile(50)}),
             analysis::duration_text(nanoseconds{ok.value_at_percentile(99)}),
             analysis::duration_text(nanoseconds{ok.max()}));
}

void write_latency_table(std::ostream& out, const run::config& c, const run::result& r,
                         const verdicts& v) {
  write_failure_latency_note(out, r, v);
  const auto& views = r.measured.views;
  const auto& rt = views[record::view::response_time];
  const auto& st = views[record::view::service_time];
  const double bound_from = lower_bound_from(r.measured.counts.censored, rt.total_count());
  std::optional<hdr::histogram> rec;
  if (c.expected_interval()) rec = reconstructed(r, *c.expected_interval());
  const char* first = c.kind() != run::model_kind::closed ? "response time" : "latency (observed)";
  fmt::print(out, "\n{:>8}  {:>15}  {:>13}{}  {}\n", "", first, "service time",
             rec ? "  reconstructed" : "", "95% interval of the first column");
  std::size_t i = 0;
  for (const double p : summary_percentiles) {
    const std::string label = p == 100 ? "max" : fmt::format("p{:g}", p);
    fmt::print(out, "{:>8}  {:>15}  {:>13}", label, cell(rt, p, bound_from), cell(st, p, 101));
    if (rec) fmt::print(out, "  {:>13}", cell(*rec, p, bound_from));
    fmt::print(out, "  {}\n", p == 100 ? "" : ci_cell(v, i));
    ++i;
  }
  if (r.measured.counts.censored) {
    fmt::print(out,
               "(>= marks a lower bound: {} of {} samples are censored by timeouts or "
               "interruption)\n",
               r.measured.counts.censored, rt.total_count());
  }
  if (rt.over_range_count()) {
    fmt::print(out, "({} values above the histogram range were clamped to 1 h)\n",
               rt.over_range_count());
  }
}

std::string p99(const hdr::histogram& h) {
  return h.total_count() ? analysis::duration_text(nanoseconds{h.value_at_percentile(99)}) : "-";
}

// What pauses of the generator's threads cost, in words: the requests other workers sent for a
// paused one, and the time the host took from the vCPUs. Nothing when neither happened.
void write_pauses(std::ostream& out, std::uint64_t claimed, nanoseconds longest_pause,
                  std::optional<nanoseconds> host_steal) {
  std::string line;
  if (claimed) {
    line = fmt::format("{} request{} sent for a paused worker (longest pause {})", claimed,
                       claimed == 1 ? "" : "s", analysis::duration_text(longest_pause));
  }
  if (host_steal && host_steal->count() > 0) {
    line += fmt::format("{}host stole {}", line.empty() ? "" : "; ",
                        analysis::duration_text(*host_steal));
  }
  if (!line.empty()) fmt::print(out, "pauses: {}\n", line);
}

// --pin: where each worker ran (a worker the kernel would not pin says so).
void write_pinning(std::ostream& out, const run::config& c, const run::result& r) {
  if (!c.pin) return;
  std::string line;
  for (std::size_t k = 0; k < r.workers.size(); ++k) {
    const auto& cpu = r.workers[k].pinned_cpu;
    line += fmt::format("{}worker {} {}", k ? ", " : "", k,
                        cpu ? fmt::format("on CPU {}", *cpu) : std::string("not pinned"));
  }
  fmt::print(out, "pinned: {}\n", line);
}

void write_generator(std::ostream& out, const run::config& c, const run::result& r) {
  const auto& v = r.measured.views;
  fmt::print(out, "\ngenerator: send lag p99 {}, queue wait p99 {}, connect time p99 {}\n",
             p99(v[record::view::send_lag]), p99(v[record::view::queue_wait]),
             p99(v[record::view::connect_time]));
  double cpu_share = 0;
  std::uint64_t sleeps = 0;
  std::uint64_t claimed = 0;
  nanoseconds longest_pause{};
  for (const auto& w : r.workers) {
    const double busy = static_cast<double>(w.busy_wall.count());
    cpu_share = std::max(cpu_share, busy > 0 ? static_cast<double>(w.cpu.count()) / busy : 0.0);
    sleeps += w.sleeps;
    claimed += w.sent_for_others;
    longest_pause = std::max(longest_pause, w.longest_wake_lateness);
  }
  write_pauses(out, claimed, longest_pause, r.host_steal);
  write_pinning(out, c, r);
  const auto sent = r.measured.counts.planned + r.warmup.counts.planned;
  fmt::print(
      out, "precision: {} (busiest worker used {:.1f}% of a core; {:.2f} sleeps per request)\n",
      run::name(c.precision), cpu_share * 100, sent ? static_cast<double>(sleeps) / sent : 0.0);
}

// One line: remote write's failures are never fatal, so the report is where they show.
void write_remote_write(std::ostream& out, const run::result& r) {
  if (r.remote_write) fmt::print(out, "{}\n", remote_write_line(*r.remote_write));
}

void write_errors_and_transfer(std::ostream& out, const run::config& config, const run::result& r) {
  const auto& c = r.measured.counts;
  write_errors_line(out, config, c);
  const double secs = static_cast<double>(r.window.count()) / 1e9;
  fmt::print(out, "transfer: {:.2f} MB received ({:.2f} MB/s), {:.2f} MB sent\n",
             static_cast<double>(c.bytes_received) / 1e6,
             secs > 0 ? static_cast<double>(c.bytes_received) / 1e6 / secs : 0.0,
             static_cast<double>(c.bytes_sent) / 1e6);
}

}  // namespace

std::string remote_write_line(const metrics::push_stats& s) {
  return fmt::format(
      "remote write: {} pushes accepted ({} samples), {} failed, {} of {} snapshots dropped; "
      "final values {}{}",
      s.requests, s.samples, s.failed_attempts, s.dropped, s.snapshots,
      s.final_pushed ? "stored" : "NOT stored",
      s.last_error.empty() ? "" : " (last error: " + s.last_error + ")");
}

double lower_bound_from(std::uint64_t censored, std::int64_t count) noexcept {
  if (censored == 0 || count <= 0) return 101;
  return 100.0 * (1.0 - static_cast<double>(censored) / static_cast<double>(count));
}

hdr::histogram reconstructed(const run::result& r, nanoseconds expected_interval) {
  return r.measured.views[record::view::response_time].copy_corrected_for_coordinated_omission(
      expected_interval.count());
}

// The verdict first, then what the server did (failures lead when there are many), then the
// details; the checks that passed only with --verbose.
void write_text(std::ostream& out, const run::config& c, const run::result& r, const verdicts& v,
                const text_options& o) {
  write_verdict_line(out, v, r.interrupted);
  write_failure_lead(out, c, r.measured.counts, v);
  write_invalid_reasons(out, v);
  fmt::print(out, "\n");
  write_header(out, c, r);
  write_outcomes(out, r);
  write_attempts_text(out, c, r);
  write_latency_table(out, c, r, v);
  write_by_name_text(out, c, r);
  write_sessions_text(out, c, r);
  write_worst_text(out, c, r, holders_of(c, r, v));
  write_generator(out, c, r);
  write_remote_write(out, r);
  write_errors_and_transfer(out, c, r);
  write_slos(out, v);
  write_validity(out, v, o.verbose);
  if (o.full_latency) {
    fmt::print(out, "\nresponse time distribution (ms):\n");
    hdr::write_percentile_distribution(out, r.measured.views[record::view::response_time]);
  }
  if (o.full_service) {
    fmt::print(out, "\nservice time distribution (ms):\n");
    hdr::write_percentile_distribution(out, r.measured.views[record::view::service_time]);
  }
}

}  // namespace punctual::report
