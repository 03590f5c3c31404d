#include "scenario/scenario.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "http/json_pointer.hpp"
#include "http/text.hpp"
#include "scenario/request_fields.hpp"
#include "scenario/request_mix.hpp"
#include "schedule/plan.hpp"
#include "schedule/stages.hpp"

namespace punctual::scenario {
namespace {

constexpr std::string_view duration_hint = "(expected e.g. 30s, 500ms, 2m)";
constexpr std::string_view think_hint = "(expected e.g. 2s, uniform:1s..3s, exp:2s)";

std::chrono::nanoseconds read_duration(const yaml_reader& r, const YAML::Node& node,
                                       std::string_view key) {
  const std::string s = r.text(node, key);
  const auto d = schedule::parse_stage_duration(s);
  if (!d) r.fail(node, key, "'" + s + "' is not a duration " + std::string(duration_hint));
  return *d;
}

double read_rate(const yaml_reader& r, const YAML::Node& node, std::string_view key) {
  const std::string s = r.text(node, key);
  const auto rate = schedule::parse_stage_rate(s);
  if (!rate) {
    r.fail(node, key,
           "'" + s + "' is not a rate (expected users per second, 0 to 1e9, e.g. 10, 2.5k)");
  }
  return *rate;
}

// A whole number in [0, max], in decimal digits only (no sign, no exponent).
std::uint64_t read_whole(const yaml_reader& r, const YAML::Node& node, std::string_view key,
                         std::uint64_t max) {
  const std::string s = r.text(node, key);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || v > max) {
    r.fail(node, key, "'" + s + "' is not a whole number from 0 to " + std::to_string(max));
  }
  return v;
}

// One of `choices`; returns its index.
std::size_t read_choice(const yaml_reader& r, const YAML::Node& node, std::string_view key,
                        std::initializer_list<std::string_view> choices) {
  const std::string s = r.text(node, key);
  std::size_t i = 0;
  std::string listed;
  for (const auto c : choices) {
    if (s == c) return i;
    listed += (i++ == 0 ? "" : " or ") + std::string(c);
  }
  r.fail(node, key, "'" + s + "' is not " + listed);
}

phase read_phase(const yaml_reader& r, const YAML::Node& node) {
  r.expect_map(node, "phases", {"duration", "arrival_rate", "ramp_to"});
  if (!node["duration"]) r.fail(node, "duration", "every phase needs a duration");
  if (!node["arrival_rate"]) r.fail(node, "arrival_rate", "every phase needs an arrival_rate");
  phase p;
  p.duration = read_duration(r, node["duration"], "duration");
  if (p.duration.count() == 0) r.fail(node["duration"], "duration", "must be > 0");
  p.arrival_rate = read_rate(r, node["arrival_rate"], "arrival_rate");
  if (node["ramp_to"]) p.ramp_to = read_rate(r, node["ramp_to"], "ramp_to");
  return p;
}

std::vector<phase> read_phases(const yaml_reader& r, const YAML::Node& list) {
  r.expect_sequence(list, "phases");
  if (list.size() == 0) r.fail(list, "phases", "the list is empty");
  std::vector<phase> phases;
  std::int64_t total = 0;
  bool some_users = false;
  for (const auto& node : list) {
    phases.push_back(read_phase(r, node));
    const phase& p = phases.back();
    // Each duration is below max_window_ns, so the sum cannot overflow before it is refused.
    total += p.duration.count();
    if (total >= schedule::max_window_ns) r.fail(node, "duration", "the phases are too long");
    some_users = some_users || p.arrival_rate > 0 || p.ramp_to.value_or(0) > 0;
  }
  if (!some_users) r.fail(list, "phases", "every rate is 0, so no user would arrive");
  return phases;
}

// "200", "200-299", or a comma-separated list of those, appended as (low, high) pairs.
bool parse_status_ranges(std::string_view text, std::vector<int>& out) {
  const auto code = [](std::string_view s, int& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc{} && end == s.data() + s.size() && v >= 100 && v <= 599;
  };
  while (true) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (item.starts_with(' ')) item.remove_prefix(1);
    while (item.ends_with(' ')) item.remove_suffix(1);
    const std::size_t dash = item.find('-');
    int low = 0;
    if (!code(item.substr(0, dash), low)) return false;
    int high = low;
    if (dash != std::string_view::npos && !code(item.substr(dash + 1), high)) return false;
    if (high < low) return false;
    out.push_back(low);
    out.push_back(high);
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

std::vector<int> read_expect_status(const yaml_reader& r, const YAML::Node& node) {
  constexpr std::string_view key = "expect_status";
  std::vector<int> out;
  const auto one = [&](const YAML::Node& item) {
    const std::string s = r.text(item, key);
    if (!parse_status_ranges(s, out)) {
      r.fail(item, key,
             "'" + s + "' is not a status code 100 to 599, a range like 200-299 or a list like " +
                 "200,302");
    }
  };
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node, key, "the list is empty");
    for (const auto& item : node) one(item);
  } else {
    one(node);
  }
  return out;
}

