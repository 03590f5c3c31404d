// The command line: every option of every subcommand, parsed with CLI11. The only file that
// includes CLI11 (each including file paid ~6 s of compile time for it); the subcommands
// themselves take plain option structs.
#include "cli/app.hpp"

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "cli/command.hpp"
#include "cli/compare_command.hpp"
#include "cli/demo_command.hpp"
#include "cli/k8s_manifest_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/search_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/suggest.hpp"
#include "net/tls.hpp"

namespace punctual::cli {
namespace {

using command_runner = std::function<int()>;

// CLI11 would wrap "-1" into a huge unsigned value; reject it with a readable message.
std::function<std::string(const std::string&)> whole_number(unsigned long long minimum) {
  return [minimum](const std::string& text) -> std::string {
    unsigned long long v = 0;
    const auto* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, v);
    if (r.ec != std::errc() || r.ptr != end || v < minimum) {
      return "'" + text + "' is not a whole number >= " + std::to_string(minimum);
    }
    return {};
  };
}

std::string not_empty(const std::string& v) {
  return v.empty() ? std::string("empty file name") : std::string();
}

void add_run_options(CLI::App& cmd, run_options& o) {
  cmd.add_option("url", o.url, "target, e.g. http://127.0.0.1:8080/ (not with --scenario)");
  o.threads = default_threads();
  o.threads_from_cpus = true;
  cmd.add_option("-t,--threads", o.threads,
                 "worker threads (default: the CPUs this process may use, from 2 to 4; " +
                     std::to_string(o.threads) + " here)")
      ->check(whole_number(1))
      ->each([&o](const std::string&) { o.threads_from_cpus = false; });
  cmd.add_option("-c,--connections", o.connections,
                 "connections, split over the threads (default 10)")
      ->check(whole_number(1))
      ->each([&o](const std::string&) { o.connections_given = true; });
  cmd.add_option("-d,--duration", o.duration,
                 "measured window: 30s, 2m, ... (default 10s; --schedule-in: to the trace's end)");
  cmd.add_option("-R,--rate", o.rate, "requests per second: 2000, 2k, 1.5k (open model)");
  cmd.add_option("--arrival", o.arrival, "constant (default) or poisson");
  cmd.add_option("--stages", o.stages,
                 "rate ramps, e.g. 10s:100,30s:5000,10s:5000 (-R: the starting rate)");
  cmd.add_option("--seed", o.seed, "seed of the arrival process and every draw (default 1)")
      ->check(whole_number(0))
      ->each([&o](const std::string&) { o.seed_given = true; });
  cmd.add_option("--warmup", o.warmup, "run the same schedule for this long first, reported apart");
  cmd.add_option("--schedule-out", o.schedule_out, "write every intended time to FILE");
  cmd.add_option("--schedule-in", o.schedule_in,
                 "replay FILE's intended times (ns from the start, one per line) as the schedule");
  cmd.add_option("--max-queue", o.max_queue,
                 "drop due requests beyond N waiting per worker (memory grows only as they wait)")
      ->check(whole_number(0));
  cmd.add_option("--timeout", o.timeout, "deadline from the intended time (default 10s)");
  cmd.add_option("--connect-timeout", o.connect_timeout,
                 "bound on one connect (default: --timeout)");
  cmd.add_option("--precision", o.precision, "fine (default), spin or coarse");
  cmd.add_flag("--no-keepalive", o.no_keepalive, "one request per connection");
  cmd.add_flag("--no-claims", o.no_claims,
               "a paused worker's due requests wait for it (to compare; claims are on by default)");
  cmd.add_flag("--pin", o.pin, "pin worker k to the k-th CPU this process may use");
  cmd.add_option(
      "--http", o.http,
      "1.1 (default), 2 (h2 over https by ALPN, h2c with prior knowledge over http), or auto "
      "(the server's choice by ALPN)");
  cmd.add_option(
         "--max-streams", o.max_streams,
         "HTTP/2: streams per connection at most (default 100, within the server's SETTINGS)")
      ->each([&o](const std::string&) { o.max_streams_given = true; });
  cmd.add_option("--request-id-header", o.request_id_header,
                 "send each request's schedule index (--schedule-out's INDEX) in header NAME, "
                 "e.g. x-request-id, to join server logs to the schedule")
      ->each([&o](const std::string&) { o.request_id_header_given = true; });
  cmd.add_option("-m,--method", o.method, "HTTP method (default GET)");
  // Repeatable options take one value per use, so a URL after them stays the URL.
  cmd.add_option("-H,--header", o.headers, "extra header 'Name: value' (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--body", o.body, "request body");
  cmd.add_option("--body-file", o.body_file, "request body from a file");
  cmd.add_option("--scenario", o.scenario_file,
                 "the hybrid model: users arriving by the phases of FILE.yaml, each running a "
                 "scenario of steps (docs/scenario.md)");
  cmd.add_option("--requests", o.requests_file,
                 "a weighted mix of named requests from FILE.yaml (open model; docs/scenario.md)");
  cmd.add_option("--expect-status", o.expect_status, "statuses that count as ok (default 200-399)");
  cmd.add_flag("-L,--latency", o.full_latency, "print the full response-time distribution");
  cmd.add_flag("-U", o.full_service, "print the full service-time distribution");
  cmd.add_flag(
      "-v,--verbose", o.verbose,
      "list every validity check in the text report, not only those that failed or warned");
  cmd.add_option("--json", o.json_out, "write the JSON report to FILE (- for stdout)")
      ->check(not_empty);
  cmd.add_option("--hlog", o.hlog_out, "write an HdrHistogram interval log to FILE");
  cmd.add_option("--hgrm", o.hgrm_out, "write the response-time .hgrm to FILE");
  cmd.add_option("--html", o.html_out,
                 "write a self-contained HTML report (charts, worst second) to FILE")
      ->check(not_empty);
  cmd.add_option("--timeline", o.timeline_out, "write one CSV row per second to FILE.csv")
      ->check(not_empty);
  cmd.add_option("--junit", o.junit_out,
                 "write JUnit XML to FILE: one testcase per SLO and per gating validity check")
      ->check(not_empty);
  cmd.add_flag("--progress", o.progress,
               "print a progress line every 10s when stderr is not a terminal");
  cmd.add_flag("-q,--quiet", o.quiet, "no progress output: only the final report and errors");
  cmd.add_option("--model", o.model, "open (default) or closed");
  cmd.add_option("--think", o.think, "closed model: pause between a response and the next request");
  cmd.add_option("--expected-interval", o.expected_interval,
                 "closed model: add a reconstructed view by expected-interval correction");
  cmd.add_option("--slo", o.slos,
                 "gate: p99<=200ms, p99.9<1s, errors<=0.1%, timeouts==0, rate>=99%; NAME:EXPR for "
                 "one step, request "
                 "name or SCENARIO.session (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--slo-bound", o.slo_bound,
                 "point (default) or upper: gate percentiles on the upper 95% bound");
  cmd.add_flag("--allow-uncorrected", o.allow_uncorrected,
               "closed model: gate on uncorrected latency anyway");
  cmd.add_option("--retries", o.retry.retries, "retry a failed request up to N times (default 0)")
      ->check(whole_number(0));
  cmd.add_option("--retry-on", o.retry.on,
                 "what to retry: 5xx,429,timeout,reset,connect (default all but timeout)");
  cmd.add_option("--retry-backoff", o.retry.backoff,
                 "exp:BASE..CAP, full jitter (default exp:50ms..2s)");
  cmd.add_option("--retry-budget", o.retry.budget,
                 "cap retries at this share of first attempts, e.g. 10%");
  cmd.add_option("--attempt-timeout", o.retry.attempt_timeout,
                 "deadline of one attempt, from when it was due (retry-on timeout)");
  cmd.add_option("--cacert", o.cacert, "https: also trust the CA certificates in this PEM file");
  cmd.add_flag("--insecure", o.insecure,
               "https: do not verify the server's certificate (said in every report)");
  cmd.add_option("--cert", o.cert, "https: present this client certificate (PEM; needs --key)");
  cmd.add_option("--key", o.key, "https: the private key of --cert (PEM)");
  cmd.add_option("--resolve", o.resolve,
                 "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--shard", o.shard,
                 "I/N: run only requests i with i mod N == I (env/N: I from JOB_COMPLETION_INDEX)");
  cmd.add_option("--start-at", o.start_at,
                 "start the measured window at this wall-clock time (RFC 3339 or Unix seconds)");
  cmd.add_option("--out-dir", o.out_dir, "write shard-I-of-N.json and shard-I-of-N.hlog into DIR")
      ->check(not_empty);
  cmd.add_option("--metrics-listen", o.metrics_listen,
                 "serve live metrics in the Prometheus text format at HOST:PORT/metrics (:PORT "
                 "binds 127.0.0.1), refreshed every second")
      ->check(not_empty);
  cmd.add_option("--metrics-linger", o.metrics_linger,
                 "keep serving the final metrics this long after the run (default 5s)");
  cmd.add_option("--run-id", o.run_id,
                 "name the run in its report, the same on every shard (default: from --start-at "
                 "and the workload, else random)");
  cmd.add_option("--remote-write", o.remote_write,
                 "push the live metrics to this Prometheus remote-write URL every second "
                 "(http://HOST:PORT/api/v1/write)");
  cmd.add_option("--remote-write-header", o.remote_write_headers,
                 "header 'Name: value' on every remote-write push, e.g. authentication "
                 "(repeatable)")
      ->allow_extra_args(false);
}

void add_run_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand("run", "run a load test (open model by default)");
  auto options = std::make_shared<run_options>();
  add_run_options(*cmd, *options);
  cmd->callback(
      [&chosen, options] { chosen = [options] { return run_command(*options, command_line()); }; });
}

