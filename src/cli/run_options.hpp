// `punctual run` options and their translation into an immutable run configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/slo.hpp"
#include "cli/remote_write_options.hpp"
#include "cli/retry_options.hpp"
#include "run/config.hpp"

namespace punctual::cli {

// The raw option values, as typed (parsed and checked by build_run()).
struct run_options {
  std::string url;
  std::uint32_t threads = 2;
  bool threads_from_cpus = false;  // `threads` is -t's default (default_threads()), not -t's
  std::uint32_t connections = 10;
  std::string duration;  // empty: 10s, or to the end of a --schedule-in trace
  std::string rate;
  std::string arrival;  // empty: constant (kept apart so --schedule-in can refuse any --arrival)
  std::string stages;
  std::uint64_t seed = 1;
  std::string warmup = "0s";
  std::string schedule_out;
  std::string schedule_in;
  std::uint64_t max_queue = 0;
  std::string timeout = "10s";
  std::string connect_timeout;
  std::string precision = "fine";
  bool no_keepalive = false;
  bool no_claims = false;
  bool pin = false;                 // --pin: worker k on the k-th allowed CPU
  std::string http = "1.1";         // --http 1.1|2|auto
  std::uint32_t max_streams = 100;  // --max-streams: HTTP/2 streams per connection
  bool max_streams_given = false;
  std::string request_id_header;  // --request-id-header NAME: each request's id in header NAME
  bool request_id_header_given = false;
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string body;
  std::string body_file;
  std::string requests_file;       // --requests FILE.yaml: a weighted mix (open model)
  std::string scenario_file;       // --scenario FILE.yaml: the hybrid model
  double scenario_scale = 1;       // search: every phase's arrival_rate and ramp_to times this
  double scenario_stretch = 1;     // search: every phase's duration times this (a longer re-run)
  bool seed_given = false;         // --seed was given (it overrides a scenario file's seed)
  bool connections_given = false;  // -c was given (a scenario's per_user connections refuse it)
  std::string expect_status = "200-399";
  bool full_latency = false;
  bool full_service = false;
  bool verbose = false;
  std::string json_out;
  std::string hlog_out;
  std::string hgrm_out;
  std::string html_out;      // --html FILE: the self-contained report, from the JSON report
  std::string timeline_out;  // --timeline FILE.csv: series.per_second as CSV
  std::string junit_out;     // --junit FILE: the SLOs and gating checks as JUnit XML
  bool progress = false;     // --progress: plain progress lines every 10 s when not on a terminal
  bool quiet = false;        // --quiet: no progress at all
  std::string model = "open";
  std::string think = "0s";
  std::string expected_interval;
  std::vector<std::string> slos;
  std::string slo_bound = "point";
  bool allow_uncorrected = false;
  retry_texts retry;
  // https://
  std::string cacert;
  bool insecure = false;
  std::string cert;
  std::string key;
  std::vector<std::string> resolve;  // HOST:PORT:ADDR
  // Distributed runs (docs/distributed.md)
  std::string shard;           // I/N, or env/N (I from JOB_COMPLETION_INDEX)
  std::string start_at;        // RFC 3339 or Unix seconds: when the measured window starts
  std::string out_dir;         // DIR: shard-I-of-N.json and shard-I-of-N.hlog
  std::string run_id;          // the run's id, the same on every shard; empty: derived or random
  std::string metrics_listen;  // --metrics-listen HOST:PORT; empty: no scrape endpoint
  std::string metrics_linger = "5s";  // --metrics-linger: how long it serves the final values
  std::string remote_write;           // URL: push the series there every second
  std::vector<std::string> remote_write_headers;  // "Name: value" on each push (repeatable)
};

struct run_setup {
  run::config config;
  std::vector<analysis::slo_expression> slos;
  analysis::bound_mode slo_bound = analysis::bound_mode::point;
  bool allow_uncorrected = false;
  std::optional<remote_write_target> remote_write;  // --remote-write, checked
  // One line each for stderr before the run: what the options mean that the user may not expect.
  std::vector<std::string> notes;
};

// Checks every value and builds the configuration; throws usage_error with one line.
run_setup build_run(const run_options& o, const std::vector<std::string>& command_line);

// -t's default: the CPUs this process may use (sched_getaffinity), at least 2 (a paused worker
// needs another to claim its requests) and at most 4.
std::uint32_t default_threads();

// --slo and --slo-bound, as run and merge take them; one line (usage_error) on a bad one.
std::vector<analysis::slo_expression> parse_slo_options(const std::vector<std::string>& texts);
analysis::bound_mode parse_slo_bound(const std::string& text);
// --slo NAME:EXPR against the run's names (`sessions`: which are SCENARIO.session entries).
void resolve_slo_names(std::vector<analysis::slo_expression>& slos,
                       const std::vector<std::string>& names, const std::vector<bool>& sessions);

// Refuses (usage_error) more connections than this process may open, before anything is sent.
void check_descriptor_limit(std::uint32_t connections);

}  // namespace punctual::cli
