#include "cli/scenario_options.hpp"

#include <algorithm>
#include <memory>
#include <variant>

#include "cli/command.hpp"
#include "cli/mix_options.hpp"
#include "http/body_needle.hpp"
#include "http/request_template.hpp"
#include "http/text.hpp"

namespace punctual::cli {
namespace {

using std::chrono::nanoseconds;

// Users at once per thread with connection: per_user and no max_users.
constexpr std::uint32_t per_user_slots = 4096;

void refuse_beside_scenario(const run_options& o) {
  const std::pair<bool, const char*> replaced[] = {
      {!o.url.empty(), "a URL argument (the file's target is the target)"},
      {!o.rate.empty(), "-R/--rate (the file's phases set the arrival rate)"},
      {!o.duration.empty(), "-d/--duration (the file's phases set the duration)"},
      {!o.stages.empty(), "--stages (the file's phases are the stages)"},
      {!o.arrival.empty(), "--arrival (the file's arrival key)"},
      {!o.requests_file.empty(), "--requests"},
      {!o.schedule_in.empty(), "--schedule-in"},
      {o.model != "open", "--model (a scenario is the hybrid model)"},
      {o.method != "GET" || !o.body.empty() || !o.body_file.empty(),
       "-m, --body and --body-file (each step sets its own)"},
  };
  for (const auto& [given, what] : replaced) {
    if (given) throw usage_error("--scenario " + o.scenario_file + ": cannot be used with " + what);
  }
}

// One constant phase is a plain rate. Otherwise each phase is a stage that ramps to its end
// rate, after a 1 ns stage that moves the rate to the phase's start (stages must have a length).
void set_arrivals(const scenario::scenario_file& f, schedule::plan& p) {
  const auto& first = f.phases.front();
  if (f.phases.size() == 1 && !first.ramp_to) {
    p.rate_per_s = first.arrival_rate;
    return;
  }
  p.start_rate_per_s = first.arrival_rate;
  double rate = first.arrival_rate;
  for (const auto& ph : f.phases) {
    if (ph.arrival_rate != rate) p.stages.push_back({nanoseconds{1}, ph.arrival_rate});
    rate = ph.ramp_to.value_or(ph.arrival_rate);
    p.stages.push_back({ph.duration, rate});
  }
}

std::bitset<600> status_set(const std::vector<int>& ranges) {
  std::bitset<600> out;
  for (std::size_t i = 0; i + 1 < ranges.size(); i += 2) {
    for (int code = ranges[i]; code <= ranges[i + 1] && code < 600; ++code) {
      if (code >= 0) out.set(static_cast<std::size_t>(code));
    }
  }
  return out;
}

// The steps of every scenario as names SCENARIO.STEP, then one SCENARIO.session per scenario.
// A step that names {{variables}} is rendered per user from a template of its request.
std::shared_ptr<const http::request_template> step_template(
    const http::request_spec& spec, const std::string& where,
    const std::vector<std::string>& variables) {
  bool marked = http::has_template_mark(spec.path_and_query) || http::has_template_mark(spec.body);
  for (const auto& header : spec.headers) marked = marked || http::has_template_mark(header);
  if (!marked) return nullptr;
  auto t = http::request_template::compile(http::encode_request_head(spec), spec.body,
                                           http::method_implies_body(spec.method), variables);
  if (auto* error = std::get_if<std::string>(&t)) throw usage_error(where + ": " + *error);
  return std::make_shared<const http::request_template>(
      std::move(std::get<http::request_template>(t)));
}

std::vector<run::capture_rule> capture_rules(const scenario::step& st,
                                             const std::vector<std::string>& variables) {
  std::vector<run::capture_rule> out;
  for (const auto& c : st.captures) {
    const auto at = std::find(variables.begin(), variables.end(), c.name) - variables.begin();
    out.push_back({static_cast<std::uint16_t>(at), c.from_header, c.key});
  }
  return out;
}

void add_names(const run_options& o, const scenario::scenario_file& f, const http::url& target,
               run::config& c, run::hybrid_model& h) {
  for (const auto& sc : f.scenarios) {
    run::hybrid_scenario hs{sc.name, sc.weight, {}, 0};
    for (const auto& st : sc.steps) {
      const std::string where = "--scenario " + f.file + ":" + std::to_string(st.line);
      const entry_text text{st.method, st.target, st.headers, st.body};
      run::named_request r = encode_entry(o, target, where, text);
      r.name = sc.name + "." + st.name;
      r.weight = 0;  // steps are never drawn: a session sends them in order
      r.expected_status =
          st.expect_status.empty() ? c.expected_status : status_set(st.expect_status);
      if (!st.expect_body.empty())
        r.expect_body = std::make_shared<const http::body_needle>(st.expect_body);
      const http::request_spec spec = spec_of_entry(o, target, where, text);
      const bool own_cookie = std::any_of(
          spec.headers.begin(), spec.headers.end(),
          [](const std::string& hd) { return http::iequals(http::header_name(hd), "Cookie"); });
      hs.steps.push_back({static_cast<std::uint16_t>(c.mix.size()), st.think,
                          step_template(spec, where, h.variables), capture_rules(st, h.variables),
                          own_cookie});
      c.mix.push_back(std::move(r));
    }
    h.scenarios.push_back(std::move(hs));
  }
  for (std::size_t i = 0; i < f.scenarios.size(); ++i) {
    run::named_request r;
    r.name = f.scenarios[i].name + ".session";
    r.weight = 0;
    r.session = true;
    h.scenarios[i].session_name = static_cast<std::uint16_t>(c.mix.size());
    c.mix.push_back(std::move(r));
  }
}

// connection: per_user holds a connection per concurrent user: the run's connections are its
// user slots, max_users of them, or per_user_slots per thread when the file sets no bound.
void set_user_connections(const run_options& o, const scenario::scenario_file& f, run::config& c,
                          run::hybrid_model& h) {
  h.per_user = f.connection == scenario::connection_policy::per_user;
  if (!h.per_user) return;
  if (o.connections_given) {
    throw usage_error("--scenario " + f.file +
                      ": -c applies only with connection: pool (per_user "
                      "opens a connection per user)");
  }
  c.connections = f.max_users ? std::max(f.max_users, c.threads) : per_user_slots * c.threads;
  if (h.max_users == 0) h.max_users = c.connections;
  check_descriptor_limit(c.connections);
}

}  // namespace

scenario::scenario_file load_scenario_options(const run_options& o) {
  refuse_beside_scenario(o);
  try {
    scenario::scenario_file f = scenario::load_scenario(o.scenario_file);
    for (auto& ph : f.phases) {
      ph.arrival_rate *= o.scenario_scale;
      if (ph.ramp_to) *ph.ramp_to *= o.scenario_scale;
      ph.duration = std::chrono::duration_cast<nanoseconds>(ph.duration * o.scenario_stretch);
    }
    return f;
  } catch (const scenario::load_error& e) {
    throw usage_error(std::string("--scenario ") + e.what());
  }
}

http::url scenario_target(const scenario::scenario_file& f) {
  auto target = http::parse_url(f.target);
  if (!target) throw usage_error("--scenario " + f.file + ": target: " + target.error);
  return *target.value;
}

void apply_scenario(const run_options& o, const scenario::scenario_file& f, const http::url& target,
                    const run::retry_policy& retry, run::config& c) {
  nanoseconds total{};
  for (const auto& ph : f.phases) total += ph.duration;
  if (c.warmup >= total) {
    throw usage_error("--warmup " + o.warmup + " covers all of the phases of --scenario " + f.file);
  }
  c.duration = total - c.warmup;
  c.seed = o.seed_given ? o.seed : f.seed.value_or(o.seed);
  schedule::plan p;
  p.arrival = f.poisson ? schedule::arrival_kind::poisson : schedule::arrival_kind::constant;
  set_arrivals(f, p);
  p.warmup = c.warmup;
  p.duration = c.duration;
  p.seed = c.seed;
  p.workers = c.threads;
  if (const auto err = schedule::validate(p))
    throw usage_error("--scenario " + f.file + ": " + *err);
  run::hybrid_model h;
  h.plan = std::move(p);
  h.retry = retry;
  h.file = f.file;
  h.max_users = f.max_users;
  h.drop_on_overload = f.on_overload == scenario::overload_policy::drop;
  h.continue_on_error = f.on_error == scenario::error_policy::continue_;
  h.graceful_stop = f.graceful_stop;
  set_user_connections(o, f, c, h);
  h.variables = f.variables();
  h.cookies = f.cookies;
  if (f.csv) {
    h.csv_rows = std::make_shared<const std::vector<std::vector<std::string>>>(f.csv->table.rows);
    h.csv_random = f.csv->random;
  }
  c.mix.clear();
  add_names(o, f, target, c, h);
  c.mix_file = f.file;
  c.model = std::move(h);
}

}  // namespace punctual::cli