void add_search_options(CLI::App& cmd, search_options& o) {
  add_run_options(cmd, o.run);
  cmd.add_option("--from", o.from, "first step's rate (default 100)");
  cmd.add_option("--factor", o.factor,
                 "grow the rate by this factor until a step fails (default 2)");
  cmd.add_option("--to", o.to, "the highest rate to try");
  cmd.add_option(
      "--resolution", o.resolution,
      "stop bisecting once the bracket is within this share of its low end (default 5%)");
  cmd.add_option("--max-steps", o.max_steps, "at most this many steps (default 20)");
  cmd.add_option("--max-time", o.max_time, "at most this long in all (default 15m)");
  cmd.add_option("--step-warmup", o.step_warmup, "each step's warm-up (default 2s)");
  cmd.add_option("--step-duration", o.step_duration, "each step's measured window (default 10s)");
  cmd.add_option("--cooldown", o.cooldown,
                 "wait at most this long between steps for the server to recover (default 30s)");
  cmd.add_option("--max-connections", o.max_connections,
                 "the most connections a step sizes itself to (default 10000)");
}

// Run's options that search refuses are parsed, so that search can name them, but not offered.
void note_refused(CLI::App& cmd, search_options& o) {
  o.refused_given.clear();
  for (const char* name : search_refused) {
    if (cmd.get_option(name)->count() > 0) o.refused_given.push_back(name);
  }
  o.slo_bound_given = cmd.get_option("--slo-bound")->count() > 0;
}