// capture: {NAME: {header: NAME} | {json: POINTER}, ...}
std::vector<capture_def> read_captures(const yaml_reader& r, const YAML::Node& node) {
  if (!node.IsMap() || node.size() == 0) {
    r.fail(node, "capture", "expected a mapping of names to {header: NAME} or {json: /pointer}");
  }
  std::vector<capture_def> out;
  for (const auto& kv : node) {
    capture_def c;
    c.line = yaml_reader::line_of(kv.first);
    c.name = r.text(kv.first, "capture");
    if (!valid_name(c.name))
      r.fail(kv.first, "capture", "'" + c.name + "' is not a name ([A-Za-z0-9_-]+)");
    const YAML::Node& how = kv.second;
    r.expect_map(how, "capture", {"header", "json"});
    if (how["header"].IsDefined() == how["json"].IsDefined()) {
      r.fail(how, "capture", c.name + ": give header or json, one of them");
    }
    c.from_header = how["header"].IsDefined();
    c.key = r.text(c.from_header ? how["header"] : how["json"], c.from_header ? "header" : "json");
    if (c.from_header &&
        (c.key.empty() || !std::all_of(c.key.begin(), c.key.end(), http::is_token_char))) {
      r.fail(how["header"], "header", "'" + c.key + "' is not a header name");
    }
    if (!c.from_header && !http::valid_json_pointer(c.key)) {
      r.fail(how["json"], "json",
             "'" + c.key + "' is not a JSON Pointer (\"\", or /a/0/b with ~0 and ~1)");
    }
    out.push_back(std::move(c));
  }
  return out;
}

step read_step(const yaml_reader& r, const YAML::Node& node) {
  r.expect_map(node, "steps",
               {"name", "method", "path", "url", "headers", "body", "body_file", "expect_status",
                "expect_body_contains", "capture", "think"});
  step s;
  read_request(r, node, "step", s);
  if (node["expect_status"]) s.expect_status = read_expect_status(r, node["expect_status"]);
  if (node["capture"]) s.captures = read_captures(r, node["capture"]);
  if (const auto& text = node["expect_body_contains"]) {
    s.expect_body = r.text(text, "expect_body_contains");
    if (s.expect_body.empty()) r.fail(text, "expect_body_contains", "the text is empty");
  }
  if (node["think"]) {
    const std::string text = r.text(node["think"], "think");
    const auto t = parse_think(text);
    if (!t) {
      r.fail(node["think"], "think",
             "'" + text + "' is not a think time " + std::string(think_hint));
    }
    s.think = *t;
  }
  return s;
}

