#include "cli/run_options.hpp"

#include <CLI/CLI.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/command.hpp"
#include "cli/units.hpp"
#include "http/request.hpp"
#include "http/url.hpp"
#include "schedule/stages.hpp"

namespace punctual::cli {
namespace {

engine::precision_mode parse_precision(const std::string& text) {
  if (text == "fine") return engine::precision_mode::fine;
  if (text == "spin") return engine::precision_mode::spin;
  if (text == "coarse") return engine::precision_mode::coarse;
  throw usage_error("--precision: '" + text + "' is not a mode (expected fine, spin or coarse)");
}

std::string read_body_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("--body-file: cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_shape(const run_options& o) {
  if (o.threads < 1) throw usage_error("-t/--threads: must be at least 1");
  if (o.connections < 1) throw usage_error("-c/--connections: must be at least 1");
  if (o.connections < o.threads) {
    throw usage_error("-c " + std::to_string(o.connections) + " is less than -t " +
                      std::to_string(o.threads) + ": every thread needs a connection");
  }
  if (o.model != "open" && o.model != "closed") {
    throw usage_error("--model: '" + o.model + "' is not a model (expected open or closed)");
  }
  if (o.model == "open" && o.rate.empty() && o.stages.empty()) {
    throw usage_error("-R/--rate is required for the open model (e.g. -R 2000), or use --stages");
  }
  if (o.model == "closed" && !o.rate.empty()) {
    throw usage_error("-R/--rate: the closed model has no rate (the server sets the pace)");
  }
  if (o.model == "open" && !o.expected_interval.empty()) {
    throw usage_error("--expected-interval applies to the closed model only");
  }
  if (o.arrival != "constant" && o.arrival != "poisson") {
    throw usage_error("--arrival: '" + o.arrival + "' is not an arrival process (expected constant or poisson)");
  }
  if (!o.body.empty() && !o.body_file.empty()) {
    throw usage_error("--body and --body-file cannot be used together");
  }
  if (o.model == "closed" && !o.stages.empty()) {
    throw usage_error("--stages: the closed model has no rate to ramp (use --model open)");
  }
  if (o.model == "closed" && o.arrival != "constant") {
    throw usage_error("--arrival " + o.arrival + ": the closed model has no arrival process");
  }
  if (o.model == "closed" && o.max_queue != 0) {
    throw usage_error("--max-queue: the closed model has no queue (each connection sends its next "
                      "request when the previous one is answered)");
  }
  if (o.model == "open" && o.think != "0s") {
    throw usage_error("--think " + o.think + ": think time applies to the closed model only");
  }
}

// Fails before anything is sent if an output could not be written afterwards.
void check_output_path(const char* option, const std::string& path, bool dash_ok) {
  if (path.empty()) return;
  if (dash_ok && path == "-") return;
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (path.back() == '/' || access(dir.c_str(), W_OK) != 0) {
    throw usage_error(std::string(option) + ": cannot write '" + path + "' (no such writable directory)");
  }
}

// main() has raised the soft limit to the hard one; refuse a -c beyond it before anything is
// sent, rather than fail mid-run.
void check_descriptor_limit(std::uint32_t connections) {
  constexpr rlim_t spare = 64;  // logs, epoll and eventfds, stdio
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= connections + spare) return;
  throw usage_error("-c " + std::to_string(connections) +
                    ": more connections than this process may open (open-file limit " +
                    std::to_string(lim.rlim_cur) + ")");
}

http::request_spec build_request(const run_options& o, const http::url& target) {
  http::request_spec spec;
  spec.method = o.method;
  spec.host = http::host_header_value(target);
  spec.path_and_query = target.path_and_query;
  spec.headers = o.headers;
  spec.body = o.body_file.empty() ? o.body : read_body_file(o.body_file);
  spec.keep_alive = !o.no_keepalive;
  if (const auto err = http::validate_request(spec)) throw usage_error(*err);
  return spec;
}

schedule::plan build_plan(const run_options& o, const engine::run_config& c) {
  schedule::plan p;
  p.arrival = o.arrival == "poisson" ? schedule::arrival_kind::poisson : schedule::arrival_kind::constant;
  if (!o.rate.empty()) p.rate_per_s = parse_rate("-R/--rate", o.rate);
  if (!o.stages.empty()) {
    std::string error;
    auto stages = schedule::parse_stages(o.stages, error);
    if (!stages) throw usage_error("--stages: " + error);
    p.stages = std::move(*stages);
    p.start_rate_per_s = p.rate_per_s;
  }
  p.warmup = c.warmup;
  p.duration = c.duration;
  p.seed = o.seed;
  p.workers = c.threads;
  if (const auto err = schedule::validate(p)) throw usage_error(*err);
  return p;
}

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

}  // namespace