void add_search_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand(
      "search", "find the highest constant arrival rate at which every --slo passes");
  auto options = std::make_shared<search_options>();
  add_search_options(*cmd, *options);
  for (const char* name : search_refused) cmd->get_option(name)->group("");
  cmd->get_option("--junit")->description(
      "write JUnit XML to FILE: the answer, and the SLOs and gating checks of the step that "
      "decided it");
  cmd->callback([&chosen, options, cmd] {
    note_refused(*cmd, *options);
    chosen = [options] { return search_command(*options, command_line()); };
  });
}

void add_serve_command(CLI::App& app, command_runner& chosen) {
  auto options = std::make_shared<serve_options>();
  auto& c = options->config;
  CLI::App* cmd = app.add_subcommand("serve", "run the stalling HTTP (or HTTPS) test server");
  cmd->add_option("--host", c.host, "address to listen on (127.0.0.1, ::1, ...)")
      ->capture_default_str();
  c.port = 8080;
  cmd->add_option("--port", c.port, "port; 0 picks a free one (printed on stdout)")
      ->capture_default_str();
  cmd->add_option("--threads", c.threads, "event-loop threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--service-time", options->service_text,
                  "delay before each response: fixed (200us) or exponential (exp:200us)");
  cmd->add_option("--cpu-per-request", options->cpu_text,
                  "burn this much CPU on the serving thread for each request (e.g. 1ms), so the "
                  "server answers at most --threads / DURATION requests per second");
  cmd->add_option("--seed", c.seed, "seed of exponential service times and of faults")
      ->capture_default_str();
  cmd->add_option("--body-size", c.body_size, "bytes of the response body")
      ->check(CLI::Range(std::size_t{0}, std::size_t{64} << 20))
      ->capture_default_str();
  cmd->add_option("--stall", options->stall_text,
                  "LEN/PERIOD: stop answering for the last LEN of every PERIOD (e.g. 2s/10s)");
  cmd->add_option("--stall-at", options->stall_at_text,
                  "START:LEN,...: stall windows from server start (e.g. 3s:1s,7s:500ms)");
  cmd->add_option("--stall-log", c.stall_log_path, "write one JSON line per stall taken");
  cmd->add_option("--arrival-log", c.arrival_log_path,
                  "write '<arrival_mono_ns> <answered_mono_ns>' per request at exit");
  cmd->add_option("--arrival-log-id-header", c.arrival_log_id_header,
                  "--arrival-log: add a third column, the value of request header NAME (e.g. "
                  "the x-request-id of punctual run --request-id-header)");
  cmd->add_option("--duration", options->duration_text, "stop by itself after this long");
  cmd->add_option("--fault", options->fault_texts,
                  "KIND:FRACTION (repeatable): that fraction of requests (of connections for "
                  "banner and reset-at-accept) gets the fault; KIND is banner, reset-at-accept, "
                  "reset[=N], garbage, close-delimited, huge-headers, trickle, continue, chunked, "
                  "http10, close-after, never, 503 or 429")
      ->allow_extra_args(false);
  cmd->add_option("--idle-close", options->idle_close_text,
                  "close keep-alive connections idle for this long");
  cmd->add_option("--mark-late", options->mark_late_text,
                  "answer '299 Late' when a response is due this long or more after its request");
  cmd->add_option("--tls-cert", c.tls.cert_path,
                  "serve HTTPS (TLS 1.2 and 1.3, ALPN http/1.1, or h2 with --http2) with this PEM "
                  "certificate chain");
  cmd->add_option("--tls-key", c.tls.key_path,
                  "unencrypted PEM private key of --tls-cert (default: the --tls-cert file)");
  cmd->add_flag("--tls-self-signed", c.tls.self_signed,
                "serve HTTPS with a key and certificate made at start for localhost, 127.0.0.1 "
                "and ::1, valid for a day; its SHA-256 fingerprint is printed");
  cmd->add_option("--cert-out", options->cert_out,
                  "write the certificate it serves (PEM) to FILE, for punctual run --cacert FILE");
  cmd->add_option("--tls-fault", options->tls_fault_text,
                  "KIND[:after=N]: every connection after the first N (default 0) gets a hostile "
                  "handshake; KIND is garbage-hello, stall-handshake, close-in-handshake or "
                  "plaintext-answer");
  CLI::Option* http2 = cmd->add_flag(
      "--http2", c.http2,
      "speak HTTP/2 instead of HTTP/1.1: h2c with prior knowledge, or h2 by ALPN over TLS");
  cmd->add_option("--max-streams", c.max_streams, "--http2: SETTINGS_MAX_CONCURRENT_STREAMS")
      ->check(CLI::Range(1u, 0x7fffffffu))
      ->capture_default_str()
      ->needs(http2);
  cmd->callback([options, &chosen] { chosen = [options] { return serve_command(*options); }; });
}