// `names` counts the names the file has used so far: each step, and each scenario's session.
scenario_def read_scenario(const yaml_reader& r, const YAML::Node& node, std::size_t& names) {
  r.expect_map(node, "scenarios", {"name", "weight", "steps"});
  scenario_def d;
  d.line = yaml_reader::line_of(node);
  d.name = read_name(r, node, "scenario");
  const auto count_name = [&](const YAML::Node& at) {
    if (++names > max_names) {
      r.fail(at, "scenarios",
             "more than " + std::to_string(max_names) +
                 " names (each step is one, and each scenario one more for its session)");
    }
  };
  count_name(node);
  if (node["weight"]) {
    d.weight = r.number(node["weight"], "weight");
    if (d.weight < 0) r.fail(node["weight"], "weight", "must not be negative");
  }
  const YAML::Node list = node["steps"];
  if (!list) r.fail(node, "steps", "every scenario needs steps");
  r.expect_sequence(list, "steps");
  if (list.size() == 0) r.fail(list, "steps", "the list is empty");
  std::set<std::string> step_names;
  for (const auto& item : list) {
    count_name(item);
    d.steps.push_back(read_step(r, item));
    if (!step_names.insert(d.steps.back().name).second) {
      r.fail(item["name"], "name", "'" + d.steps.back().name + "' is used twice in this scenario");
    }
  }
  return d;
}

std::vector<scenario_def> read_scenarios(const yaml_reader& r, const YAML::Node& list) {
  r.expect_sequence(list, "scenarios");
  if (list.size() == 0) r.fail(list, "scenarios", "the list is empty");
  std::vector<scenario_def> out;
  std::set<std::string> names;
  std::size_t name_count = 0;
  double total_weight = 0;
  for (const auto& node : list) {
    out.push_back(read_scenario(r, node, name_count));
    if (!names.insert(out.back().name).second) {
      r.fail(node["name"], "name", "'" + out.back().name + "' is used twice");
    }
    total_weight += out.back().weight;
  }
  if (!(total_weight > 0)) r.fail(list, "weight", "the weights add up to 0");
  if (!std::isfinite(total_weight)) r.fail(list, "weight", "the weights add up to too much");
  return out;
}

// The run-wide keys besides target, phases and scenarios.
void read_options(const yaml_reader& r, const YAML::Node& root, scenario_file& f) {
  if (const auto n = root["arrival"]) {
    f.poisson = read_choice(r, n, "arrival", {"constant", "poisson"}) == 1;
  }
  if (const auto n = root["seed"]) {
    f.seed = read_whole(r, n, "seed", std::numeric_limits<std::uint64_t>::max());
  }
  if (const auto n = root["max_users"]) {
    f.max_users = static_cast<std::uint32_t>(
        read_whole(r, n, "max_users", std::numeric_limits<std::uint32_t>::max()));
  }
  if (const auto n = root["on_overload"]) {
    f.on_overload = read_choice(r, n, "on_overload", {"queue", "drop"}) == 0
                        ? overload_policy::queue
                        : overload_policy::drop;
  }
  if (const auto n = root["on_error"]) {
    f.on_error = read_choice(r, n, "on_error", {"abort", "continue"}) == 0
                     ? error_policy::abort
                     : error_policy::continue_;
  }
  if (const auto n = root["graceful_stop"]) f.graceful_stop = read_duration(r, n, "graceful_stop");
  if (const auto n = root["connection"]) {
    f.connection = read_choice(r, n, "connection", {"per_user", "pool"}) == 0
                       ? connection_policy::per_user
                       : connection_policy::pool;
  }
}

}  // namespace

