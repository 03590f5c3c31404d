#include "cli/run_options.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/command.hpp"
#include "cli/http_options.hpp"
#include "cli/mix_options.hpp"
#include "cli/scenario_options.hpp"
#include "cli/shard_options.hpp"
#include "cli/tls_options.hpp"
#include "cli/units.hpp"
#include "http/request.hpp"
#include "http/url.hpp"
#include "net/clock.hpp"
#include "platform/host_cpu.hpp"
#include "schedule/stages.hpp"
#include "schedule/trace.hpp"

namespace punctual::cli {
namespace {

run::precision_mode parse_precision(const std::string& text) {
  if (text == "fine") return run::precision_mode::fine;
  if (text == "spin") return run::precision_mode::spin;
  if (text == "coarse") return run::precision_mode::coarse;
  throw usage_error("--precision: '" + text + "' is not a mode (expected fine, spin or coarse)");
}

std::string read_body_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error("--body-file: cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A trace sets every intended time itself: the options that shape a schedule contradict it.
void check_schedule_in(const run_options& o) {
  if (o.schedule_in.empty()) return;
  if (o.model == "closed") {
    throw usage_error("--schedule-in: the closed model has no schedule (the server sets the pace)");
  }
  const char* other = !o.rate.empty()      ? "-R/--rate"
                      : !o.stages.empty()  ? "--stages"
                      : !o.arrival.empty() ? "--arrival"
                                           : nullptr;
  if (other) {
    throw usage_error(std::string("--schedule-in and ") + other +
                      " cannot be used together: the trace sets every intended time");
  }
}

void check_shape(const run_options& o) {
  if (o.threads < 1) throw usage_error("-t/--threads: must be at least 1");
  if (o.connections < 1) throw usage_error("-c/--connections: must be at least 1");
  if (o.connections < o.threads) {
    throw usage_error("-c " + std::to_string(o.connections) + " is less than -t " +
                      std::to_string(o.threads) + ": every thread needs a connection");
  }
  if (o.pin && platform::allowed_cpus().size() < o.threads) {
    throw usage_error("--pin: -t " + std::to_string(o.threads) + " needs " +
                      std::to_string(o.threads) + " CPUs, and this process may use " +
                      std::to_string(platform::allowed_cpus().size()));
  }
  if (o.model != "open" && o.model != "closed") {
    throw usage_error("--model: '" + o.model + "' is not a model (expected open or closed)");
  }
  check_schedule_in(o);
  if (!o.scenario_file.empty()) return;  // the file holds the model (load_scenario_options)
  if (o.url.empty()) throw usage_error("url: a target URL is required (or --scenario FILE.yaml)");
  if (o.model == "open" && o.rate.empty() && o.stages.empty() && o.schedule_in.empty()) {
    throw usage_error(
        "-R/--rate is required for the open model (e.g. -R 2000), or use --stages "
        "or --schedule-in");
  }
  if (o.model == "closed" && !o.rate.empty()) {
    throw usage_error("-R/--rate: the closed model has no rate (the server sets the pace)");
  }
  if (o.model == "open" && !o.expected_interval.empty()) {
    throw usage_error("--expected-interval applies to the closed model only");
  }
  if (!o.arrival.empty() && o.arrival != "constant" && o.arrival != "poisson") {
    throw usage_error("--arrival: '" + o.arrival +
                      "' is not an arrival process (expected constant or poisson)");
  }
  if (!o.body.empty() && !o.body_file.empty()) {
    throw usage_error("--body and --body-file cannot be used together");
  }
  if (o.model == "closed" && !o.stages.empty()) {
    throw usage_error("--stages: the closed model has no rate to ramp (use --model open)");
  }
  if (o.model == "closed" && !o.arrival.empty() && o.arrival != "constant") {
    throw usage_error("--arrival " + o.arrival + ": the closed model has no arrival process");
  }
  if (o.model == "closed" && o.max_queue != 0) {
    throw usage_error(
        "--max-queue: the closed model has no queue (each connection sends its next "
        "request when the previous one is answered)");
  }
  if (o.model == "open" && o.think != "0s") {
    throw usage_error("--think " + o.think + ": think time applies to the closed model only");
  }
}

// Fails before anything is sent if an output could not be written afterwards. A file that does
// not exist yet is created and removed again: asking the directory (access) says yes to root
// everywhere, /proc included.
void check_output_path(const char* option, const std::string& path, bool dash_ok) {
  if (path.empty()) return;
  if (dash_ok && path == "-") return;
  const auto slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  bool writable = path.back() != '/' && access(dir.c_str(), W_OK) == 0;
  if (writable && access(path.c_str(), F_OK) != 0) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    writable = fd >= 0;
    if (writable) {
      ::close(fd);
      ::unlink(path.c_str());
    }
  } else if (writable) {
    writable = access(path.c_str(), W_OK) == 0;
  }
  if (!writable) {
    throw usage_error(std::string(option) + ": cannot write '" + path +
                      "' (its directory is missing or not writable)");
  }
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

// The --schedule-in trace, or null without one. Its errors name the file and the line.
std::shared_ptr<const schedule::trace> load_schedule_in(const run_options& o) {
  if (o.schedule_in.empty()) return nullptr;
  schedule::trace_error error;
  auto replay = schedule::load_trace(o.schedule_in, error);
  if (!replay) {
    const std::string line = error.line ? ":" + std::to_string(error.line) : std::string();
    throw usage_error("--schedule-in " + o.schedule_in + line + ": " + error.message);
  }
  return replay;
}

// Without -d: 10s, or a trace's whole time line (to the next whole second after its last
// offset) less the warm-up.
std::chrono::nanoseconds default_duration(const run_options& o, const schedule::trace* replay,
                                          std::chrono::nanoseconds warmup) {
  // Without -d the stages set the run's length, as k6's do: they are laid out from 0, warm-up
  // included.
  if (!o.stages.empty()) {
    std::string error;
    const auto stages = schedule::parse_stages(o.stages, error);
    if (!stages) throw usage_error("--stages: " + error);
    const auto length = schedule::stages_length(*stages);
    if (warmup >= length) {
      throw usage_error("--warmup " + o.warmup + " covers the whole of --stages " + o.stages +
                        ", so nothing would be measured (or give -d)");
    }
    return length - warmup;
  }
  if (!replay) return std::chrono::seconds{10};
  const auto end = replay->natural_end();
  if (warmup >= end) {
    throw usage_error("--warmup " + o.warmup + " covers the whole of --schedule-in " +
                      o.schedule_in + " (its time line ends at " + schedule::format_duration(end) +
                      "), so nothing would be measured");
  }
  return end - warmup;
}

// With -d as well as --stages, the two must describe one length: a -d that cut the stages short
// or held their last rate on would run a load the stages do not say.
void check_stages_length(const run_options& o, const run::config& c) {
  std::string error;
  const auto stages = schedule::parse_stages(o.stages, error);
  if (!stages) throw usage_error("--stages: " + error);
  const auto length = schedule::stages_length(*stages);
  if (length == c.warmup + c.duration) return;
  throw usage_error("--stages " + o.stages + " lasts " + schedule::format_duration(length) +
                    ", but -d " + o.duration +
                    (c.warmup.count() ? " and --warmup " + o.warmup : std::string()) + " ask for " +
                    schedule::format_duration(c.warmup + c.duration) +
                    ": leave -d out (the stages set the length) or make them agree");
}

// The durations: -d, --warmup, --timeout and --connect-timeout.
void parse_times(const run_options& o, const schedule::trace* replay, run::config& c) {
  c.warmup = parse_duration("--warmup", o.warmup);
  c.duration = o.duration.empty() ? default_duration(o, replay, c.warmup)
                                  : parse_duration("-d/--duration", o.duration);
  if (!o.duration.empty() && !o.stages.empty()) check_stages_length(o, c);
  c.timeout = parse_duration_with_unit("--timeout", o.timeout);
  c.connect_timeout = o.connect_timeout.empty()
                          ? c.timeout
                          : parse_duration_with_unit("--connect-timeout", o.connect_timeout);
  if (c.duration.count() <= 0) throw usage_error("-d/--duration: must be more than 0");
  if (c.timeout.count() <= 0) throw usage_error("--timeout: must be more than 0");
}

schedule::plan build_plan(const run_options& o, const run::config& c,
                          std::shared_ptr<const schedule::trace> replay) {
  schedule::plan p;
  p.warmup = c.warmup;
  p.duration = c.duration;
  p.seed = o.seed;
  p.workers = c.threads;
  if (replay) {
    p.arrival = schedule::arrival_kind::trace;
    p.replay = std::move(replay);
    if (const auto err = schedule::validate(p)) {
      throw usage_error("--schedule-in " + o.schedule_in + ": " + *err);
    }
    return p;
  }
  p.arrival =
      o.arrival == "poisson" ? schedule::arrival_kind::poisson : schedule::arrival_kind::constant;
  if (!o.rate.empty()) p.rate_per_s = parse_rate("-R/--rate", o.rate);
  if (!o.stages.empty()) {
    std::string error;
    auto stages = schedule::parse_stages(o.stages, error);
    if (!stages) throw usage_error("--stages: " + error);
    p.stages = std::move(*stages);
    p.start_rate_per_s = p.rate_per_s;
  }
  if (const auto err = schedule::validate(p)) throw usage_error(*err);
  return p;
}

run::closed_model build_closed_model(const run_options& o) {
  run::closed_model m;
  m.think = parse_duration_with_unit("--think", o.think);
  if (!o.expected_interval.empty()) {
    m.expected_interval = parse_duration("--expected-interval", o.expected_interval);
    if (m.expected_interval->count() <= 0)
      throw usage_error("--expected-interval: must be more than 0");
  }
  return m;
}

// --slo NAME:EXPR names one of the run's request names or SCENARIO.session entries.
void resolve_slo_names(std::vector<analysis::slo_expression>& slos, const run::config& c) {
  std::vector<std::string> names;
  std::vector<bool> sessions;
  for (const auto& entry : c.mix) {
    names.push_back(entry.name);
    sessions.push_back(entry.session);
  }
  cli::resolve_slo_names(slos, names, sessions);
}

}  // namespace

// Each --slo is one SLO, or several joined by commas (`--slo 'p99<=50ms,errors<=1%'`), as a
// thresholds list is written elsewhere: no SLO has a comma of its own.
std::vector<analysis::slo_expression> parse_slo_options(const std::vector<std::string>& texts) {
  std::vector<analysis::slo_expression> slos;
  for (const auto& text : texts) {
    std::string_view rest = text;
    do {
      const auto comma = rest.find(',');
      const std::string_view one = rest.substr(0, comma);
      try {
        slos.push_back(analysis::parse_slo(one));
      } catch (const analysis::slo_syntax_error& e) {
        throw usage_error(e.what());
      }
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (comma != std::string_view::npos && rest.empty()) {
        throw usage_error("--slo '" + text + "': nothing after its last comma");
      }
    } while (!rest.empty());
  }
  return slos;
}

analysis::bound_mode parse_slo_bound(const std::string& text) {
  if (text != "point" && text != "upper") {
    throw usage_error("--slo-bound: '" + text + "' is not a bound (expected point or upper)");
  }
  return text == "upper" ? analysis::bound_mode::upper : analysis::bound_mode::point;
}

void resolve_slo_names(std::vector<analysis::slo_expression>& slos,
                       const std::vector<std::string>& names, const std::vector<bool>& sessions) {
  try {
    analysis::resolve_slo_scopes(slos, names, sessions);
  } catch (const analysis::slo_syntax_error& e) {
    throw usage_error(e.what());
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

std::uint32_t default_threads() {
  const auto cpus = static_cast<std::uint32_t>(platform::allowed_cpus().size());
  return std::clamp<std::uint32_t>(cpus, 2, 4);
}

run_setup build_run(const run_options& o, const std::vector<std::string>& command_line) {
  check_shape(o);
  check_output_path("--json", o.json_out, true);
  check_output_path("--hlog", o.hlog_out, false);
  check_output_path("--hgrm", o.hgrm_out, false);
  check_output_path("--schedule-out", o.schedule_out, false);
  check_output_path("--html", o.html_out, false);
  check_output_path("--timeline", o.timeline_out, false);
  check_output_path("--junit", o.junit_out, false);
  check_descriptor_limit(o.connections);
  std::optional<scenario::scenario_file> file;
  if (!o.scenario_file.empty()) file = load_scenario_options(o);
  auto target = file ? http::url_result{scenario_target(*file), {}} : http::parse_url(o.url);
  if (!target) throw usage_error(target.error);
  run_setup s;
  auto& c = s.config;
  auto replay = load_schedule_in(o);
  parse_times(o, replay.get(), c);
  c.threads = o.threads;
  c.threads_from =
      o.threads_from_cpus ? run::threads_source::cpus_allowed : run::threads_source::flag;
  c.connections = o.connections;
  c.max_queue = o.max_queue;
  c.precision = parse_precision(o.precision);
  c.keep_alive = !o.no_keepalive;
  c.claims = !o.no_claims;
  c.pin = o.pin;
  for (const auto& r : parse_status_ranges("--expect-status", o.expect_status)) {
    for (int code = r.low; code <= r.high; ++code)
      c.expected_status.set(static_cast<std::size_t>(code));
  }
  const auto spec = build_request(o, *target.value);
  c.request = http::encode_request(spec);
  c.head_request = spec.method == "HEAD";
  c.seed = o.seed;
  apply_request_mix(o, *target.value, replay.get(), c);
  apply_tls_options(o, *target.value, c);
  c.target = connect_address(o, *target.value);
  c.resolved_address = resolved_address(o, *target.value);

  c.command_line = command_line;
  c.target_url = http::to_string(*target.value);
  s.slos = parse_slo_options(o.slos);
  s.slo_bound = parse_slo_bound(o.slo_bound);
  s.allow_uncorrected = o.allow_uncorrected;
  const bool closed = o.model == "closed" && !file;
  run::retry_policy retry = build_retry_policy(o.retry, c.timeout, o.seed, !closed);
  if (file) {
    apply_scenario(o, *file, *target.value, retry, c);
  } else if (closed) {
    c.model = build_closed_model(o);
  } else {
    c.model = run::open_model{build_plan(o, c, std::move(replay)), retry};
  }
  if (std::string note = apply_http_options(o, c); !note.empty())
    s.notes.push_back(std::move(note));
  apply_request_id_header(o, c);
  apply_shard_options(o, c, net::unix_now());
  if (std::string note = apply_run_identity(o, c, s.slo_bound); !note.empty())
    s.notes.push_back(std::move(note));
  resolve_slo_names(s.slos, c);
  s.remote_write = parse_remote_write(o.remote_write, o.remote_write_headers);
  return s;
}

}  // namespace punctual::cli