void add_demo_command(CLI::App& app, command_runner& chosen) {
  auto* cmd =
      app.add_subcommand("demo", "show coordinated omission against a stalling server (30 s)");
  auto json_path = std::make_shared<std::string>("demo.json");
  auto html_path = std::make_shared<std::string>("demo.html");
  cmd->add_option("--json", *json_path, "where to write demo.json");
  cmd->add_option("--html", *html_path, "where to write demo.html (the spectra on one chart)");
  cmd->callback([&chosen, json_path, html_path] {
    chosen = [json_path, html_path] { return demo_command(*json_path, *html_path); };
  });
}

void add_report_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand(
      "report",
      "summarise one stream of an HdrHistogram interval log (.hlog), as Java's "
      "HistogramLogProcessor does, or re-render a saved JSON run report (--html, --timeline)");
  auto options = std::make_shared<report_options>();
  cmd->add_option("file", options->file, "interval log or JSON run report to read")->required();
  cmd->add_option("--html", options->html_out, "JSON run report: write its HTML report here")
      ->check(not_empty);
  cmd->add_option("--timeline", options->timeline_out,
                  "JSON run report: write its per-second CSV here")
      ->check(not_empty);
  cmd->add_option("--tag", options->tag, "stream to summarise (default: the untagged one)");
  cmd->add_option("--hgrm", options->hgrm_out, "write the percentile distribution (.hgrm) here");
  cmd->add_option("--json", options->json_out, "write a JSON summary here ('-' for stdout)");
  cmd->add_option("--unit-ratio", options->unit_ratio,
                  "divide values by this for text and .hgrm (default 1e6: ns -> ms)")
      ->check(CLI::PositiveNumber);
  cmd->callback([options, &chosen] { chosen = [options] { return report_command(*options); }; });
}