std::optional<think_time> parse_think(std::string_view text) {
  using kind = think_time::kind;
  if (text.starts_with("uniform:")) {
    text.remove_prefix(std::string_view("uniform:").size());
    const std::size_t dots = text.find("..");
    if (dots == std::string_view::npos) return std::nullopt;
    const auto a = schedule::parse_stage_duration(text.substr(0, dots));
    const auto b = schedule::parse_stage_duration(text.substr(dots + 2));
    if (!a || !b || *a > *b) return std::nullopt;
    return think_time{kind::uniform, *a, *b};
  }
  if (text.starts_with("exp:")) {
    const auto mean = schedule::parse_stage_duration(text.substr(std::string_view("exp:").size()));
    if (!mean || mean->count() == 0) return std::nullopt;
    return think_time{kind::exponential, *mean, {}};
  }
  const auto d = schedule::parse_stage_duration(text);
  if (!d) return std::nullopt;
  return think_time{kind::fixed, *d, {}};
}

std::string describe(const think_time& t) {
  // "0s" rather than format_duration's "0ns": no think time reads best in seconds.
  const auto text = [](nanoseconds d) {
    return d.count() == 0 ? std::string("0s") : schedule::format_duration(d);
  };
  switch (t.shape) {
    case think_time::kind::uniform:
      return "uniform:" + text(t.a) + ".." + text(t.b);
    case think_time::kind::exponential:
      return "exp:" + text(t.a);
    case think_time::kind::fixed:
      break;
  }
  return text(t.a);
}

std::vector<std::string> scenario_file::variables() const {
  std::vector<std::string> out;
  const auto add = [&](const std::string& name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  if (csv) {
    for (const auto& c : csv->table.columns) add(c);
  }
  for (const auto& sc : scenarios) {
    for (const auto& st : sc.steps) {
      for (const auto& c : st.captures) add(c.name);
    }
  }
  return out;
}

std::size_t scenario_file::step_count() const noexcept {
  std::size_t n = 0;
  for (const auto& s : scenarios) n += s.steps.size();
  return n;
}

namespace {

// csv: {file: FILE, order: sequential | random}
csv_feeder read_csv(const yaml_reader& r, const YAML::Node& node) {
  r.expect_map(node, "csv", {"file", "order"});
  if (!node["file"]) r.fail(node, "csv", "missing: file, the CSV file of rows");
  csv_feeder f;
  f.file = r.text(node["file"], "file");
  if (node["order"])
    f.random = read_choice(r, node["order"], "order", {"sequential", "random"}) == 1;
  const std::string text = read_side_file(r, node["file"], "file", f.file);
  csv_error error;
  auto table = parse_csv(text, error);
  if (!table)
    r.fail(node["file"], "file", f.file + ":" + std::to_string(error.line) + ": " + error.what);
  f.table = std::move(*table);
  return f;
}

scenario_file read_file(const yaml_reader& r, const YAML::Node& root) {
  r.expect_map(root, "file",
               {"target", "phases", "arrival", "seed", "max_users", "on_overload", "on_error",
                "graceful_stop", "connection", "csv", "cookies", "scenarios"});
  scenario_file f;
  f.file = r.file();
  if (!root["target"]) r.fail(root, "target", "missing: the base URL, e.g. http://127.0.0.1:8080");
  f.target = r.text(root["target"], "target");
  if (f.target.empty()) r.fail(root["target"], "target", "is empty");
  if (!root["phases"]) r.fail(root, "phases", "missing: the list of user arrival phases");
  f.phases = read_phases(r, root["phases"]);
  read_options(r, root, f);
  if (!root["scenarios"]) r.fail(root, "scenarios", "missing: the list of scenarios");
  f.scenarios = read_scenarios(r, root["scenarios"]);
  if (root["csv"]) f.csv = read_csv(r, root["csv"]);
  if (root["cookies"]) f.cookies = r.boolean(root["cookies"], "cookies");
  return f;
}

}  // namespace

scenario_file parse_scenario(std::string_view text, const std::string& file) {
  const yaml_reader r(file);
  const YAML::Node root = r.parse(text);
  return r.guarded([&] { return read_file(r, root); });
}

scenario_file load_scenario(const std::string& file) {
  return parse_scenario(yaml_reader(file).read_file(), file);
}

}  // namespace punctual::scenario