void add_run_options(CLI::App& cmd, run_options& o) {
  cmd.add_option("url", o.url, "target, e.g. http://127.0.0.1:8080/")->required();
  cmd.add_option("-t,--threads", o.threads, "worker threads (default 2)")->check(whole_number(1));
  cmd.add_option("-c,--connections", o.connections, "connections, split over the threads (default 10)")
      ->check(whole_number(1));
  cmd.add_option("-d,--duration", o.duration, "measured window: 30s, 2m, ... (default 10s)");
  cmd.add_option("-R,--rate", o.rate, "requests per second: 2000, 2k, 1.5k (open model)");
  cmd.add_option("--arrival", o.arrival, "constant (default) or poisson");
  cmd.add_option("--stages", o.stages, "rate ramps, e.g. 10s:100,30s:5000,10s:5000 (-R: the starting rate)");
  cmd.add_option("--seed", o.seed, "seed of the arrival process (default 1)")->check(whole_number(0));
  cmd.add_option("--warmup", o.warmup, "run the same schedule for this long first, reported apart");
  cmd.add_option("--schedule-out", o.schedule_out, "write every intended time to FILE");
  cmd.add_option("--max-queue", o.max_queue, "drop due requests beyond N waiting per worker")
      ->check(whole_number(0));
  cmd.add_option("--timeout", o.timeout, "deadline from the intended time (default 10s)");
  cmd.add_option("--connect-timeout", o.connect_timeout, "bound on one connect (default: --timeout)");
  cmd.add_option("--precision", o.precision, "fine (default), spin or coarse");
  cmd.add_flag("--no-keepalive", o.no_keepalive, "one request per connection");
  cmd.add_option("-m,--method", o.method, "HTTP method (default GET)");
  // Repeatable options take one value per use, so a URL after them stays the URL.
  cmd.add_option("-H,--header", o.headers, "extra header 'Name: value' (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--body", o.body, "request body");
  cmd.add_option("--body-file", o.body_file, "request body from a file");
  cmd.add_option("--expect-status", o.expect_status, "statuses that count as ok (default 200-399)");
  cmd.add_flag("-L,--latency", o.full_latency, "print the full response-time distribution");
  cmd.add_flag("-U", o.full_service, "print the full service-time distribution");
  cmd.add_option("--json", o.json_out, "write the JSON report to FILE (- for stdout)")
      ->check([](const std::string& v) { return v.empty() ? std::string("empty file name") : std::string(); });
  cmd.add_option("--hlog", o.hlog_out, "write an HdrHistogram interval log to FILE");
  cmd.add_option("--hgrm", o.hgrm_out, "write the response-time .hgrm to FILE");
  cmd.add_option("--model", o.model, "open (default) or closed");
  cmd.add_option("--think", o.think, "closed model: pause between a response and the next request");
  cmd.add_option("--expected-interval", o.expected_interval,
                 "closed model: add a reconstructed view by expected-interval correction");
  cmd.add_option("--slo", o.slos, "gate: p99<=200ms, p99.9<1s, errors<=0.1%, timeouts==0, rate>=99% (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--slo-bound", o.slo_bound, "point (default) or upper: gate percentiles on the upper 95% bound");
  cmd.add_flag("--allow-uncorrected", o.allow_uncorrected, "closed model: gate on uncorrected latency anyway");
  cmd.add_option("--retries", o.retry.retries, "retry a failed request up to N times (default 0)")
      ->check(whole_number(0));
  cmd.add_option("--retry-on", o.retry.on, "what to retry: 5xx,429,timeout,reset,connect (default all but timeout)");
  cmd.add_option("--retry-backoff", o.retry.backoff, "exp:BASE..CAP, full jitter (default exp:50ms..2s)");
  cmd.add_option("--retry-budget", o.retry.budget, "cap retries at this share of first attempts, e.g. 10%");
  cmd.add_option("--attempt-timeout", o.retry.attempt_timeout, "deadline of one attempt, from when it was due (retry-on timeout)");
}