void add_merge_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand(
      "merge",
      "merge the shards' JSON reports of a distributed run into one report (each with "
      "its .hlog beside it), or interval logs (.hlog) interval by interval into one log");
  auto options = std::make_shared<merge_command_options>();
  cmd->add_option("inputs", options->inputs, "shards' JSON reports, or interval logs, to merge")
      ->required();
  cmd->add_option("-o,--output", options->output, "merged JSON report or interval log to write")
      ->required()
      ->check(not_empty);
  cmd->add_option("--html", options->html_out, "JSON reports: also write the merged HTML report")
      ->check(not_empty);
  cmd->add_option("--timeline", options->timeline_out,
                  "JSON reports: also write the merged per-second CSV")
      ->check(not_empty);
  cmd->add_option("--slo", options->slos,
                  "JSON reports: judge the merged run, as run --slo does (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--slo-bound", options->slo_bound,
                  "point (default) or upper, as run --slo-bound");
  cmd->add_option("--junit", options->junit_out,
                  "JSON reports: also write JUnit XML (one testcase per SLO and gating check)")
      ->check(not_empty);
  cmd->add_option("--unit-ratio", options->unit_ratio,
                  "ratio for the max column (default: as in the inputs, else 1e6)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tolerance-ms", options->tolerance_ms,
                  "how far starts and lengths may differ and still align (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([options, &chosen] { chosen = [options] { return merge_command(*options); }; });
}

void add_compare_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand(
      "compare",
      "compare a candidate run with a baseline (JSON reports of run or merge, each with its .hlog "
      "beside it): did it regress by more than a threshold and more than run-to-run noise?");
  auto o = std::make_shared<compare_command_options>();
  cmd->add_option("base", o->base, "the baseline's JSON report")->required();
  cmd->add_option("candidate", o->candidate, "the candidate's JSON report")->required();
  cmd->add_option("--view", o->view, "response_time (default) or service_time");
  cmd->add_option("--max-regression", o->max_regression,
                  "what counts as a regression, e.g. 'p99:+10%,p50:+2ms,errors:+0.5%' (default: "
                  "+5% at p50, p90, p99, p99.9; errors +0.5 percentage points)");
  cmd->add_option("--inconclusive", o->inconclusive,
                  "warn (default: exit 0 with a warning) or fail (exit 3)");
  cmd->add_flag("--allow-different", o->allow_different,
                "compare runs whose workloads differ (the report says what differed)");
  cmd->add_option("--json", o->json_out, "write the comparison as JSON to FILE (- for stdout)")
      ->check(not_empty);
  cmd->add_option("--markdown", o->markdown_out, "write a pull-request comment (Markdown) to FILE")
      ->check(not_empty);
  cmd->add_option("--html", o->html_out, "write a self-contained HTML page to FILE")
      ->check(not_empty);
  cmd->add_option("--junit", o->junit_out, "write JUnit XML to FILE: one testcase per row")
      ->check(not_empty);
  cmd->callback([o, &chosen] { chosen = [o] { return compare_command(*o); }; });
}

