#include "cli/run_command.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "analysis/text.hpp"
#include "cli/atomic_file.hpp"
#include "cli/command.hpp"
#include "cli/progress.hpp"
#include "cli/renderings.hpp"
#include "cli/shard_options.hpp"
#include "engine/memory_account.hpp"
#include "engine/pacer.hpp"
#include "metrics/remote_write.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "punctual/histogram/percentile_text.hpp"
#include "report/json.hpp"
#include "run/describe.hpp"
#include "schedule/stream.hpp"

namespace punctual::cli {
namespace {

engine::load_run* active_run = nullptr;
std::atomic<int> signals_seen{0};  // lock-free, so safe in a handler

// The first signal ends the window and lets the run drain and report; a second one leaves at
// once, removing any half-written output so no partial file remains.
extern "C" void on_signal(int) {
  if (signals_seen.fetch_add(1) > 0) {
    clear_progress_from_signal();
    remove_pending_temp_file();
    _exit(exit_interrupted);
  }
  if (active_run) active_run->interrupt();
}

class signal_scope {
 public:
  explicit signal_scope(engine::load_run& run) {
    active_run = &run;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  }
  ~signal_scope() { active_run = nullptr; }  // handlers stay: a late second signal still exits
  signal_scope(const signal_scope&) = delete;
  signal_scope& operator=(const signal_scope&) = delete;
};

}  // namespace

bool interrupt_requested() noexcept {
  return signals_seen.load() > 0;
}

int signals_received() noexcept {
  return signals_seen.load();
}

void write_interval(hdr::interval_log_writer& log, std::int64_t index, const record::view_set& v,
                    const run::config& c) {
  const bool tls = c.tls.enabled;
  const double length = static_cast<double>(c.interval.count()) / 1e9;
  const double start = static_cast<double>(index) * length;
  // Response time untagged: Java's HistogramLogProcessor reads only untagged lines by default.
  log.write_interval("", start, length, v[record::view::response_time]);
  for (std::size_t i = 1; i < record::view_count; ++i) {
    const auto view = static_cast<record::view>(i);
    if (record::reported(view, tls))
      log.write_interval(record::view_names[i], start, length, v[view]);
  }
  // Each name's response time, as response_time.NAME, and each hybrid scenario's session time,
  // as session_time.SCENARIO (names are [A-Za-z0-9_.-], valid in a tag).
  for (std::size_t n = 0; n < c.mix.size() && n < v.name_count(); ++n) {
    const std::string& name = c.mix[n].name;
    const std::string tag = c.mix[n].session ? "session_time." + name.substr(0, name.rfind('.'))
                                             : "response_time." + name;
    log.write_interval(tag, start, length, v.named(n, record::named_view::response_time));
  }
}

namespace {

void write_schedule_file(const run_setup& s, const std::string& path) {
  std::ostringstream out;
  schedule::write_schedule(out, *s.config.plan());
  write_file_atomically(path, out.str());
}

std::vector<double> worker_cpu_shares(const engine::run_result& r) {
  std::vector<double> shares;
  for (const auto& w : r.workers) {
    const auto busy = static_cast<double>(w.busy_wall.count());
    shares.push_back(busy > 0 ? static_cast<double>(w.cpu.count()) / busy : 0.0);
  }
  return shares;
}

// The send gaps to fit (run::config::sends_fixed_poisson).
const hdr::histogram* poisson_gaps(const run_setup& setup, const engine::run_result& r) {
  return setup.config.sends_fixed_poisson() ? &r.send_gaps : nullptr;
}

// Over every scenario's measured sessions (their SCENARIO.session views).
double mean_session_ns(const run::config& c, const record::view_set& views) {
  double sum = 0;
  double count = 0;
  for (std::size_t i = 0; i < c.mix.size() && i < views.name_count(); ++i) {
    if (!c.mix[i].session) continue;
    const auto& h = views.named(i, record::named_view::response_time);
    sum += h.mean() * static_cast<double>(h.total_count());
    count += static_cast<double>(h.total_count());
  }
  return count > 0 ? sum / count : 0;
}

}  // namespace

analysis::slo_evaluation evaluate_slos_on(const run_setup& setup, const engine::run_result& r,
                                          const analysis::interval_series& series,
                                          analysis::bound_mode bound) {
  std::optional<hdr::histogram> rec;
  if (setup.config.expected_interval())
    rec = report::reconstructed(r, *setup.config.expected_interval());
  return analysis::evaluate_slos(setup.slos,
                                 {.views = r.measured.views,
                                  .counts = r.measured.counts,
                                  .intervals = series,
                                  .bound = bound,
                                  .closed_model = setup.config.kind() == run::model_kind::closed,
                                  .reconstructed = rec ? &*rec : nullptr,
                                  .allow_uncorrected = setup.allow_uncorrected,
                                  .by_name = &r.by_name});
}

report::verdicts judge(const run_setup& setup, const engine::run_result& r,
                       const analysis::interval_series& series) {
  report::verdicts v;
  const auto& views = r.measured.views;
  const auto slo_ps = analysis::slo_percentiles(setup.slos);
  v.validity = analysis::check_validity(
      {.views = views,
       .counts = r.measured.counts,
       .rate_per_s = setup.config.rate_per_s(),
       .connections = setup.config.connections,
       .streams = run::requests_per_connection(setup.config, r),
       .worker_cpu_shares = worker_cpu_shares(r),
       .intervals = series,
       .slo_percentiles = slo_ps,
       .slo_tails = analysis::slo_tails(setup.slos, views),
       .window = r.window,
       .poisson_send_gaps = poisson_gaps(setup, r),
       .threads = setup.config.threads,
       .load = setup.config.plan() ? &r.load : nullptr,
       .connections_carry_load = setup.config.connections_carry_plan(),
       .max_users = setup.config.hybrid() ? setup.config.hybrid()->max_users : 0,
       .mean_session_ns = mean_session_ns(setup.config, views),
       .worst_second = r.worst_second ? &*r.worst_second : nullptr,
       .start_lag = r.start_lag,
       .shard = run::shard_name(setup.config),
       .shards = setup.config.shards(),
       .send_tick = setup.config.precision == run::precision_mode::coarse
                        ? engine::pacer::coarse_tick
                        : std::chrono::nanoseconds{0},
       .connections_opened = r.protocols().opened,
       .planned_all = r.measured.counts.planned + r.warmup.counts.planned});
  for (const double p : report::summary_percentiles) {
    v.response_ci.push_back(
        analysis::percentile_interval(views[record::view::response_time], series, p));
  }
  v.allowed_failure_share = analysis::allowed_failure_share(setup.slos, r.measured.counts.planned);
  if (!setup.slos.empty()) v.slo = evaluate_slos_on(setup, r, series, setup.slo_bound);
  return v;
}

report::text_options text_options_of(const run_options& o) {
  return {.verbose = o.verbose, .full_latency = o.full_latency, .full_service = o.full_service};
}

int exit_code_for(const engine::run_result& r, const report::verdicts& v) {
  return report::exit_code(r.interrupted, v);
}

engine::run_result perform_run(const run_setup& setup, const std::string& hlog_path,
                               analysis::interval_series* series, progress_line* progress,
                               live_metrics* metrics) {
  engine::load_run run(setup.config, engine::system_parts(setup.config));
  if (metrics) {
    metrics->begin(setup.config);
    run.set_poll_hook([&run, metrics](const engine::run_collector& c, bool final) {
      metrics->on_poll(c, final, run.start_mapping());
    });
  }
  // Each interval's .hlog lines go to the file as the interval ends (through hlog_text).
  std::optional<atomic_file_writer> hlog_file;
  if (!hlog_path.empty()) hlog_file.emplace(hlog_path);
  std::ostringstream hlog_text;
  std::unique_ptr<hdr::interval_log_writer> log;
  const auto sink = [&](std::int64_t index, const record::view_set& v) {
    if (series) series->add(v);
    if (progress) progress->on_interval(index, v);
    if (metrics) metrics->on_interval(v);
    if (!hlog_file) return;
    if (!log) {
      // StartTime and BaseTime are the measured window's start, as jHiccup writes them.
      const auto start = run.start_mapping().unix + setup.config.warmup;
      log = std::make_unique<hdr::interval_log_writer>(hlog_text,
                                                       static_cast<double>(start.count()) / 1e9);
      log->write_header("[Logged with punctual 0.1.0]");
    }
    write_interval(*log, index, v, setup.config);
    hlog_file->write(hlog_text.view());
    hlog_text.str({});
  };
  if (const char* file = std::getenv("PUNCTUAL_MEMORY_REPORT"); file != nullptr && *file) {
    run.set_memory_probe([&, path = std::string(file)](const std::string& when,
                                                       engine::memory_account rows) {
      rows.push_back({"cli: interval series (confidence, SLOs)", series ? series->bytes() : 0});
      engine::add_process_rows(rows);
      const auto bound = engine::bound_histograms(setup.config);
      rows.push_back({"bound: histograms, all threads", bound.total});
      rows.push_back({"bound: per worker", bound.per_worker});
      rows.push_back(
          {"bound: series, bytes per second of the run",
           engine::series_bytes_per_second(
               setup.config,
               series ? series->percentiles().size() - analysis::summary_percentiles.size() : 0)});
      std::ofstream(path, std::ios::app) << engine::format_account(when, rows);
    });
  }
  engine::run_result r;
  {
    signal_scope signals(run);
    try {
      r = run.execute(sink);
    } catch (const engine::run_failure& e) {
      throw run_error(e.what());
    }
  }
  if (hlog_file) hlog_file->commit();
  return r;
}

// Every file output comes from the JSON report's text: the HTML and the timeline show exactly
// what the JSON says.
namespace {

void write_outputs(const run_options& o, const run_setup& setup, const engine::run_result& r,
                   const report::verdicts& verdicts, const std::string& text) {
  if (o.json_out.empty() && o.html_out.empty() && o.timeline_out.empty() && o.junit_out.empty())
    return;
  std::ostringstream json;
  report::write_json(json, setup.config, r, verdicts, text);
  if (o.json_out == "-") {
    std::cout << json.str() << std::flush;
  } else if (!o.json_out.empty()) {
    write_file_atomically(o.json_out, json.str());
  }
  if (o.html_out.empty() && o.timeline_out.empty() && o.junit_out.empty()) return;
  const auto doc = nlohmann::ordered_json::parse(json.str());
  write_renderings(doc, o.html_out, o.timeline_out);
  write_junit(doc, "punctual run", o.junit_out);
}

}  // namespace

int run_command(const run_options& typed, const std::vector<std::string>& command_line) {
  const run_options o = with_out_dir(typed);
  const run_setup setup = build_run(o, command_line);
  if (!o.schedule_out.empty()) {
    if (!setup.config.plan()) throw usage_error("--schedule-out: the closed model has no schedule");
    write_schedule_file(setup, o.schedule_out);
  }
  for (const auto& note : setup.notes) std::fprintf(stderr, "punctual: note: %s\n", note.c_str());
  if (setup.config.start_at && !o.quiet) {
    std::fprintf(stderr,
                 "punctual: %s waits for --start-at %s (the measured window starts in %s)\n",
                 run::shard_name(setup.config).c_str(), o.start_at.c_str(),
                 analysis::duration_text(std::max(*setup.config.start_at - net::unix_now(),
                                                  std::chrono::nanoseconds{0}))
                     .c_str());
  }
  std::unique_ptr<live_metrics> metrics = live_metrics::from_options(o);
  analysis::interval_series series(analysis::slo_percentiles(setup.slos));
  progress_line progress(choose_progress(o.quiet, o.progress, isatty(STDERR_FILENO) == 1), stderr,
                         setup.config.duration, setup.config.interval);
  // The remote-write sink is started before the run (a shard waiting for --start-at pushes from
  // its first second) and closed after it: its final push is bounded, never fatal.
  auto* const remote = attach_remote_write(setup.remote_write, setup.config.run_id,
                                           setup.config.shard_index(), metrics);
  engine::run_result r = perform_run(setup, o.hlog_out, &series, &progress, metrics.get());
  if (remote) r.remote_write = remote->close();
  progress.finish();
  const report::verdicts verdicts = judge(setup, r, series);
  std::ostringstream text;
  report::write_text(text, setup.config, r, verdicts, text_options_of(o));
  (o.json_out == "-" ? std::cerr : std::cout) << text.str() << std::flush;
  write_outputs(o, setup, r, verdicts, text.str());
  if (!o.hgrm_out.empty()) {
    write_file_atomically(o.hgrm_out, hdr::percentile_distribution_text(
                                          r.measured.views[record::view::response_time]));
  }
  if (metrics) {
    const int seen = signals_received();
    metrics->linger([seen] { return signals_received() > seen; });
  }
  return exit_code_for(r, verdicts);
}

}  // namespace punctual::cli