run_setup build_run(const run_options& o, const std::vector<std::string>& command_line) {
  check_shape(o);
  check_output_path("--json", o.json_out, true);
  check_output_path("--hlog", o.hlog_out, false);
  check_output_path("--hgrm", o.hgrm_out, false);
  check_output_path("--schedule-out", o.schedule_out, false);
  check_descriptor_limit(o.connections);
  auto target = http::parse_url(o.url);
  if (!target) throw usage_error(target.error);
  run_setup s;
  auto& c = s.config;
  c.duration = parse_duration("-d/--duration", o.duration);
  c.warmup = parse_duration("--warmup", o.warmup);
  c.timeout = parse_duration("--timeout", o.timeout);
  c.connect_timeout = o.connect_timeout.empty() ? c.timeout : parse_duration("--connect-timeout", o.connect_timeout);
  c.think = parse_duration("--think", o.think);
  if (c.duration.count() <= 0) throw usage_error("-d/--duration: must be more than 0");
  if (c.timeout.count() <= 0) throw usage_error("--timeout: must be more than 0");
  c.threads = o.threads;
  c.connections = o.connections;
  c.max_queue = o.max_queue;
  c.precision = parse_precision(o.precision);
  c.keep_alive = !o.no_keepalive;
  c.model = o.model == "closed" ? engine::model_kind::closed : engine::model_kind::open;
  for (const auto& r : parse_status_ranges("--expect-status", o.expect_status)) {
    for (int code = r.low; code <= r.high; ++code) c.expected_status.set(static_cast<std::size_t>(code));
  }
  const auto spec = build_request(o, *target.value);
  c.request = http::encode_request(spec);
  c.head_request = spec.method == "HEAD";
  std::string error;
  if (!net::resolve(target.value->host, target.value->port, c.target, error)) throw usage_error(error);

  auto& d = s.description;
  d.command_line = command_line;
  d.target_url = http::to_string(*target.value);
  d.model = o.model;
  d.arrival = o.arrival;
  d.seed = o.seed;
  d.connections = c.connections;
  d.threads = c.threads;
  d.duration = c.duration;
  d.warmup = c.warmup;
  d.think = c.think;
  d.precision = o.precision;
  if (!o.expected_interval.empty()) {
    d.expected_interval = parse_duration("--expected-interval", o.expected_interval);
    if (d.expected_interval->count() <= 0) throw usage_error("--expected-interval: must be more than 0");
  }
  for (const auto& text : o.slos) {
    try {
      s.slos.push_back(analysis::parse_slo(text));
    } catch (const analysis::slo_syntax_error& e) {
      throw usage_error(e.what());
    }
  }
  if (o.slo_bound != "point" && o.slo_bound != "upper") {
    throw usage_error("--slo-bound: '" + o.slo_bound + "' is not a bound (expected point or upper)");
  }
  s.slo_bound = o.slo_bound == "upper" ? analysis::bound_mode::upper : analysis::bound_mode::point;
  s.allow_uncorrected = o.allow_uncorrected;
  c.retry = build_retry_policy(o.retry, c.timeout, o.seed, c.model == engine::model_kind::open);
  if (c.retry.enabled()) {
    d.retry = c.retry;
    d.retry_text = describe(c.retry);
  }
  if (c.model == engine::model_kind::open) {
    s.plan = build_plan(o, c);
    d.schedule_text = schedule::describe(*s.plan);
    if (s.plan->stages.empty()) d.rate_per_s = s.plan->rate_per_s;
  }
  return s;
}

}  // namespace punctual::cli