// The run options are `run`'s own, so they are parsed and checked exactly as `run` checks them.
void add_k8s_manifest_command(CLI::App& app, command_runner& chosen) {
  auto* cmd = app.add_subcommand(
      "k8s-manifest", "print Kubernetes Jobs (YAML) that run N shards of one run and merge them");
  auto run = std::make_shared<run_options>();
  auto options = std::make_shared<k8s_manifest_options>();
  auto& k = *options;
  add_run_options(*cmd, *run);
  // Parsed, so that k8s_manifest_command can say why it refuses them, but not offered.
  for (const char* set : k8s_option::set_by_manifest) cmd->get_option(set)->group("");
  cmd->add_option(k8s_option::shards, k.shards, "N: shards of the run, one pod each (required)")
      ->required()
      ->check(whole_number(1));
  cmd->add_option(k8s_option::lead_time, k.lead_time,
                  "the measured window starts this long after now (default 2m)");
  cmd->add_option(k8s_option::image, k.image, "image with punctual (default punctual:0.1.0)");
  cmd->add_option(k8s_option::claim, k.claim,
                  "ReadWriteMany PersistentVolumeClaim mounted at /results (default "
                  "punctual-results)");
  cmd->add_option(k8s_option::memory, k.memory, "memory request and limit per pod (default 512Mi)");
  cmd->add_option(k8s_option::cpu, k.cpu,
                  "whole cores requested and limited per shard (default: -t)")
      ->check(whole_number(1));
  cmd->add_option(k8s_option::name, k.name,
                  "run name: the Jobs' names and /results/NAME (default "
                  "punctual-<UTC yyyymmdd-hhmmss>)");
  cmd->add_option(k8s_option::name_space, k.name_space, "the Jobs' namespace (default: kubectl's)");
  cmd->callback([&chosen, run, options] {
    chosen = [run, options] { return k8s_manifest_command(*options, *run, command_line()); };
  });
}

int fail(int code, const char* what) {
  std::fprintf(stderr, "punctual: %s\n", what);
  return code;
}

bool is_subcommand(const CLI::App& app, const std::string& name) {
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return true;
  }
  return false;
}

// A mistyped long option of a subcommand, named alone (CLI11 would list it with the URL, as if
// both were wrong) and with the nearest real one: "unknown option '--conections' (did you mean
// --connections?)". Empty when every long option is known.
std::string unknown_option(const CLI::App& app, int argc, char** argv) {
  if (argc < 3) return {};
  const CLI::App* command = nullptr;
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_name() == argv[1]) command = sub;
  }
  if (!command) return {};
  std::vector<std::string> known{"--help", "--version"};
  for (const auto* option : command->get_options()) {
    for (const auto& name : option->get_lnames()) known.push_back("--" + name);
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  const std::string typed = first_unknown_option(args, known);
  if (typed.empty()) return {};
  const auto meant = closest(typed, known);
  return "unknown option '" + typed + "'" + (meant ? " (did you mean " + *meant + "?)" : "");
}

// Every connection is a descriptor: take the whole hard limit up front (as wrk users would with
// ulimit -n), so -c is bounded only by what the system allows.
void raise_descriptor_limit() noexcept {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

// A command's arguments (without the program and command names) parsed as the binary would;
// CLI11 takes them last first.
void parse_args(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw usage_error(e.what());
  }
}

run_options parse_run_options(const std::vector<std::string>& args) {
  CLI::App app{"punctual run"};
  run_options o;
  add_run_options(app, o);
  parse_args(app, args);
  return o;
}

search_options parse_search_options(const std::vector<std::string>& args) {
  CLI::App app{"punctual search"};
  search_options o;
  add_search_options(app, o);
  parse_args(app, args);
  note_refused(app, o);
  return o;
}

int run_app(int argc, char** argv) {
  net::install_tls_allocator();
  CLI::App app{"punctual: an open-loop HTTP load generator whose latency numbers can be trusted"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "punctual 0.1.0");
  set_command_line(argc, argv);
  raise_descriptor_limit();
  command_runner chosen;
  add_run_command(app, chosen);
  add_search_command(app, chosen);
  add_serve_command(app, chosen);
  add_demo_command(app, chosen);
  add_report_command(app, chosen);
  add_merge_command(app, chosen);
  add_compare_command(app, chosen);
  add_k8s_manifest_command(app, chosen);
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(app, argv[1])) {
    const std::string message =
        std::string("unknown command '") + argv[1] +
        "' (expected run, search, serve, demo, report, merge, compare or k8s-manifest)";
    return fail(exit_usage, message.c_str());
  }
  if (const std::string unknown = unknown_option(app, argc, argv); !unknown.empty()) {
    return fail(exit_usage, unknown.c_str());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(exit_usage, e.what());
  }
  try {
    return chosen ? chosen() : fail(exit_usage, "no command given");
  } catch (const usage_error& e) {
    return fail(exit_usage, e.what());
  } catch (const run_error& e) {
    return fail(exit_run_failed, e.what());
  } catch (const std::exception& e) {
    return fail(exit_run_failed, e.what());
  }
}

}  // namespace punctual::cli
